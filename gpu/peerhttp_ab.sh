#!/usr/bin/env bash
# Before/after of the peer transport on the H200 (docs/performance.md, item 9): PeerHttp over its own socket
# (this bundle's jar) against the HttpURLConnection client it replaced (commit ca2c555's parent), measured
# alternately so that both builds see the same machine:
#   - the HTTP floor, 5 rounds of `bench/run.sh --sections http`, each build in turn (the bench's own JVM runs the
#     jar's PeerHttp against a socket server);
#   - probe latency and the transfer stage, `--sections probe --compare-jar`: the two builds' agent pairs probed
#     alternately by one caller.
# The other build's classes come as .gpu-bundle/old-classes.tgz (made where the other build was compiled:
#   git archive ca2c555^ | tar -x -C /tmp/before && (cd /tmp/before && ./mvnw -B -q package -DskipTests)
#   tar -C /tmp/before/target/classes -czf .gpu-bundle/old-classes.tgz dev native
# ) and are put into a copy of this bundle's jar by gpu/swap_classes.py (the bundle cannot carry two jars).
# From the repository root on the GPU host:
#   J=$(bash .gpu-bundle/unpack.sh); OUT=/tmp/out J=$J bash gpu/peerhttp_ab.sh      # about 4 minutes
# Writes $OUT/peerhttp-ab.log (the floors, one line per run, and the probe table), $OUT/http-{new,old}-N.json,
# $OUT/probe-ab.json. Stops only the processes it started (bench/run.sh stops its agents).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=${J:-$(bash .gpu-bundle/unpack.sh)}
JAR=${JAR:-.gpu-bundle/imexprobe.jar}
OLD_CLASSES=${OLD_CLASSES:-.gpu-bundle/old-classes.tgz}
ROUNDS=${ROUNDS:-5}
export NCCL_NVLS_ENABLE=0
LOG=$OUT/peerhttp-ab.log
: > "$LOG"
say() { echo "$*" | tee -a "$LOG"; }
driver=${DRIVER:-}   # DRIVER=fake: a dry run on a machine without a GPU (target/native/fake)
if [ -z "$driver" ]; then if [ -n "${IMEXPROBE_CUDA_LIBRARY:-}" ]; then driver=given; else driver=real; fi; fi
[ -f "$OLD_CLASSES" ] || { say "no $OLD_CLASSES: make it as the comment at the top says"; exit 2; }
OLD_JAR=$OUT/old.jar
python3 gpu/swap_classes.py "$JAR" "$OLD_CLASSES" "$OLD_JAR" | tee -a "$LOG" || exit 2

say "=== $(date -u) gpu/peerhttp_ab.sh on $(cat /proc/sys/kernel/hostname), $(nproc) CPUs; driver $driver"
for i in $(seq 1 "$ROUNDS"); do
  for build in new old; do
    jar=$JAR; [ "$build" = old ] && jar=$OLD_JAR
    timeout -k 10 120 bash bench/run.sh --driver "$driver" --java "$J" --jar "$jar" --no-aot --sections http \
      --out "$OUT/http-$build-$i.json" > "$OUT/http-$build-$i.log" 2>&1
    say "round $i $build (exit $?): $(grep -o 'HTTP floor p50 / p99[^|]*|[^|]*' "$OUT/http-$build-$i.log" | tr -s ' ')"
  done
done
timeout -k 15 240 bash bench/run.sh --driver "$driver" --java "$J" --jar "$JAR" --no-aot --sections probe \
  --compare-jar "$OLD_JAR" --out "$OUT/probe-ab.json" > "$OUT/probe-ab.log" 2>&1
say "probe A/B exit $?"
tail -12 "$OUT/probe-ab.log" | tee -a "$LOG"
python3 - "$OUT" "$ROUNDS" <<'PY' | tee -a "$LOG"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def p50(build, i):
    try:
        f = json.load(open(f"{out}/http-{build}-{i}.json"))
        return f["httpFloor"]["p50"]
    except Exception:
        return None
for build in ("old", "new"):
    v = [x for x in (p50(build, i) for i in range(1, rounds + 1)) if x is not None]
    print(f"HTTP floor p50, {build}: {v} median {statistics.median(v) if v else None} ms")
try:
    f = json.load(open(f"{out}/probe-ab.json"))
    for key, name in (("probeCompare", "old"), ("probe", "new")):
        t = f[key]["stages"]["transfer"]
        print(f"{name}: probe p50 {f[key]['wall']['p50']} ms, transfer p50 {t['p50']} ms")
except Exception as e:
    print("probe A/B figures missing:", e)
PY
