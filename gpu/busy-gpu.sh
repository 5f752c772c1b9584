#!/usr/bin/env bash
# A GPU a job has filled (imexprobe.driver.min-free-memory): two agents on the one GPU probe each other before, while
# and after gpu/busy_job.py holds all but 2 GiB of its memory. Expected: pass; not_probed with GPU_MEMORY_IN_USE (the
# agents take no context meanwhile, and the job's next 256 MiB allocation succeeds); pass again once the job exits.
# It also records what NVML (nvidia-smi) reports as used and free meanwhile: on a VM whose NVML reports no memory use,
# the check cannot see the job, and the probe passes (a context taken beside the job).
# LEAVE_MIB (default 2048) is what the job leaves free; MINFREE sets both agents' IMEXPROBE_DRIVER_MINFREEMEMORY
# (LEAVE_MIB=8 MINFREE=0: the headroom off beside a GPU with less than the probe's allocation left; expected
# not_probed with GPU_OUT_OF_MEMORY, the exporter's create failing with 2).
#   J=$(bash .gpu-bundle/unpack.sh) OUT=/tmp/out bash gpu/busy-gpu.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; J=${J:-$(bash .gpu-bundle/unpack.sh)}; JAR=${JAR:-.gpu-bundle/imexprobe.jar}
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 IMEXPROBE_AUTH_TOKEN=busy-gpu-token-0123456789abcdef \
  IMEXPROBE_MESH_INTERVAL=1h
[ -n "${MINFREE:-}" ] && export IMEXPROBE_DRIVER_MINFREEMEMORY=$MINFREE
S=$OUT/busy-gpu.txt; : > "$S"
say() { echo "$*" | tee -a "$S"; }
smi() { nvidia-smi --query-gpu=memory.used,memory.free,memory.total --format=csv,noheader | head -1; }
apps() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ';'; }
PIDS=""
for n in a b; do
  port=$([ $n = a ] && echo 18191 || echo 18192)
  IMEXPROBE_NODE_NAME=busy-$n SERVER_PORT=$port setsid "$J" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$JAR" serve \
    > "$OUT/busy-agent-$n.log" 2>&1 &
  PIDS="$PIDS $!"
done
for p in 18191 18192; do
  for i in $(seq 120); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.25; done
done
probe() { # label
  curl -s localhost:18191/v1/node?refresh=true > /dev/null; curl -s localhost:18192/v1/node?refresh=true > /dev/null
  curl -s "localhost:18191/probe?target=localhost:18192&direction=both" > "$OUT/busy-probe-$1.json"
  python3 - "$OUT/busy-probe-$1.json" "$1" <<'PY' | tee -a "$S"
import json, sys
r = json.load(open(sys.argv[1]))
for x in r.get("results", []):
    f = x.get("finding") or {}
    print(f"  {sys.argv[2]}: {x['direction']} {x['verdict']} {f.get('code', '')} {f.get('blame', '')} "
          f"{json.dumps(f.get('evidence', {})) if f.get('code') in ('GPU_MEMORY_IN_USE', 'GPU_OUT_OF_MEMORY') else ''}")
PY
}
say "=== $(date -u) gpu/busy-gpu.sh: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), LEAVE_MIB=${LEAVE_MIB:-2048} MINFREE=${MINFREE:-default}"
say "idle: nvidia-smi used, free, total: $(smi)"
probe idle
sleep 3 # the agents' context linger (2 s) runs out
say "after the linger: $(smi); compute apps: $(apps)"
coproc JOB { python3 gpu/busy_job.py "${LEAVE_MIB:-2048}"; }
read -r -t 60 line <&"${JOB[0]}"; say "job: $line"
say "job holding: nvidia-smi used, free, total: $(smi); compute apps: $(apps)"
probe busy
say "after the busy probe: compute apps: $(apps)"
echo go >&"${JOB[1]}"; read -r -t 30 line <&"${JOB[0]}"; say "job's next allocation: $line"
wait $JOB_PID 2>/dev/null
sleep 1
say "job gone: $(smi)"
probe after
kill $PIDS 2>/dev/null; sleep 2
say "end: $(smi)"
