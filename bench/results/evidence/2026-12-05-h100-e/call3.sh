#!/usr/bin/env bash
# session 2026-12-05 e, call 3 (run from .gpu-bundle/ with old-classes.tgz = 9c4f248): no loss elsewhere for the
# final build (the copy-engine window beside the kernel, 8c6dce5): the 72-GPU scale agent new, old, new, and
# start -> ready / RSS, against the kernel alone (9c4f248)
set -u; START=$(date +%s)
W=/tmp/w-e3-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; lscpu | grep -E "Model name"; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; cat .gpu-bundle/COMMIT
mkdir -p $W/old; python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null; cp .gpu-bundle/imexprobe-bench.jar $W/old/
i=0; for b in new old new; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
[ $i -ge 3 ] && [ $(( $(date +%s) - START )) -gt 300 ] && { echo "skip scale $i"; continue; }
timeout 130 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,2 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-$i-$b.log | cut -c1-160
date -u
done
ROUNDS=2 timeout 100 bash gpu/start_rss.sh .gpu-bundle/imexprobe.jar $W/old/imexprobe.jar > $W/start_rss.log 2>&1; echo "start_rss exit $?"; tail -12 $W/start_rss.log
date -u
tar -C $W -czf $OUT/all3.tgz --exclude='*.jar' . ; ls -la $OUT
