#!/usr/bin/env bash
# session 2026-12-05 i, call 1 (run from the bundle): the probe's path after this session's three changes (DirectRoutes
# before Boot's filters, the recorder woken after the answer, the report's JSON writer warmed while the write-back
# check runs). `check --repeat 1000` twice; one pair alone with the floors (the goals); its pair and ba93e82's
# (.gpu-bundle/old-classes.tgz) probed in turn, both orders; its pair and the same build without the warm-up
# (.gpu-bundle/nowarm-classes.tgz), both orders; then the new and old pairs with the agents' timeline.
set -u
W=/tmp/w-i1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1
JF="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m --enable-native-access=ALL-UNNAMED"
for r in 1 2; do timeout 90 $J $JF -jar .gpu-bundle/imexprobe.jar check --repeat 1000 --json > $W/check-$r.json 2> /dev/null; done
python3 - $W <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/check-*.json")):
    r = json.load(open(f))["repeat"][0]
    print(os.path.basename(f), r["passed"], "passed", f"{r['wallSeconds']:.2f} s", {k: round(v[0] * 1e3, 3) for k, v in r["stageSecondsP50P99"].items()})
PY
OUT=$W/lone COUNT=1000 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/lone.out 2>&1; echo "== lone exit $?"
grep "stage p50" $W/lone/hotpath.log | cut -c1-200; sed -n '/=== summary/,$p' $W/lone/hotpath.log | grep -v "^|" | head -14
for other in old nowarm; do for o in normal reverse; do
  OUT=$W/ab-$other-$o COUNT=1000 FLOORS=0 OLD_CLASSES=.gpu-bundle/$other-classes.tgz ORDER=$o timeout 150 bash gpu/hotpath.sh > $W/ab-$other-$o.out 2>&1; echo "== ab-$other-$o exit $?"
  grep -E "^/probe push" $W/ab-$other-$o/hotpath.log | sed 's/; agent.s own.*//'
done; done
OUT=$W/tl COUNT=1000 FLOORS=0 TIMELINE=1 OLD_CLASSES=.gpu-bundle/old-classes.tgz timeout 150 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
grep -E "^/probe push" $W/tl/hotpath.log | sed 's/; agent.s own.*//'
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=driver_floor . ; ls -la $OUT
