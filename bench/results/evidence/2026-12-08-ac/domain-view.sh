#!/usr/bin/env bash
# The domain view against N fake 4-GPU peers of 8 NVL72 domains (mesh_peers.py): one agent (the chart's JVM flags,
# its heap as in a pod of 192 MiB) with N static peers on 127.0.0.2.., then the matrix page three times and
# /v1/mesh?scope=domain; prints times, pairs, peers not answering and RSS. After ./mvnw -B package -DskipTests:
#   JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 N=143 bash bench/results/evidence/2026-12-08-ac/domain-view.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
N=${N:-143}; P=${P:-19111}; A=${A:-18181}; cd "$(git -C "$here" rev-parse --show-toplevel)"
out=$(mktemp -d)
python3 "$here/mesh_peers.py" $P 2>/dev/null & PY=$!
peers=$(for i in $(seq 2 $((N+1))); do printf "127.0.0.%d:%d," $i $P; done); peers=${peers%,}
st=$(mktemp -d); mkdir -p $st/ch; 
env -i PATH=$PATH HOME=$HOME IMEXPROBE_PEERS_STATIC="$peers" SERVER_PORT=$A IMEXPROBE_NODE_NAME=node-a \
  IMEXPROBE_MESH_INTERVAL=1h IMEXPROBE_AUTH_TOKEN=0123456789abcdef0123 IMEXPROBE_CUDA_LIBRARY=$PWD/target/native/fake/libcuda.so.1 \
  IMEXPROBE_NVML_LIBRARY=$PWD/target/native/fake/libnvidia-ml.so.1 FAKECUDA_GPUS=4 FAKECUDA_STATE_DIR=$st \
  FAKECUDA_CHANNEL_DIR=$st/ch LOGGING_LEVEL_ROOT=WARN \
  $JAVA_HOME/bin/java -XX:MaxRAM=192m -XX:MaxRAMPercentage=60 -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -XX:+ExitOnOutOfMemoryError -jar target/imexprobe.jar serve > $out/agent.log 2>&1 & J=$!
for i in $(seq 1 60); do curl -sf localhost:$A/actuator/health/liveness >/dev/null && break; sleep 0.5; done
rss() { awk '/VmRSS|VmHWM/{printf "%s %d MiB  ", $1, $2/1024}' /proc/$J/status; echo; }
echo "ready; peers $N"; rss
for k in 1 2 3; do
  /usr/bin/time -f "page %e s" curl -s -o $out/page.html localhost:$A/ 2>&1 | tail -1
  echo "page bytes $(wc -c < $out/page.html); not answering: $(grep -c 'not answering: ' $out/page.html) line(s)"
  rss
done
/usr/bin/time -f "json %e s" curl -s -o $out/mesh.json "localhost:$A/v1/mesh?scope=domain" 2>&1 | tail -1
python3 -c "import json; d=json.load(open('$out/mesh.json')); print('json pairs', len(d['pairs']), 'agents', len(d['agents']), 'unreachable', len(d['unreachableAgents']))"
rss; $JAVA_HOME/bin/jcmd $J GC.heap_info 2>/dev/null | head -4
kill -0 $J && echo "agent alive" || echo "agent DIED"; grep -c -i "OutOfMemory" $out/agent.log
kill $J $PY; wait 2>/dev/null; rm -rf $st $out
