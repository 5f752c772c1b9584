#!/usr/bin/env bash
# session 2026-12-07 u, call 2 (the bundle of fd86796), for what device time is left after failed starts: only the
# goals of session r's call3.sh (one pair alone, 1,000 probes per setting after 300), then the agents' logs searched
# for the new warning of variables no setting reads.
set -u
W=/tmp/w-u2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $OUT/call2-host.txt
OUT=$W/goals COUNT=1000 OLD_CLASSES=/none timeout 230 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $? at ${SECONDS}s"
cp $W/goals/hotpath.log $OUT/call2-goals.log 2>/dev/null
grep -E "^/probe push|VmRSS" $W/goals/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 1,|goal 2" $W/goals/hotpath.log | cut -c1-150
echo "== variables no setting read, over the agents' logs (count, line):"
grep -rhoa "[A-Z0-9_]* is set, but no setting of imexprobe reads it[^;]*" $W 2>/dev/null | sort | uniq -c | head
echo "== agent logs searched: $(grep -rla "Started Main" $W 2>/dev/null | wc -l)"
nvidia-smi --query-gpu=memory.used --format=csv,noheader; date -u
