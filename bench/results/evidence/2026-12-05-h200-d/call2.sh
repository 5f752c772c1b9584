#!/usr/bin/env bash
# session 2026-12-05 d, call 2 (run from .gpu-bundle/): verify's copy-engine window (b756324) against 9c4f248 (the compare kernel alone):
# check --repeat 1000 each, the floor with and without the window, hotpath both orders with the timeline; the 72-GPU
# scale agent once more for this build
set -u; START=$(date +%s)
W=/tmp/w-d2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; cat .gpu-bundle/COMMIT
mkdir -p $W/old; python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null; cp .gpu-bundle/imexprobe-bench.jar $W/old/
for b in new old new old; do jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
timeout 60 $J -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar $jar check --repeat 1000 --json > $W/check-$b.json 2> $W/check-$b.err; echo "check $b exit $?"
python3 - $W/check-$b.json $b <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
for r in d.get("repeat") or []: print(sys.argv[2], "check --repeat 1000 stage p50 ms:", {k: round(v[0]*1000, 3) for k, v in r["stageSecondsP50P99"].items()}, "passed", r["passed"])
for p in d.get("pairs") or d.get("results") or []:
  for st in p.get("stages", []):
    if st.get("name") == "verify": print(" ", st.get("status"), st.get("detail"))
PY
done
gcc -std=c11 -D_GNU_SOURCE -O2 -Inative/include -Inative/src native/src/loader.c bench/driver_floor.c -o $W/df -ldl -lpthread
for round in 1 2; do for v in window kernel; do e=""; [ $v = kernel ] && e=FLOOR_VERIFY=kernel
env $e timeout 60 $W/df --iterations 500 --warmup 50 --out $W/floor-$v$round.json > $W/floor-$v$round.log 2>&1 || tail -2 $W/floor-$v$round.log
python3 -c "import json;r=json.load(open('$W/floor-$v$round.json'));print('floor $v$round total %.3f' % r['total']['p50'], {k: round(v['p50'],3) for k,v in r['stages'].items()})"
done; done
date -u
OUT=$W/hpA TIMELINE=1 OTHER_FLOOR=FLOOR_VERIFY=kernel timeout 100 bash gpu/hotpath.sh > $W/hpA.out 2>&1; echo "A exit $?"; sed -n '/=== summary/,$p' $W/hpA/hotpath.log | grep -v "^|"
grep "stage p50" $W/hpA/hotpath.log
OUT=$W/hpB ORDER=reverse TIMELINE=1 OTHER_FLOOR=FLOOR_VERIFY=kernel timeout 100 bash gpu/hotpath.sh > $W/hpB.out 2>&1; echo "B exit $?"; sed -n '/=== summary/,$p' $W/hpB/hotpath.log | grep -v "^|"
grep "stage p50" $W/hpB/hotpath.log
date -u
[ $(( $(date +%s) - START )) -lt 380 ] && { timeout 130 bash bench/run.sh --driver real --java $J --jar .gpu-bundle/imexprobe.jar --sections scale --scale-rounds 1,2 --out $W/scale-4-new.json > $W/scale-4-new.log 2>&1; echo "scale 4 new exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-4-new.log | cut -c1-160; }
date -u
rm -f $W/df; find $W -name driver_floor -delete; tar -C $W -czf $OUT/all.tgz --exclude='*.jar' . ; ls -la $OUT
