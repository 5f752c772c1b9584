#!/usr/bin/env bash
# session 2026-12-06 o, call 1 (run from the bundle): the goals with one pair alone (OLD_CLASSES=/none), 1,000
# probes per setting after 300, twice; then the agents' timeline (TIMELINE=1, no floors, 500 probes per setting).
set -u
W=/tmp/w-o1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call1-host.txt
for rep in 1 2; do
  OUT=$W/goals-$rep OLD_CLASSES=/none COUNT=1000 timeout 200 bash gpu/hotpath.sh > $W/goals-$rep.out 2>&1; echo "== goals $rep exit $?"
  sed -n '/=== summary/,$p' $W/goals-$rep/hotpath.log | grep -v "^|" | sed -n '2,16p' | cut -c1-130
  cp $W/goals-$rep/hotpath.json $OUT/call1-goals-$rep.json 2>/dev/null; cp $W/goals-$rep/hotpath.log $OUT/call1-goals-$rep.log 2>/dev/null
done
OUT=$W/tl OLD_CLASSES=/none TIMELINE=1 FLOORS=0 timeout 200 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
sed -n '/=== summary/,$p' $W/tl/hotpath.log | grep -v "^|" | sed -n '2,8p' | cut -c1-130
( cd $W/tl && tar czf $OUT/call1-timeline.tgz agent-*.jfr caller-trace.json hotpath.json hotpath.log )
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader; ls -la $OUT
