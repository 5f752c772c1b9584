#!/usr/bin/env bash
# session 2026-12-05 i, call 4 (run from the bundle, 47d57ba: 68a963c without the warm-up): the final code once more
# against ba93e82 (.gpu-bundle/old-classes.tgz). One pair alone with the floors (the goals); both pairs probed in
# turn, both orders; both with the agents' timeline; the 72-GPU scale agent, ba93e82 first (call 2 ran the new build
# first), to tell the build from the order.
set -u
W=/tmp/w-i4-$$; rm -rf $W; mkdir -p $W/old
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc
OUT=$W/lone COUNT=1000 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/lone.out 2>&1; echo "== lone exit $?"
sed -n '/=== summary/,$p' $W/lone/hotpath.log | grep -v "^|" | head -14
for o in normal reverse; do
  OUT=$W/ab-$o COUNT=1000 FLOORS=0 OLD_CLASSES=.gpu-bundle/old-classes.tgz ORDER=$o timeout 150 bash gpu/hotpath.sh > $W/ab-$o.out 2>&1; echo "== ab-$o exit $?"
  grep -E "^/probe push" $W/ab-$o/hotpath.log | sed 's/; agent.s own.*//'
done
OUT=$W/tl COUNT=1000 FLOORS=0 TIMELINE=1 OLD_CLASSES=.gpu-bundle/old-classes.tgz timeout 150 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
grep -E "^/probe push" $W/tl/hotpath.log | sed 's/; agent.s own.*//'
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null && cp .gpu-bundle/imexprobe-bench.jar $W/old/
i=0; for b in old new; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 180 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,2 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-$i-$b.log | cut -c1-160
done
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=driver_floor . ; ls -la $OUT
