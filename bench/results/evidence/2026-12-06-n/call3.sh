#!/usr/bin/env bash
# session 2026-12-06 n, call 3 (run from the bundle): an A/A control for calls 1-2's A/B: both pairs run this build
# (OLD_CLASSES=.gpu-bundle/same-classes.tgz, this build's own classes), in both orders, twice, 500 probes after 300:
# how far apart two pairs of one build read in gpu/hotpath.sh's alternation.
set -u
W=/tmp/w-n3-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call3-host.txt
for rep in 1 2; do for order in normal reverse; do
  OUT=$W/aa-$rep-$order ORDER=$order OLD_CLASSES=.gpu-bundle/same-classes.tgz timeout 120 bash gpu/hotpath.sh > $W/aa-$rep-$order.out 2>&1; echo "== A/A $rep $order exit $?"
  sed -n '/=== summary/,$p' $W/aa-$rep-$order/hotpath.log | grep -v "^|" | sed -n '2,10p' | cut -c1-120
  cp $W/aa-$rep-$order/hotpath.json $OUT/call3-aa-$rep-$order.json 2>/dev/null
done; done
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
