#!/usr/bin/env bash
# session 2026-12-07 w, call 3 (the bundle of the session's last code: call 1's, plus the driver pool's
# queue handing a task offered while the announced worker wakes to that worker): session r's call3.sh as it is (the
# goals, the guarantees to jobs and deadlines, the 72-GPU domains run with subset 16), then gpu/hotpath.sh twice more.
set -u
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
bash bench/results/evidence/2026-12-06-r/call3.sh
for r in 1 2; do
  S=$(date +%s); OUT=/tmp/gw$r COUNT=1000 OLD_CLASSES=/none timeout 120 bash gpu/hotpath.sh > /tmp/gw$r.out 2>&1
  echo "hotpath run $r: exit $? in $(( $(date +%s) - S )) s"; cp /tmp/gw$r/hotpath.log $OUT/call3-run$r-goals.log
  grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 2|^/probe push" /tmp/gw$r/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
done
