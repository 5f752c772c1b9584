#!/usr/bin/env bash
# session 2026-12-05 e, call 1 second half (on an H100), after ../2026-12-05-h200-d/call3.sh in the same call (run from .gpu-bundle/ with main-classes.tgz = 5232e41):
# pull with the exporter's check and release beside the importer's release (07e561d) against 5232e41, both orders,
# the first with the timeline; then push against 5232e41 with the floors, for goal 1, the ratio and no loss on push.
set -u
W=/tmp/w-e4-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; cat .gpu-bundle/COMMIT
OUT=$W/pullA DIRECTION=pull FLOORS=0 TIMELINE=1 OLD_CLASSES=.gpu-bundle/main-classes.tgz timeout 120 bash gpu/hotpath.sh > $W/pullA.out 2>&1; echo "pull A exit $?"
grep -E "^/probe pull|stage p50" $W/pullA/hotpath.log
OUT=$W/pullB DIRECTION=pull FLOORS=0 ORDER=reverse OLD_CLASSES=.gpu-bundle/main-classes.tgz timeout 120 bash gpu/hotpath.sh > $W/pullB.out 2>&1; echo "pull B exit $?"
grep -E "^/probe pull|stage p50" $W/pullB/hotpath.log
date -u
OUT=$W/pushC OLD_CLASSES=.gpu-bundle/main-classes.tgz timeout 150 bash gpu/hotpath.sh > $W/pushC.out 2>&1; echo "push C exit $?"
sed -n '/=== summary/,$p' $W/pushC/hotpath.log | grep -v "^|"
date -u
find $W -name driver_floor -delete; tar -C $W -czf $OUT/all4.tgz --exclude='*.jar' . ; ls -la $OUT
