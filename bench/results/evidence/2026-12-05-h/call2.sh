#!/usr/bin/env bash
# session 2026-12-05 h, call 2 (run from the bundle): the driver pool that wakes its most recently idle thread and
# hands a caller's next list to the thread that ran the last (99f9131) against the build before it (1e57df0, FIFO,
# .gpu-bundle/fifo-classes.tgz). `check --repeat 1000` of each, twice, alternately; two pairs of agents probed in
# turn (gpu/hotpath.sh, no floors), both orders; then one pair of this build alone with the floors, twice: the goals.
set -u
W=/tmp/w-h2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/fifo-classes.tgz $W/fifo.jar > /dev/null || exit 1
JF="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m --enable-native-access=ALL-UNNAMED"
for r in 1 2; do
  for b in new fifo new fifo; do jar=.gpu-bundle/imexprobe.jar; [ $b = fifo ] && jar=$W/fifo.jar
    timeout 90 $J $JF -jar $jar check --repeat 1000 --json > $W/check-$b-$r-$RANDOM.json 2> /dev/null; done
done
python3 - $W <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(sys.argv[1] + "/check-*.json")):
    try:
        r = json.load(open(f))["repeat"][0]
        print(os.path.basename(f), r["passed"], "passed", f"{r['wallSeconds']:.2f} s",
              {k: round(v[0] * 1e3, 3) for k, v in r["stageSecondsP50P99"].items()})
    except Exception as e:
        print(f, "unreadable:", e)
PY
for o in normal reverse; do
  OUT=$W/ab-$o COUNT=1000 FLOORS=0 OLD_CLASSES=.gpu-bundle/fifo-classes.tgz ORDER=$o timeout 150 bash gpu/hotpath.sh > $W/ab-$o.out 2>&1; echo "== ab-$o exit $?"
  grep -E "^/probe push|stage p50" $W/ab-$o/hotpath.log | cut -c1-230
done
for i in 1 2; do
  OUT=$W/lone-$i COUNT=1000 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/lone-$i.out 2>&1; echo "== lone-$i exit $?"
  sed -n '/=== summary/,$p' $W/lone-$i/hotpath.log | grep -v "^|" | head -30
done
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' . ; ls -la $OUT
