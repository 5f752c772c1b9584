#!/usr/bin/env bash
# session 2026-12-06 p, call 1 (run from the bundle): first session o's call 2, never run (the final build's
# guarantees to jobs and deadlines on a GPU: a mute peer, hung driver calls, no context between probes, hostile
# handles, compute mode and MIG), then the goals once with one pair alone (1,000 probes per setting after 300).
set -u
OUT=$OUT timeout 400 bash .gpu-bundle/call2-o.sh 2>&1 | tail -75
W=/tmp/w-p1-$$; rm -rf $W; mkdir -p $W
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } > $W/host.txt
cp $W/host.txt $OUT/call1-host.txt
OUT=$W/goals OLD_CLASSES=/none COUNT=1000 timeout 170 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $?"
sed -n '/=== summary/,$p' $W/goals/hotpath.log | grep -v "^|" | sed -n '2,16p' | cut -c1-130
cp $W/goals/hotpath.json $OUT/call1-goals.json 2>/dev/null; cp $W/goals/hotpath.log $OUT/call1-goals.log 2>/dev/null
date -u; ls -la $OUT
