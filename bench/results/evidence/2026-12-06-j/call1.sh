#!/usr/bin/env bash
# session 2026-12-06 j, call 1 (run from the bundle): the 72-GPU scale agent (bench/run.sh --sections scale
# --scale-rounds 1,1: one measured interval, to fit the 300 s of device time left) of this session's build against ba93e82 (.gpu-bundle/old-classes.tgz), new first, as in
# session i's call 2 (call 4 ran ba93e82 first). A third reading of the agent's RSS peak at 30 s, which read +5 and
# +17 MiB against ba93e82 in session i. Each run's output is packed as soon as it ends.
set -u
W=/tmp/w-j1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
mkdir -p $W/old; python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null || exit 1; cp .gpu-bundle/imexprobe-bench.jar $W/old/
i=0; for b in new old; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 110 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,1 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-$i-$b.log | cut -c1-160
  date -u
  tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=old .
done
nvidia-smi --query-gpu=memory.used --format=csv,noheader
ls -la $OUT
