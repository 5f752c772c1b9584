#!/usr/bin/env bash
# The probe's hot path on the H200, in one lease (docs/performance.md, "The hot path"): the seed-style Python peer
# (bench/seed_peer.py) and imexprobe's /probe between two agents on loopback, same GPU, 2 MiB, one after the other
# in one run, with a JFR recording of both agents (1 ms execution sampling) to say where the time goes.
#   J=$(bash .gpu-bundle/unpack.sh); OUT=/tmp/out J=$J bash gpu/hotpath.sh
# The bundle must carry the jdk.jfr module (gpu/bundle.sh does). COUNT probes after WARMUP (default 500 / 300).
# Writes $OUT/hotpath.json (the figures), $OUT/hotpath.log, $OUT/agent-{a,b}.jfr. Never calls multicast.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=${J:-$(bash .gpu-bundle/unpack.sh)}
JAR=${JAR:-.gpu-bundle/imexprobe.jar}
COUNT=${COUNT:-500}; WARMUP=${WARMUP:-300}
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 IMEXPROBE_AUTH_TOKEN=hotpath-token-0123456789abcdef
LOG=$OUT/hotpath.log; : > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
say "=== $(date -u) gpu/hotpath.sh, $(nproc) CPUs"
nvidia-smi --query-gpu=index,name,driver_version,memory.used --format=csv,noheader 2>&1 | tee -a "$LOG"
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0

say "=== seed-style Python peer"
PYTHONUNBUFFERED=1 timeout 180 python3 bench/seed_peer.py --count "$COUNT" --warmup 50 --json "$OUT/seed.json" 2>&1 | tee -a "$LOG"

say "=== two agents (the image's JVM flags), JFR on both"
PIDS=""
for n in a b; do
  port=$([ $n = a ] && echo 18081 || echo 18082)
  IMEXPROBE_NODE_NAME=hot-$n SERVER_PORT=$port IMEXPROBE_MESH_INTERVAL=1h setsid "$J" -XX:+UseSerialGC \
    -XX:TieredStopAtLevel=1 -Djava.io.tmpdir=/tmp \
    "-XX:StartFlightRecording=filename=$OUT/agent-$n.jfr,settings=profile,jdk.ExecutionSample#period=1ms,dumponexit=true" \
    -jar "$JAR" serve > "$OUT/agent-$n.log" 2>&1 &
  PIDS="$PIDS $!"
done
for p in 18081 18082; do
  for i in $(seq 120); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.25; done
done
PYTHONUNBUFFERED=1 timeout 300 python3 - "$COUNT" "$WARMUP" "$OUT/hotpath.json" <<'PY' 2>&1 | tee -a "$LOG"
import http.client, json, socket, sys, time
count, warmup, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
c = http.client.HTTPConnection("127.0.0.1", 18081, timeout=30); c.connect()
c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def q(s, p): return round(s[min(len(s) - 1, int(round(p * (len(s) - 1))))], 3)
res = {}
for wb in ("false", "true"):
    path = f"/probe?target=127.0.0.1:18082&direction=push&writeback={wb}&sizeBytes=2097152"
    times, fails, stages = [], 0, {}
    for i in range(warmup + count):
        t = time.perf_counter(); c.request("GET", path); r = json.loads(c.getresponse().read())
        ms = (time.perf_counter() - t) * 1000
        if i >= warmup:
            times.append(ms); fails += r["verdict"] != "pass"
            for st in r["results"][0]["stages"]:
                stages.setdefault(st["name"], []).append(st["durationSeconds"] * 1000)
    s = sorted(times)
    res["writeback=" + wb] = {"probes": len(s), "failures": fails, "p50Ms": q(s, .5), "p90Ms": q(s, .9), "p99Ms": q(s, .99),
                              "stageP50Ms": {k: q(sorted(v), .5) for k, v in stages.items()}}
    print(f"/probe push writeback={wb}: {len(s)} probes, {fails} failed; p50 {q(s, .5)} ms, p90 {q(s, .9)} ms, p99 {q(s, .99)} ms")
    print("  stage p50 ms:", res["writeback=" + wb]["stageP50Ms"])
json.dump(res, open(out, "w"), indent=1)
PY
kill $PIDS 2>/dev/null
for p in $PIDS; do for i in $(seq 80); do kill -0 $p 2>/dev/null || break; sleep 0.25; done; done  # JFR dumps at exit
ls -la "$OUT" | tee -a "$LOG"
say "GPU memory used at the end: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1) MiB"
