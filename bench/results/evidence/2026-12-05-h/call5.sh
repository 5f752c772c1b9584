#!/usr/bin/env bash
# session 2026-12-05 h, call 5 (run from the bundle): the final build (a2dbb83: every worker that takes a task while
# more wait wakes one more) once more. `check --repeat 1000` twice; one pair alone with the floors (the goals); its pair
# and 1e57df0's probed in turn, both orders; the 72-GPU scale agent (many lists at once, where the pass-on acts), against 1e57df0 (.gpu-bundle/fifo-classes.tgz).
set -u
W=/tmp/w-h5-$$; rm -rf $W; mkdir -p $W/old
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc
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
for o in normal reverse; do
  OUT=$W/ab-$o COUNT=1000 FLOORS=0 OLD_CLASSES=.gpu-bundle/fifo-classes.tgz ORDER=$o timeout 150 bash gpu/hotpath.sh > $W/ab-$o.out 2>&1; echo "== ab-$o exit $?"
  grep -E "^/probe push" $W/ab-$o/hotpath.log | sed 's/; agent.s own.*//'
done
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/fifo-classes.tgz $W/old/imexprobe.jar > /dev/null && cp .gpu-bundle/imexprobe-bench.jar $W/old/
for b in new old; do jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 180 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,2 --out $W/scale-$b.json > $W/scale-$b.log 2>&1; echo "scale $b exit $?"; grep -E "agent (RSS|CPU|start)|failed|fail" $W/scale-$b.log | cut -c1-160 | head -12
done
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=driver_floor . ; ls -la $OUT
