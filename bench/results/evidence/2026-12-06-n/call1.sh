#!/usr/bin/env bash
# session 2026-12-06 n, call 1 (run from the bundle): the driver pool's wake order under stray wake-ups (83e5ac4,
# this build 4c09f70, "new") against 18102c7 ("old", .gpu-bundle/old-classes.tgz: the queue before the fix), two
# pairs probed alternately by gpu/hotpath.sh, in both orders, 500 probes per setting after 300.
set -u
W=/tmp/w-n1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call1-host.txt
for order in normal reverse; do
  OUT=$W/$order ORDER=$order timeout 270 bash gpu/hotpath.sh > $W/$order.out 2>&1; echo "== $order exit $?"
  sed -n '/=== summary/,$p' $W/$order/hotpath.log | grep -v "^|" | sed -n '2,30p' | cut -c1-170
  cp $W/$order/hotpath.json $OUT/call1-$order.json 2>/dev/null; cp $W/$order/hotpath.log $OUT/call1-$order.log 2>/dev/null
  date -u
done
nvidia-smi --query-gpu=memory.used --format=csv,noheader
