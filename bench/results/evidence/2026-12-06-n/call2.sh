#!/usr/bin/env bash
# session 2026-12-06 n, call 2 (run from the bundle): (a) the goals with one pair alone (OLD_CLASSES=/none), 1,000
# probes per setting after 300; (b) the 72-GPU scale agent (--scale-rounds 6,1) with the chart's flags plus
# -XX:TrimNativeHeapInterval=1000 and -Xlog:trimnative; between them two more A/B runs as call 1's: how much of its native heap glibc gives back, trim by trim.
set -u
W=/tmp/w-n2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call2-host.txt
OUT=$W/goals OLD_CLASSES=/none COUNT=1000 timeout 200 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $?"
sed -n '/=== summary/,$p' $W/goals/hotpath.log | grep -v "^|" | sed -n '2,30p' | cut -c1-170
cp $W/goals/hotpath.json $OUT/call2-goals.json 2>/dev/null; cp $W/goals/hotpath.log $OUT/call2-goals.log 2>/dev/null
date -u
# two more A/B runs of call 1 (this build against 18102c7), one in each order; only the JSON comes back
for order in normal reverse; do
  OUT=$W/ab-$order ORDER=$order OLD_CLASSES=.gpu-bundle/old-classes.tgz timeout 120 bash gpu/hotpath.sh > $W/ab-$order.out 2>&1; echo "== A/B $order exit $?"
  sed -n '/=== summary/,$p' $W/ab-$order/hotpath.log | grep -v "^|" | sed -n '2,10p' | cut -c1-120
  cp $W/ab-$order/hotpath.json $OUT/call2-ab-$order.json 2>/dev/null
done
date -u
FLAGS="$(bash bench/run.sh --print-agent-jvm) -XX:TrimNativeHeapInterval=1000 -Xlog:trimnative"
timeout 290 bash bench/run.sh --driver real --java $J --jar .gpu-bundle/imexprobe.jar --sections scale --scale-rounds 6,1 --keep --agent-jvm "$FLAGS" --out $W/scale-trim.json > $W/scale-trim.log 2>&1; echo "scale trim exit $?"
python3 -c "
import json; d=json.load(open('$W/scale-trim.json'))
for s in d['scale']: print('  %4.0fs out %d in %d rounds %s win %.1fs cpu %.2f%% rss %.0f peak %.0f ready %.2f' % (s['intervalSeconds'], s['outboundProbesInWindow'], s['inboundPushesInWindow'], s.get('windowRounds'), s['windowSeconds'], 100*s['cpuShare'], s['rssMiB'], s['peakRssMiB'], s['readySeconds'])); print('    jvm MiB', s.get('jvmMemoryMiB'))
"
cp $W/scale-trim.json $OUT/call2-scale-trim.json
K=$(sed -n 's/.*work folder (logs) kept: //p' $W/scale-trim.log | tail -1)
{ echo "work: $K"; for f in $K/agent-*.log; do echo "== $f"; grep -h 'trimnative' $f; done; } > $W/trim.txt 2>&1
cp $W/trim.txt $OUT/call2-trimnative.txt; grep -c 'Periodic Trim' $W/trim.txt; tail -5 $W/trim.txt
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
