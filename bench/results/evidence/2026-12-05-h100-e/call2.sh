#!/usr/bin/env bash
# session 2026-12-05 e, call 2 (on an H100; run from .gpu-bundle/ with old-classes.tgz = 9c4f248, sync-classes.tgz = b756324):
# what the copy-engine window costs /probe push, 1000 probes per caller and setting: this build (window beside the
# kernel) against the kernel alone (9c4f248) and against the window after the kernel (b756324), each in both orders
set -u
W=/tmp/w-e5-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for run in kernelA:9c4f248:old-classes: kernelB:9c4f248:old-classes:reverse syncA:b756324:sync-classes: syncB:b756324:sync-classes:reverse; do
  IFS=: read -r name sha tgz order <<< "$run"
  fl=0; [ $name = kernelA ] && fl=1
  OUT=$W/$name COUNT=1000 FLOORS=$fl ORDER=$order OTHER_FLOOR=FLOOR_VERIFY=kernel OLD_CLASSES=.gpu-bundle/$tgz.tgz timeout 120 bash gpu/hotpath.sh > $W/$name.out 2>&1
  echo "== $name (other build $sha, order ${order:-this build first}) exit $?"
  grep -E "^/probe push" $W/$name/hotpath.log | sed 's/; agent.s own.*//'
  grep "stage p50" $W/$name/hotpath.log | sed -n '3p;7p'
done
date -u
find $W -name driver_floor -delete; tar -C $W -czf $OUT/all5.tgz --exclude='*.jar' --exclude='*.jfr' . ; ls -la $OUT
