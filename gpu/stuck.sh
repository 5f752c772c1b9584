#!/usr/bin/env bash
# The remedy for a driver call that never returns, on the real driver: an agent with 4 driver threads gets the
# 4 altered FABRIC handles whose cuMemMap hangs (gpu/map_hang.py); its liveness must go DOWN (503) with
# imexprobe_driver_calls_stuck 4, a further import must be refused at once, and once the agent is stopped (what
# the kubelet does when liveness fails) the process must be gone and GPU free memory back to where it was.
# On the GPU machine from the repository root, bundle carried:  OUT=/tmp/out bash gpu/stuck.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=$(bash .gpu-bundle/unpack.sh); JAR=.gpu-bundle/imexprobe.jar
export NCCL_NVLS_ENABLE=0
TOKEN=gpu-stuck-token-0123456789abcdef
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
free_bytes() {
  $J -jar $JAR check --json --repeat 2 2>/dev/null | python3 -c \
    'import json,sys; d=json.load(sys.stdin); print(d["repeat"][0]["gpuMemoryFreeBefore"])'
}
echo "=== $(date -u) driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader)"
free0=$(free_bytes); echo "free0 (no agent): $free0"
IMEXPROBE_AUTH_TOKEN=$TOKEN IMEXPROBE_NODE_NAME=stuck SERVER_PORT=18111 IMEXPROBE_MESH_INTERVAL=1h \
  IMEXPROBE_EXPORTS_TTL=1h IMEXPROBE_DRIVER_THREADS=4 IMEXPROBE_DRIVER_TIMEOUT=2s \
  setsid $J -jar $JAR serve > "$OUT/stuck-agent.log" 2>&1 &
AGENT=$!
for i in $(seq 120); do curl -sf localhost:18111/actuator/health/readiness >/dev/null && break; sleep 0.5; done
python3 gpu/stuck_handles.py http://localhost:18111 $TOKEN 4; rc=$?
t=$(date +%s.%N); kill "$AGENT"
for i in $(seq 100); do kill -0 "$AGENT" 2>/dev/null || break; sleep 0.1; done
kill -0 "$AGENT" 2>/dev/null && { echo "agent still running 10 s after SIGTERM: SIGKILL"; kill -9 "$AGENT"; sleep 1; }
echo "agent gone $(python3 -c "import time; print(round(time.time() - $t, 2))") s after SIGTERM; alive now: $(kill -0 $AGENT 2>/dev/null && echo yes || echo no)"
grep -cE "SIGSEGV|hs_err|OutOfMemory" "$OUT/stuck-agent.log" | sed 's/^/agent log errors: /'
free1=$(free_bytes); echo "free1 (agent stopped): $free1 (delta to no agent: $((free0 - free1)))"
[ "$rc" = 0 ] && [ "$free0" = "$free1" ] && echo "stuck.sh verdict: PASS" || echo "stuck.sh verdict: FAIL"
