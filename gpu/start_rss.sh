#!/usr/bin/env bash
# Start → ready and resident memory of the agent from one or more jars (before/after a change), alternating the
# jars, ROUNDS starts each; each agent alone on the machine, the image's JVM flags (JVM_FLAGS overrides), no AOT
# cache (a cache belongs to one jar, so it would favour one side). Ready = /actuator/health/readiness UP, polled
# every 20 ms from the JVM's fork. RSS is read at ready and after PROBES probes (GET /probe, 2 MiB, both directions, so
# the agent both exports and imports) of a peer agent of the first jar on PORT+1, started once for the whole run (an
# agent refuses to probe itself; until 2026-12-07 this script probed the agent by itself, one exchange per probe).
#   J=$(bash .gpu-bundle/unpack.sh); J=$J bash gpu/start_rss.sh .gpu-bundle/imexprobe.jar /tmp/other.jar
# An argument NAME=VALUE[,NAME=VALUE]@JAR starts that jar with those settings in its environment (one build, two
# configurations): SERVER_TOMCAT_THREADS_MIN_SPARE=10@.gpu-bundle/imexprobe.jar
set -u
J=${J:-$(bash .gpu-bundle/unpack.sh)}
ROUNDS=${ROUNDS:-3}; PROBES=${PROBES:-200}; PORT=${PORT:-18181}
JVM_FLAGS=${JVM_FLAGS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m}
export MALLOC_ARENA_MAX=2 CUDA_DEVICE_MAX_CONNECTIONS=1 NCCL_NVLS_ENABLE=0 IMEXPROBE_AUTH_TOKEN=start-rss-token-0123456789abcdef
rss() { awk '/^VmRSS/{printf "%.0f", $2 / 1024}' /proc/$1/status; }
PEER=$((PORT + 1)); first=${1#*@}
IMEXPROBE_NODE_NAME=start-rss-peer SERVER_PORT=$PEER IMEXPROBE_MESH_INTERVAL=1h setsid "$J" $JVM_FLAGS \
  -Djava.io.tmpdir=/tmp -jar "$first" serve > /tmp/start-rss-peer.log 2>&1 &
peer=$!; trap 'kill $peer 2>/dev/null' EXIT
until curl -sf localhost:$PEER/actuator/health/readiness >/dev/null; do
  kill -0 $peer 2>/dev/null || { echo "the peer agent exited before ready"; tail -5 /tmp/start-rss-peer.log; exit 1; }
  sleep 0.1
done
for r in $(seq "$ROUNDS"); do
  for arg in "$@"; do
    jar=${arg#*@}; envs=(); [ "$jar" != "$arg" ] && IFS=, read -ra envs <<< "${arg%%@*}"
    t0=$(date +%s%N)
    env "${envs[@]}" IMEXPROBE_NODE_NAME=start-rss SERVER_PORT=$PORT IMEXPROBE_MESH_INTERVAL=1h setsid "$J" $JVM_FLAGS \
      -Djava.io.tmpdir=/tmp -jar "$jar" serve > /tmp/start-rss.log 2>&1 &
    pid=$!
    until curl -sf localhost:$PORT/actuator/health/readiness >/dev/null; do
      kill -0 $pid 2>/dev/null || { echo "$jar: exited before ready"; tail -5 /tmp/start-rss.log; break; }
      sleep 0.02
    done
    t1=$(date +%s%N); r0=$(rss $pid)
    for i in $(seq "$PROBES"); do
      curl -sf "localhost:$PORT/probe?target=127.0.0.1:$PEER&direction=both&sizeBytes=2097152" -o /dev/null || { echo "probe failed"; break; }
    done
    printf 'round %s  %-40s start->ready %6.3f s  RSS at ready %4s MiB, after %s probes %4s MiB\n' "$r" "$arg" \
      "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" "$r0" "$PROBES" "$(rss $pid)"
    kill $pid; for i in $(seq 80); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  done
done
