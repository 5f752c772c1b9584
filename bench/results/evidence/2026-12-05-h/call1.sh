#!/usr/bin/env bash
# session 2026-12-05 h, call 1 (session g's call 2, run from the bundle, plus a build that wakes the most recently idle worker): call 1 found the floor's calls as fast inside a JVM and with the
# context bound before every call, but `check --repeat` 0.07 ms slower in create and 0.02 in export. StageCost.java
# (compiled into .gpu-bundle/sc) runs the self-probe's stages in a loop (1000 after 200) with a driver pool of 2 and
# of 1 thread, and with every CudaDriver call timed through a proxy (variants ending in p): what of a stage is the
# driver calls. Under the agents' flags (C1 only) and under the JVM's default (C2). Then the agents themselves with
# one driver thread beside a pair with the default 16 (gpu/hotpath.sh VARIANTS, both orders): the pool wakes its
# longest-idle thread (probe/WakeQueue), so each hop's first calls come from a thread that has been idle longest.
# The hotpath runs also probe a pair of the same build with WakeQueue waking the most recently parked worker
# (pollLast for pollFirst, two lines; its classes in .gpu-bundle/lifo-classes.tgz, shown as the "old" pair).
set -u
W=/tmp/w-g2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader
C1="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m"
run() { # name flags variants
  echo "== $1"; timeout 120 $J $2 --enable-native-access=ALL-UNNAMED -Dloader.path=.gpu-bundle/sc -Dloader.main=StageCost \
    -cp .gpu-bundle/imexprobe.jar org.springframework.boot.loader.launch.PropertiesLauncher 1000 $3 2>&1 | grep -v WARNING | tee $W/$1.txt
}
run c1-a "$C1" t2,t1,t2p,t1p
run c2-a "-XX:+UseSerialGC" t2,t2p
run c1-b "$C1" t1p,t2p,t1,t2
for o in normal reverse; do
  OUT=$W/t1-$o COUNT=1000 FLOORS=0 OLD_CLASSES=.gpu-bundle/lifo-classes.tgz ORDER=$o VARIANTS="t1:IMEXPROBE_DRIVER_THREADS=1" timeout 240 bash gpu/hotpath.sh > $W/t1-$o.out 2>&1; echo "== t1-$o exit $?"
  grep -E "^/probe push|stage p50" $W/t1-$o/hotpath.log | cut -c1-230
done
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
tar -C $W -czf $OUT/all.tgz . ; ls -la $OUT
