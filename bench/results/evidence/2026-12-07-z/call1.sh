#!/usr/bin/env bash
# session 2026-12-07 z, call 1 (the bundle of 7f3ff5c or later):
#  1. the guarantees to jobs and deadlines, last proven on a GPU with session o's code: session o's call 2 as it is
#     (a mute peer and a silent TCP peer against timeout=3s, stuck.sh, context-lifecycle.sh, hostile.sh N=2000,
#     safe-jobs.sh); its files come back as call2-summary.txt and call2-files.tgz.
#  2. gpu/busy-gpu.sh with LEAVE_MIB=8 MINFREE=0: push and pull from a full GPU not_probed; a pull's finding now names
#     both nodes (session y's call 3 read targetNode null).
#  3. gpu/hotpath.sh, HOT times.
set -u
W=/tmp/w-z1-$$; rm -rf $W; mkdir -p $W
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
OUT=$OUT bash bench/results/evidence/2026-12-06-o/call2.sh > $W/guarantees.out 2>&1; echo "guarantees: exit $?"
cut -c1-300 $OUT/call2-summary.txt
LEAVE_MIB=8 MINFREE=0 OUT=$W/busy timeout 120 bash gpu/busy-gpu.sh > /dev/null 2>&1; echo "busy-gpu.sh: exit $?"
cp $W/busy/busy-gpu.txt $OUT/call1-busy-gpu.txt; cut -c1-400 $W/busy/busy-gpu.txt
for r in $(seq 1 ${HOT:-2}); do
  OUT=$W/g$r COUNT=1000 OLD_CLASSES=/none timeout 100 bash gpu/hotpath.sh > $W/g$r.out 2>&1; echo "hotpath run $r: exit $?"
  cp $W/g$r/hotpath.log $OUT/call1-run$r-goals.log
  grep -E "Python peer  |C driver floor \(|goal 1:|goal 2|^/probe push" $W/g$r/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
done
date -u
