#!/usr/bin/env bash
# session 2026-12-07 x, call 1: the bundle of 4bd944f: session w's last code, which never ran on a GPU (the driver
# pool's queue handing a task offered while the announced worker wakes to that worker; a not_probed pair's blame on the
# refusing GPU's side), this session's preflight change (not on the probe's path: a refusal lookup per pull), and the
# memory headroom (NVML's memory read with each node report; gpu/busy-gpu.sh beside a job that fills the GPU). gpu/hotpath.sh three times (the goals; the pool's hand-offs are on this path), then the
# guarantees to jobs and deadlines (session o's call2.sh: a mute peer, hung driver calls holding
# the pool's threads, no context between rounds, 2,000 hostile handles, compute mode and MIG).
set -u
W=/tmp/w-x1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $OUT/call1-host.txt
S=$(date +%s); OUT=$W/busy timeout 90 bash gpu/busy-gpu.sh > $W/busy.out 2>&1; echo "busy-gpu: exit $? in $(( $(date +%s) - S )) s"
cp $W/busy/busy-gpu.txt $OUT/call1-busy-gpu.txt; cat $W/busy/busy-gpu.txt; tail -3 $W/busy.out
for r in 1 2 3; do
  S=$(date +%s); OUT=$W/g$r COUNT=1000 OLD_CLASSES=/none timeout 120 bash gpu/hotpath.sh > $W/g$r.out 2>&1
  echo "hotpath run $r: exit $? in $(( $(date +%s) - S )) s"; cp $W/g$r/hotpath.log $OUT/call1-run$r-goals.log
  grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 2|^/probe push" $W/g$r/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
done
timeout 260 bash bench/results/evidence/2026-12-06-o/call2.sh > $W/guarantees.out 2>&1; echo "== guarantees exit $? at ${SECONDS}s"
grep -E "HTTP 200 in|PASS|FAIL|stuck|hostile|delta|SIGTERM|context|memory.used" $OUT/call2-summary.txt 2>/dev/null | cut -c1-200 | head -40
nvidia-smi --query-gpu=memory.used --format=csv,noheader; date -u
