#!/usr/bin/env bash
# session 2026-12-06 p, call 3 (run from the bundle): less garbage per probe (06e90e1: a request body read into an
# array of its declared length, the stages' meters built once) against b28aa9b's classes (.gpu-bundle/old-classes.tgz),
# in one run, both orders, 1,000 probes per setting; every agent logs its collections (-Xlog:gc), counted after the
# warm-up by gc_steady.py. On the fake the importer collected every 2.9 s instead of 1.1, the exporter every 1.3 s
# instead of 1.1; the question here is what that does to p99 on a GPU.
set -u
W=/tmp/w-p3-$$; rm -rf $W; mkdir -p $W/gc
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } > $W/host.txt
cp $W/host.txt $OUT/call3-host.txt
for o in forward reverse; do
  mkdir -p $W/gc/$o
  ORDER=$([ $o = reverse ] && echo reverse) OUT=$W/ab-$o COUNT=1000 OLD_CLASSES=.gpu-bundle/old-classes.tgz \
    JVM_FLAGS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m -Xlog:gc:file=$W/gc/$o/gc-%p.log" \
    timeout 240 bash gpu/hotpath.sh > $W/ab-$o.out 2>&1; echo "== $o exit $?"
  grep -E "^/probe push|VmRSS" $W/ab-$o/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
  grep -E "goal 1:|goal 2:|Python peer" $W/ab-$o/hotpath.log | cut -c1-120
  python3 bench/results/evidence/2026-12-06-p/gc_steady.py $W/gc/$o/*.log 2>&1 | sed "s|$W/gc/||"
  grep -o "with PID [0-9]*" $W/ab-$o/agent-*.log | sed "s|$W/ab-$o/||"
  cp $W/ab-$o/hotpath.json $OUT/call3-ab-$o.json 2>/dev/null; cp $W/ab-$o/hotpath.log $OUT/call3-ab-$o.log 2>/dev/null
done
( cd $W && tar czf $OUT/call3-gc.tgz gc )
date -u; ls -la $OUT
