#!/usr/bin/env bash
# (ran in session 2026-12-05 e, on an H100, as the first half of that session's call 1, with call1-pull.sh after it)
# session 2026-12-05 d, call 3 (run from .gpu-bundle/ with old-classes.tgz = 9c4f248, sync-classes.tgz = b756324): verify's copy-engine window beside the kernel (d53fc05) against the window after it
# (b756324) and the kernel alone (9c4f248): check --repeat 1000 each, twice; the floor three ways; hotpath both
# orders against 9c4f248 with the timeline; the ABI check of the new entry point against the toolkit's headers
set -u; START=$(date +%s)
W=/tmp/w-d3-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; cat .gpu-bundle/COMMIT
make -C native OUT=$W/abi abi-check CUDA_INCLUDE=/usr/local/cuda/include > $W/abi.log 2>&1; echo "abi-check exit $?"; tail -4 $W/abi.log
gcc -std=c11 -D_GNU_SOURCE -O2 -Inative/include -Inative/src native/src/loader.c gpu/compare_check.c -o $W/cc -ldl -lpthread && timeout 60 $W/cc > $W/compare_check.txt 2>&1; echo "compare_check exit $?"; tail -7 $W/compare_check.txt
mkdir -p $W/kernel $W/sync; python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/kernel/imexprobe.jar > /dev/null
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/sync-classes.tgz $W/sync/imexprobe.jar > /dev/null
for r in 1 2; do for b in beside sync kernel; do jar=.gpu-bundle/imexprobe.jar; [ $b != beside ] && jar=$W/$b/imexprobe.jar
timeout 60 $J -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar $jar check --repeat 1000 --json > $W/check-$b$r.json 2> $W/check-$b$r.err; echo "check $b$r exit $?"
python3 - $W/check-$b$r.json $b$r <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
for r in d.get("repeat") or []: print(sys.argv[2], "check --repeat 1000 p50/p99 ms: verify", [round(x*1000,3) for x in r["stageSecondsP50P99"]["verify"]], "create", [round(x*1000,3) for x in r["stageSecondsP50P99"]["create"]], "passed", r["passed"])
for p in d.get("pairs") or d.get("results") or []:
  for st in p.get("stages", []):
    if st.get("name") == "verify": print(" ", st.get("status"), st.get("detail"))
PY
done; done
gcc -std=c11 -D_GNU_SOURCE -O2 -Inative/include -Inative/src native/src/loader.c bench/driver_floor.c -o $W/df -ldl -lpthread
for round in 1 2; do for v in beside kernel; do e=""; [ $v = kernel ] && e=FLOOR_VERIFY=kernel
env $e timeout 60 $W/df --iterations 500 --warmup 50 --out $W/floor-$v$round.json > $W/floor-$v$round.log 2>&1 || tail -2 $W/floor-$v$round.log
python3 -c "import json;r=json.load(open('$W/floor-$v$round.json'));print('floor $v$round total %.3f' % r['total']['p50'], {k: round(v['p50'],3) for k,v in r['stages'].items()})"
done; done
date -u
OUT=$W/hpA TIMELINE=1 OTHER_FLOOR=FLOOR_VERIFY=kernel timeout 100 bash gpu/hotpath.sh > $W/hpA.out 2>&1; echo "A exit $?"; sed -n '/=== summary/,$p' $W/hpA/hotpath.log | grep -v "^|"
grep "stage p50" $W/hpA/hotpath.log
OUT=$W/hpB ORDER=reverse TIMELINE=1 OTHER_FLOOR=FLOOR_VERIFY=kernel timeout 100 bash gpu/hotpath.sh > $W/hpB.out 2>&1; echo "B exit $?"; sed -n '/=== summary/,$p' $W/hpB/hotpath.log | grep -v "^|"
grep "stage p50" $W/hpB/hotpath.log
date -u
rm -f $W/df; find $W -name driver_floor -delete; rm -f $W/cc; tar -C $W -czf $OUT/all.tgz --exclude='*.jar' . ; ls -la $OUT
