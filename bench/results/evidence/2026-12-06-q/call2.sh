#!/usr/bin/env bash
# session 2026-12-06 q, call 2 (the same H200, still warm): (1) the agents' timeline, TIMELINE=1 FLOORS=0, 500 probes
# per setting, its JFR files brought back for gpu/timeline.py here; (2) the goals again; (3) the A/B of call 1 with an
# A/A control beside it (CONTROL=1), both orders.
set -u
W=/tmp/w-q2-$$; rm -rf $W; mkdir -p $W
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; } > $W/host.txt; cat $W/host.txt; cp $W/host.txt $OUT/call2-host.txt
OUT=$W/tl COUNT=500 OLD_CLASSES=/none TIMELINE=1 FLOORS=0 timeout 150 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $? at ${SECONDS}s"
( cd $W/tl && tar czf $OUT/call2-timeline.tgz agent-*.jfr caller-trace.json hotpath.json hotpath.log )
OUT=$W/goals COUNT=1000 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $? at ${SECONDS}s"
cp $W/goals/hotpath.log $OUT/call2-goals.log
grep -E "^/probe push" $W/goals/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
grep -E "Python peer  |C driver floor \(|HTTP floor  |goal 1:|goal 2" $W/goals/hotpath.log | cut -c1-150
for o in forward reverse; do
  [ $SECONDS -gt 420 ] && { echo "== $o skipped at ${SECONDS}s"; break; }
  ORDER=$([ $o = reverse ] && echo reverse) OUT=$W/aa-$o COUNT=1000 OLD_CLASSES=.gpu-bundle/old-classes.tgz CONTROL=1 FLOORS=0 \
    timeout 170 bash gpu/hotpath.sh > $W/aa-$o.out 2>&1; echo "== ab+aa $o exit $? at ${SECONDS}s"
  grep -E "^/probe push" $W/aa-$o/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
  sed -n '/=== summary/,$p' $W/aa-$o/hotpath.log | grep -iE "control|A/A|A/B" | cut -c1-200
  cp $W/aa-$o/hotpath.log $OUT/call2-abaa-$o.log; cp $W/aa-$o/hotpath.json $OUT/call2-abaa-$o.json
done
date -u
