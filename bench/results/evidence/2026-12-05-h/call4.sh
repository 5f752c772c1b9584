#!/usr/bin/env bash
# session 2026-12-05 h, call 4 (run from the bundle): where the exchange's time goes now. This build (99f9131) and the
# one before it (1e57df0, .gpu-bundle/fifo-classes.tgz) probed in turn with the agents' timeline recorded
# (gpu/hotpath.sh TIMELINE=1, 1000 probes, no floors); the JFR files come back and gpu/timeline.py reads them here.
set -u
W=/tmp/w-h4-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc
OUT=$W/tl COUNT=1000 FLOORS=0 TIMELINE=1 OLD_CLASSES=.gpu-bundle/fifo-classes.tgz timeout 200 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
grep -E "^/probe push" $W/tl/hotpath.log | sed 's/; agent.s own.*//'
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=driver_floor . ; ls -la $OUT
