#!/usr/bin/env bash
# session 2026-12-06 n, call 4 (run from the bundle, on call 3's warm host): the goals with one pair alone
# (OLD_CLASSES=/none), 1,000 probes per setting after 300, twice.
set -u
W=/tmp/w-n4-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call4-host.txt
for rep in 1 2; do
  OUT=$W/goals-$rep OLD_CLASSES=/none COUNT=1000 timeout 150 bash gpu/hotpath.sh > $W/goals-$rep.out 2>&1; echo "== goals $rep exit $?"
  sed -n '/=== summary/,$p' $W/goals-$rep/hotpath.log | grep -v "^|" | sed -n '2,16p' | cut -c1-130
  cp $W/goals-$rep/hotpath.json $OUT/call4-goals-$rep.json 2>/dev/null; cp $W/goals-$rep/hotpath.log $OUT/call4-goals-$rep.log 2>/dev/null
done
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
