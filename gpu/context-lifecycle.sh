#!/usr/bin/env bash
# Issue 17 on the H200: an agent takes no GPU memory from jobs between probes. Two agents on the one GPU probe
# each other in mesh rounds (interval 6 s, the default 2 s context linger); nvidia-smi is sampled every 0.25 s:
# compute processes and memory.used before the agents start, while they are idle, in rounds and between them.
# Then the churn's cost: /probe after the linger has let the context go (a retain first) against back-to-back
# probes (context held), and each agent's CPU over the mesh window.
#   J=$(bash .gpu-bundle/unpack.sh); OUT=/tmp/out J=$J bash gpu/context-lifecycle.sh
# Writes $OUT/contexts.csv (samples), $OUT/contexts.txt (summary), agent logs. Never calls multicast.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=${J:-$(bash .gpu-bundle/unpack.sh)}
JAR=${JAR:-.gpu-bundle/imexprobe.jar}
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 IMEXPROBE_AUTH_TOKEN=contexts-token-0123456789abcdef
S=$OUT/contexts.txt; : > "$S"
say() { echo "$*" | tee -a "$S"; }
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
say "=== $(date -u) gpu/context-lifecycle.sh: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
sample() { # label seconds
  local end=$(( $(date +%s%N) + $2 * 1000000000 ))
  while [ "$(date +%s%N)" -lt "$end" ]; do
    echo "$(date +%s.%N),$1,$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1),$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c .)" >> "$OUT/contexts.csv"
    sleep 0.25
  done
}
echo "t,phase,memory_used_mib,compute_processes" > "$OUT/contexts.csv"
sample baseline 3
PEERS=127.0.0.1:18091,127.0.0.1:18092
PIDS=""
for n in a b; do
  port=$([ $n = a ] && echo 18091 || echo 18092)
  IMEXPROBE_NODE_NAME=ctx-$n SERVER_PORT=$port IMEXPROBE_PEERS_STATIC=$PEERS IMEXPROBE_MESH_INTERVAL=6s \
    IMEXPROBE_MESH_JITTER=0 setsid "$J" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$JAR" serve \
    > "$OUT/ctx-agent-$n.log" 2>&1 &
  PIDS="$PIDS $!"
done
sample starting 12
for p in 18091 18092; do
  for i in $(seq 120); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.25; done
done
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
set -- $PIDS; A=$1; B=$2
ca0=$(cpu $A); cb0=$(cpu $B); t0=$(date +%s%N)
sample mesh 30
ca1=$(cpu $A); cb1=$(cpu $B); t1=$(date +%s%N)
TCK=$(getconf CLK_TCK)
say "agent CPU over 30 s of mesh rounds (6 s interval, 2 s linger): a $(( (ca1-ca0)*1000/TCK )) ms, b $(( (cb1-cb0)*1000/TCK )) ms"
for p in 18091 18092; do
  say "agent :$p $(curl -s localhost:$p/actuator/prometheus | grep -E '^imexprobe_cuda_context_(held|creations_total)|^imexprobe_probes_total' | tr '\n' ' ')"
done
# the churn's latency: a probe that must retain first against one that finds the context held
PYTHONUNBUFFERED=1 python3 - <<'PY' 2>&1 | tee -a "$S"
import http.client, json, time
def probe():
    c = http.client.HTTPConnection("127.0.0.1", 18091, timeout=30)
    t = time.perf_counter(); c.request("GET", "/probe?target=127.0.0.1:18092&direction=push&sizeBytes=2097152")
    r = json.loads(c.getresponse().read()); ms = (time.perf_counter() - t) * 1000
    create = [s["durationSeconds"] * 1000 for s in r["results"][0]["stages"] if s["name"] == "create"][0]
    return ms, create, r["verdict"]
cold, warm = [], []
for i in range(8):
    time.sleep(3.2)  # past the 2 s linger (and between mesh rounds where it can be)
    cold.append(probe())
    for j in range(5):
        warm.append(probe())
m = lambda xs, k: sorted(x[k] for x in xs)[len(xs) // 2]
print(f"first probe after the linger (retains): p50 {m(cold,0):.2f} ms, create stage p50 {m(cold,1):.2f} ms; "
      f"probes within the linger: p50 {m(warm,0):.2f} ms, create p50 {m(warm,1):.2f} ms; "
      f"verdicts {sorted(set(x[2] for x in cold + warm))}")
PY
sample after-probes 6
kill $PIDS 2>/dev/null; sleep 2
sample stopped 2
python3 - "$OUT/contexts.csv" <<'PY' 2>&1 | tee -a "$S"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
base = min(int(r["memory_used_mib"]) for r in rows if r["phase"] == "baseline")
for phase in ("baseline", "starting", "mesh", "after-probes", "stopped"):
    rs = [r for r in rows if r["phase"] == phase]
    if not rs: continue
    mem = [int(r["memory_used_mib"]) - base for r in rs]; procs = [int(r["compute_processes"]) for r in rs]
    print(f"{phase:13s} {len(rs):4d} samples: memory.used above baseline min {min(mem)} max {max(mem)} MiB; "
          f"compute processes max {max(procs)}, samples with none {sum(p == 0 for p in procs)}")
PY
