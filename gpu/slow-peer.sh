#!/usr/bin/env bash
# A peer slow to answer, on a GPU. Agent a's mesh (interval 1 s, peer timeout 5 s) probes agent b directly and
# agent c through gpu/slow_peer.py, which holds each import request SLOW seconds (default 3: inside the timeout,
# longer than the interval). A round waits one interval at most, so b is probed about once a round whatever c does,
# and c about once per SLOW seconds (before, every round lasted SLOW seconds and b waited with it). Prints each
# pair's probes after RUN seconds (a's imexprobe_probes_total), a's rounds and its warnings about c.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; J=${J:-$(bash .gpu-bundle/unpack.sh)}; JAR=${JAR:-.gpu-bundle/imexprobe.jar}
SLOW=${SLOW:-3}; RUN=${RUN:-20}; PIDS=""
D=/dev/nvidia-caps-imex-channels; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
if [ -n "$MAJ" ]; then mkdir -p $D; [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c "$MAJ" 0; fi
export IMEXPROBE_AUTH_TOKEN=gpu-validation-token-0123456789 NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
agent() { # name port peers interval
  IMEXPROBE_NODE_NAME=$1 SERVER_PORT=$2 IMEXPROBE_PEERS_STATIC=$3 IMEXPROBE_MESH_INTERVAL=$4 \
    IMEXPROBE_PROBE_TIMEOUT=5s setsid $J -jar $JAR serve > "$OUT/slow-peer-$1.log" 2>&1 &
  PIDS="$PIDS $!"
}
agent b 18102 "" 100000h
agent c 18103 "" 100000h
python3 gpu/slow_peer.py 18113 http://127.0.0.1:18103 "$SLOW" & PROXY=$!
for p in 18102 18103; do
  for i in $(seq 60); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.5; done
done
agent a 18101 localhost:18102,localhost:18113 1s
for i in $(seq 60); do curl -sf localhost:18101/actuator/health/readiness >/dev/null && break; sleep 0.5; done
sleep "$RUN"
curl -s localhost:18101/actuator/prometheus > "$OUT/slow-peer-a-metrics.txt"
curl -s localhost:18101/v1/mesh > "$OUT/slow-peer-a-mesh.json"
kill $PIDS $PROXY 2>/dev/null; sleep 2
echo "after ${RUN} s, import held ${SLOW} s by c's proxy; a's probes by target and verdict:"
grep -E '^imexprobe_probes_total' "$OUT/slow-peer-a-metrics.txt" | sed -E 's/.*target_node="([^"]*)".*verdict="([^"]*)".* ([0-9.e+]+)$/  \1 \2 \3/'
python3 - "$OUT/slow-peer-a-mesh.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d.get("pairs", []):
    print("  pair a>%s: %s, last probe %.3f s" % (p.get("targetNode"), p.get("state"), p.get("durationSeconds") or 0))
PY
echo "a's warnings of peers still being probed after one interval: $(grep -c 'still being probed after one interval' "$OUT/slow-peer-a.log")"
grep -E "mesh round [0-9]+: .*still being probed" "$OUT/slow-peer-a.log" | tail -2 | cut -c1-240
