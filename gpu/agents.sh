#!/usr/bin/env bash
# Two (and more) agents as separate processes on the one GPU: push and pull with write-back, then importers
# that lack the exporter's channel (hidden by a tmpfs in a mount namespace, or holding only channel1).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; J=$(bash .gpu-bundle/unpack.sh); JAR=.gpu-bundle/imexprobe.jar
export IMEXPROBE_AUTH_TOKEN=gpu-validation-token-0123456789 IMEXPROBE_MESH_INTERVAL=2s NCCL_NVLS_ENABLE=0
agent() { # name port [namespace setup]
  local name=$1 port=$2 setup=${3:-}
  if [ -z "$setup" ]; then
    IMEXPROBE_NODE_NAME=$name SERVER_PORT=$port setsid $J -jar $JAR serve > "$OUT/agent-$name.log" 2>&1 &
  else
    IMEXPROBE_NODE_NAME=$name SERVER_PORT=$port setsid unshare -m bash -c "$setup; exec $J -jar $JAR serve" > "$OUT/agent-$name.log" 2>&1 &
  fi
  PIDS="${PIDS:-} $!"
}
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
D=/dev/nvidia-caps-imex-channels
agent a 18081; agent b 18082
agent nochan 18083 "mount -t tmpfs tmpfs $D"
agent only1 18084 "mount -t tmpfs tmpfs $D && mknod -m 666 $D/channel1 c $MAJ 1"
for p in 18081 18082 18083 18084; do
  for i in $(seq 60); do curl -sf localhost:$p/actuator/health/liveness >/dev/null && break; sleep 0.5; done
done
echo "=== push and pull a <-> b with write-back"
curl -s "localhost:18081/probe?target=localhost:18082&direction=both" > "$OUT/probe-a-b.json"
python3 gpu/summary.py "$OUT/probe-a-b.json"
echo "=== importer without any channel (mount namespace, tmpfs over $D)"
curl -s "localhost:18081/probe?target=localhost:18083&direction=push" > "$OUT/probe-a-nochan.json"
python3 gpu/summary.py "$OUT/probe-a-nochan.json"
curl -s localhost:18083/v1/node | python3 -c "import json,sys;d=json.load(sys.stdin);print([f['code'] for f in d['findings']])"
echo "=== importer holding only channel1 (exporter holds 0 and 1)"
curl -s "localhost:18081/probe?target=localhost:18084&direction=push" > "$OUT/probe-a-only1.json"
python3 gpu/summary.py "$OUT/probe-a-only1.json"
echo "=== 200 push probes a -> b: stage times"
for i in $(seq 200); do curl -s "localhost:18081/probe?target=localhost:18082&direction=push"; echo; done > "$OUT/probe-times.jsonl"
python3 gpu/summary.py --times "$OUT/probe-times.jsonl"
curl -s localhost:18081/actuator/prometheus | grep -E "^imexprobe_" | head -40
kill $PIDS 2>/dev/null; sleep 2   # only our own agents
echo "GPU memory used at the end: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1) MiB"
