#!/usr/bin/env bash
# session 2026-12-06 m, call 1 (run from the bundle): the exporter polling for the importer's answer near its
# expected moment (2f3d6f0, "new") against d447dc3 ("old", .gpu-bundle/old-classes.tgz), two pairs probed
# alternately by gpu/hotpath.sh, in both orders, 500 probes per setting after 300; then the same with the agents'
# timeline (TIMELINE=1, no floors), to see the "exporter has the answer" segment.
set -u
W=/tmp/w-m1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call1-host.txt
for order in normal reverse; do
  OUT=$W/$order ORDER=$order timeout 240 bash gpu/hotpath.sh > $W/$order.out 2>&1; echo "== $order exit $?"
  sed -n '/=== summary/,$p' $W/$order/hotpath.log | grep -v "^|" | sed -n '2,30p' | cut -c1-170
  cp $W/$order/hotpath.json $OUT/call1-$order.json 2>/dev/null; cp $W/$order/hotpath.log $OUT/call1-$order.log 2>/dev/null
done
OUT=$W/tl TIMELINE=1 FLOORS=0 timeout 200 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
# the JFR files and the caller's trace come back; gpu/timeline.py reads them where a JDK is (JFR_TOOL)
mkdir -p $OUT/call1-timeline; cp $W/tl/agent-*.jfr $W/tl/caller-trace.json $W/tl/hotpath.log $W/tl/hotpath.json $OUT/call1-timeline/ 2>/dev/null
sed -n '/=== summary/,$p' $W/tl/hotpath.log | grep -v "^|" | sed -n '2,12p' | cut -c1-170
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
