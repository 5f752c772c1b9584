#!/usr/bin/env bash
# session 2026-12-05 h, call 6 (run from the bundle, a2dbb83): the goals once more, and what Tomcat's thread choice
# costs. Beside the default pair, a pair whose Tomcat has one request thread (SERVER_TOMCAT_THREADS_MAX=1: a request
# that comes while the last one's thread is still finishing waits for it instead of a second thread being made, and
# the threads are not then woken in turn), and a pair of the next build, whose Tomcat takes the most recently idle
# request thread first (web/RequestThreads; .gpu-bundle/tomcat-lifo-classes.tgz, shown as the "old" build). Floors on,
# both orders. The host's CPU is printed: call 5's host ran the
# agents' HTTP far faster than calls 2-4's. Then both pairs with the agents' timeline (the JFR files come back).
set -u
W=/tmp/w-h6-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name|MHz" | head -3
for o in normal reverse; do
  OUT=$W/t-$o COUNT=1000 OLD_CLASSES=.gpu-bundle/tomcat-lifo-classes.tgz ORDER=$o VARIANTS="tmax1:SERVER_TOMCAT_THREADS_MAX=1" timeout 200 bash gpu/hotpath.sh > $W/t-$o.out 2>&1; echo "== t-$o exit $?"
  grep -E "^/probe push" $W/t-$o/hotpath.log | sed 's/; agent.s own.*//'
  sed -n '/=== summary/,$p' $W/t-$o/hotpath.log | grep -v "^|" | head -12
done
OUT=$W/tl COUNT=1000 FLOORS=0 TIMELINE=1 OLD_CLASSES=.gpu-bundle/tomcat-lifo-classes.tgz VARIANTS="tmax1:SERVER_TOMCAT_THREADS_MAX=1" timeout 150 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
grep -E "^/probe push" $W/tl/hotpath.log | sed 's/; agent.s own.*//'
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=driver_floor . ; ls -la $OUT
