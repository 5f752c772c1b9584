#!/usr/bin/env bash
# session 2026-12-05 i, call 2 (run from the bundle): no loss elsewhere, this session's build against ba93e82
# (.gpu-bundle/old-classes.tgz): start -> ready and RSS (gpu/start_rss.sh, two rounds, alternating), the 72-GPU scale
# agent (bench/run.sh --sections scale --scale-rounds 1,2), new then old.
set -u
W=/tmp/w-i2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1
mkdir -p $W/old; python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null || exit 1
cp .gpu-bundle/imexprobe-bench.jar $W/old/
ROUNDS=2 timeout 110 bash gpu/start_rss.sh .gpu-bundle/imexprobe.jar $W/old/imexprobe.jar > $W/start_rss.log 2>&1; echo "start_rss exit $?"; tail -12 $W/start_rss.log
i=0; for b in new old; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 180 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,2 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-$i-$b.log | cut -c1-160
  date -u
done
nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' . ; ls -la $OUT
