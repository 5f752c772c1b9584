#!/usr/bin/env bash
# session 2026-12-06 n, call 5 (run from the bundle): the goals with one pair alone once more, then the agents'
# timeline (TIMELINE=1, no floors, 500 probes per setting): where each exchange's time goes on such a host.
set -u
W=/tmp/w-n5-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
OUT=$W/goals OLD_CLASSES=/none COUNT=1000 timeout 150 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $?"
sed -n '/=== summary/,$p' $W/goals/hotpath.log | grep -v "^|" | sed -n '2,12p' | cut -c1-130
cp $W/goals/hotpath.json $OUT/call5-goals.json 2>/dev/null; cat $W/goals/hotpath.log >> $W/host.txt
OUT=$W/tl OLD_CLASSES=/none TIMELINE=1 FLOORS=0 timeout 200 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
mkdir -p $OUT/call5-timeline; cp $W/tl/agent-*.jfr $W/tl/caller-trace.json $W/tl/hotpath.json $OUT/call5-timeline/ 2>/dev/null
sed -n '/=== summary/,$p' $W/tl/hotpath.log | grep -v "^|" | sed -n '2,8p' | cut -c1-130
cp $W/host.txt $OUT/call5-host-and-goals-log.txt
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader; ls -la $OUT/call5-timeline
