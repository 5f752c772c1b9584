#!/usr/bin/env bash
# session 2026-12-06 p, call 3 (run from the bundle): how much of the probe's p99 is the agents' young collections.
# On the fake each agent collected its young generation (about 14 MB, SerialGC) every ~240 probes for 2.7-3.3 ms, so
# about one probe in 120 has a pause inside it. This build's pair with GC logging beside a pair whose young
# generation is 64 MB (-Xmn64m: about a quarter of the collections), 1,000 probes per setting, both orders.
set -u
W=/tmp/w-p3-$$; rm -rf $W; mkdir -p $W/gc
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } > $W/host.txt
cp $W/host.txt $OUT/call3-host.txt
BASE="-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:MaxRAMPercentage=60 -XX:MaxRAM=512m"
for o in forward reverse; do
  mkdir -p $W/gc/$o
  ORDER=$([ $o = reverse ] && echo reverse) OUT=$W/mn-$o OLD_CLASSES=/none COUNT=1000 \
    JVM_FLAGS="$BASE -Xlog:gc:file=$W/gc/$o/default-%p.log" \
    VARIANTS="mn64:JVM=${BASE// /\~}~-Xmn64m~-Xlog:gc:file=$W/gc/$o/mn64-%p.log" \
    timeout 240 bash gpu/hotpath.sh > $W/mn-$o.out 2>&1; echo "== mn64 $o exit $?"
  grep -E "^/probe push|VmRSS" $W/mn-$o/hotpath.log | cut -c1-190
  python3 - $W/gc/$o/*.log <<'PY'
import os, re, sys
for f in sys.argv[1:]:
    young = [float(m.group(1)) for m in re.finditer(r"Pause Young .* ([0-9.]+)ms", open(f).read())]
    full = open(f).read().count("Pause Full")
    young.sort()
    print(f"{os.path.basename(f)} young {len(young)} (full {full}) pause p50 {young[len(young) // 2]:.3f} "
          f"max {young[-1]:.3f} ms, sum {sum(young):.1f} ms" if young else f"{os.path.basename(f)} no young pause")
PY
  cp $W/mn-$o/hotpath.json $OUT/call3-mn-$o.json 2>/dev/null; cp $W/mn-$o/hotpath.log $OUT/call3-mn-$o.log 2>/dev/null
done
( cd $W && tar czf $OUT/call3-gc.tgz gc )
date -u; ls -la $OUT
