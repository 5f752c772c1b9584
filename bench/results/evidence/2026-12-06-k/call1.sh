#!/usr/bin/env bash
# session 2026-12-06 k, call 1 (run from the bundle): where issue 23 stands with the final code of sessions i and j.
# One pair alone with the floors (the goals); start -> ready and RSS (gpu/start_rss.sh, two rounds, alternating);
# the 72-GPU scale agent (--scale-rounds 1,1: the 30 s interval, the reading session i asked a third of), this build
# then ba93e82 (.gpu-bundle/old-classes.tgz). Each part's output is packed as soon as it ends.
set -u
W=/tmp/w-k1-$$; rm -rf $W; mkdir -p $W/old
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
pack() { tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=driver_floor --exclude=old . ; }
OUT_ALL=$OUT
OUT=$W/lone COUNT=1000 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/lone.out 2>&1; echo "== lone exit $?"
sed -n '/=== summary/,$p' $W/lone/hotpath.log | grep -v "^|" | head -14
OUT=$OUT_ALL; pack; date -u
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null || exit 1
cp .gpu-bundle/imexprobe-bench.jar $W/old/
ROUNDS=2 timeout 110 bash gpu/start_rss.sh .gpu-bundle/imexprobe.jar $W/old/imexprobe.jar > $W/start_rss.log 2>&1; echo "start_rss exit $?"; tail -8 $W/start_rss.log
pack; date -u
i=0; for b in new old; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 110 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,1 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-$i-$b.log | cut -c1-160
  pack; date -u
done
nvidia-smi --query-gpu=memory.used --format=csv,noheader
ls -la $OUT
