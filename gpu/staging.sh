#!/usr/bin/env bash
# The pattern's ways of moving on the GPU host (gpu/staging_bench.cu): prints p50/p90 per way, ~1 minute.
#   OUT=/tmp/out bash gpu/staging.sh [ITERATIONS]
set -eu
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
gcc -O2 -c -I native/src gpu/staging_pattern.c -o /tmp/staging_pattern.o
nvcc -O2 gpu/staging_bench.cu /tmp/staging_pattern.o -o /tmp/staging_bench -lcuda
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E 'Model name|^CPU\(s\)'
  timeout 120 /tmp/staging_bench "${1:-300}"; } 2>&1 | tee "$OUT/staging.txt"
