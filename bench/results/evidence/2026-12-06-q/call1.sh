#!/usr/bin/env bash
# session 2026-12-06 q, call 1 (run from the bundle): (1) the goals with this session's build, one pair alone,
# 1,000 probes per setting after 300; (2) less garbage on the exporter (145f4cb) against 122b74a's classes
# (.gpu-bundle/old-classes.tgz) in one run, 1,000 probes per setting, every agent logging its collections
# (-Xlog:gc, counted after the warm-up by gc_steady.py), forward, then reverse while time is left; (3) on an H200 only,
# and while time is left, the agents' timeline (TIMELINE=1 FLOORS=0, 500 probes).
set -u
W=/tmp/w-q1-$$; rm -rf $W; mkdir -p $W/gc
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } > $W/host.txt
cp $W/host.txt $OUT/call1-host.txt; cat $W/host.txt
OUT=$W/goals COUNT=1000 OLD_CLASSES=/none timeout 200 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $? at ${SECONDS}s"
cp $W/goals/hotpath.log $OUT/call1-goals.log 2>/dev/null
grep -E "^/probe push|VmRSS" $W/goals/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 1,|goal 2" $W/goals/hotpath.log | cut -c1-150
for o in forward reverse; do
  [ $o = reverse ] && [ $SECONDS -gt 300 ] && { echo "== reverse skipped at ${SECONDS}s"; break; }
  mkdir -p $W/gc/$o
  ORDER=$([ $o = reverse ] && echo reverse) OUT=$W/ab-$o COUNT=1000 OLD_CLASSES=.gpu-bundle/old-classes.tgz \
    JVM_FLAGS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m -Xlog:gc:file=$W/gc/$o/gc-%p.log" \
    timeout 230 bash gpu/hotpath.sh > $W/ab-$o.out 2>&1; echo "== ab $o exit $? at ${SECONDS}s"
  grep -E "^/probe push|VmRSS" $W/ab-$o/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
  python3 bench/results/evidence/2026-12-06-p/gc_steady.py $W/gc/$o/*.log 2>&1 | sed "s|$W/gc/||"
  grep -o "with PID [0-9]*" $W/ab-$o/agent-*.log | sed "s|$W/ab-$o/||"
  cp $W/ab-$o/hotpath.log $OUT/call1-ab-$o.log 2>/dev/null
done
( cd $W && tar czf $OUT/call1-gc.tgz gc )
if grep -q H200 $W/host.txt && [ $SECONDS -lt 420 ]; then
  OUT=$W/tl COUNT=500 OLD_CLASSES=/none TIMELINE=1 FLOORS=0 timeout 150 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $? at ${SECONDS}s"
  python3 gpu/timeline.py $W/tl > $OUT/call1-timeline-summary.txt 2>&1
  grep -A24 "writeback=true, raw caller" $OUT/call1-timeline-summary.txt
fi
date -u
