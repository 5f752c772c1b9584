#!/usr/bin/env bash
# session 2026-12-05 d, call 1 (run from .gpu-bundle/ as call2.sh): the compare kernel can fail and agrees with pattern.h (gpu/compare_check.c); no loss
# elsewhere: the 72-GPU scale agent and start -> ready / RSS, each against d3776a8; a third hotpath run with timeline
set -u; START=$(date +%s)
W=/tmp/w-d1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; lscpu | grep -E "Model name"; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; cat .gpu-bundle/COMMIT
gcc -std=c11 -D_GNU_SOURCE -O2 -Inative/include -Inative/src native/src/loader.c gpu/compare_check.c -o $W/cc -ldl -lpthread && timeout 60 $W/cc > $W/compare_check.txt 2>&1; echo "compare_check exit $?"; tail -8 $W/compare_check.txt
mkdir -p $W/old; python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null; cp .gpu-bundle/imexprobe-bench.jar $W/old/
i=0; for b in old new old new; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
[ $i -ge 3 ] && [ $(( $(date +%s) - START )) -gt 250 ] && { echo "skip scale $i"; continue; }
timeout 130 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,2 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-$i-$b.log | cut -c1-160
date -u
done
ROUNDS=2 timeout 100 bash gpu/start_rss.sh .gpu-bundle/imexprobe.jar $W/old/imexprobe.jar > $W/start_rss.log 2>&1; echo "start_rss exit $?"; tail -12 $W/start_rss.log
date -u
OUT=$W/hpC TIMELINE=1 OTHER_FLOOR=FLOOR_VERIFY=copy timeout 90 bash gpu/hotpath.sh > $W/hpC.out 2>&1; echo "C exit $?"; sed -n '/=== summary/,$p' $W/hpC/hotpath.log | grep -v "^|"
grep "stage p50" $W/hpC/hotpath.log
date -u
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude='cc' . ; ls -la $OUT
