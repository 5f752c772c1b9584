#!/usr/bin/env bash
# session 2026-12-08 ab, call 1 (the bundle of abceb60 or later):
#  1. gpu/slow-peer.sh: a peer that answers each import 3 s late (inside a 5 s peer timeout, longer than the 1 s
#     interval) does not hold the prober's rounds: the other peer is probed about once a round (new this session).
#  2. session z's call 1 as it is: the guarantees (session o's call 2), gpu/busy-gpu.sh, gpu/hotpath.sh HOT times.
set -u
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; cat .gpu-bundle/COMMIT
OUT=$OUT/slow RUN=20 timeout 120 bash gpu/slow-peer.sh 2>&1 | tail -8; echo "slow-peer.sh: exit $?"
cp $OUT/slow/slow-peer-a.log $OUT/call1-slow-peer-a.log 2>/dev/null
OUT=$OUT bash bench/results/evidence/2026-12-07-z/call1.sh
