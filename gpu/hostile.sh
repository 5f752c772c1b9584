#!/usr/bin/env bash
# 10,000 hostile FABRIC handles through an agent against the real driver, with GPU memory measured around them.
# Run on the GPU machine from the repository root after `bash gpu/bundle.sh` here:
#   bash gpu/hostile.sh            (N=10000 by default; evidence under $OUT, default /tmp/out)
# GPU free memory (cuMemGetInfo, device-wide on the real driver) is read two ways: by the agent itself
# (GET /v1/node?refresh=true, memoryFreeBytes, before and after the run, in gpu/hostile_handles.py), and by a separate
# process (`check --json --repeat 2`, repeat[0].gpuMemoryFreeBefore) at four points:
#   free0  no agent running                          free1  agent up, after 100 warm-up imports
#   free2  agent up, after the N hostile imports     free3  agent stopped
# PASS needs both readings back to their baseline (free2 == free1, free3 == free0, the agent's before == after; within
# HOSTILE_MEM_TOLERANCE_BYTES, default 0), no 5xx, the agent live throughout and imexprobe_allocations_live 0 at
# the end (see gpu/hostile_handles.py for the mix).
# Never creates multicast objects; touches no GPU setting; creates IMEX channel node 0 if missing (as root); stops
# only the agents it started.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
N=${N:-10000}
TOL=${HOSTILE_MEM_TOLERANCE_BYTES:-0}
J=$(bash .gpu-bundle/unpack.sh); JAR=.gpu-bundle/imexprobe.jar
export NCCL_NVLS_ENABLE=0
TOKEN=gpu-hostile-token-0123456789abcdef
PIDS=""
cleanup() { [ -n "$PIDS" ] && kill $PIDS 2>/dev/null; }
trap cleanup EXIT

free_bytes() { # device-wide free memory as cuMemGetInfo reports it to a fresh process
  $J -jar $JAR check --json --repeat 2 2>/dev/null | python3 -c \
    'import json,sys; d=json.load(sys.stdin); print(d["repeat"][0]["gpuMemoryFreeBefore"])'
}
start_agent() { # name port -> pid in $LAST
  IMEXPROBE_AUTH_TOKEN=$TOKEN IMEXPROBE_NODE_NAME=$1 SERVER_PORT=$2 IMEXPROBE_MESH_INTERVAL=1h IMEXPROBE_EXPORTS_TTL=1h \
    setsid $J -jar $JAR serve > "$OUT/hostile-agent-$1.log" 2>&1 &
  LAST=$!; PIDS="$PIDS $LAST"
  for i in $(seq 120); do curl -sf localhost:$2/actuator/health/readiness >/dev/null && return 0; sleep 0.5; done
  echo "agent $1 not ready; log:"; tail -20 "$OUT/hostile-agent-$1.log"; exit 2
}

echo "=== machine"; date -u; nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
ls -la /dev/nvidia-caps-imex-channels

free0=$(free_bytes); echo "free0 (no agent): $free0"
start_agent hostile 18101; AGENT=$LAST
# A second agent exports one handle and is killed: its handle is the "exporter exited" case.
start_agent exited 18102; EXITED=$LAST
EXITED_HANDLE=$(curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{}' \
  localhost:18102/v1/exports | python3 -c 'import json,sys; print(json.load(sys.stdin)["handle"])')
kill -9 "$EXITED"; sleep 2
echo "=== warm-up: 100 hostile imports"
python3 gpu/hostile_handles.py http://localhost:18101 $TOKEN 100 > "$OUT/hostile-warmup.txt" 2>&1; tail -3 "$OUT/hostile-warmup.txt"
free1=$(free_bytes); echo "free1 (agent up, warm): $free1"
echo "=== $N hostile imports"
python3 gpu/hostile_handles.py http://localhost:18101 $TOKEN "$N" --exited "$EXITED_HANDLE" --json "$OUT/hostile.json" \
  | tee "$OUT/hostile.txt"
HANDLES_OK=${PIPESTATUS[0]}
free2=$(free_bytes); echo "free2 (agent up, after): $free2"
curl -s localhost:18101/actuator/prometheus | grep -E "^imexprobe_allocations_live"
kill -0 "$AGENT" 2>/dev/null && echo "agent alive: yes" || { echo "agent alive: NO"; HANDLES_OK=1; }
grep -cE "OutOfMemory|SIGSEGV|unexpected error" "$OUT/hostile-agent-hostile.log" | sed 's/^/agent log errors: /'
kill "$AGENT"; for i in $(seq 60); do kill -0 "$AGENT" 2>/dev/null || break; sleep 0.5; done
free3=$(free_bytes); echo "free3 (agent stopped): $free3"

python3 - "$free0" "$free1" "$free2" "$free3" "$TOL" "$HANDLES_OK" <<'PY'
import sys
f0, f1, f2, f3, tol, handles = (int(x) for x in sys.argv[1:])
d12, d03 = f1 - f2, f0 - f3
print(f"GPU free memory: no agent {f0}, agent warm {f1}, after hostile {f2} (delta {d12}), agent stopped {f3} "
      f"(delta to no agent {d03}); tolerance {tol}")
ok = handles == 0 and abs(d12) <= tol and abs(d03) <= tol
print("hostile.sh verdict:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
