#!/usr/bin/env bash
# session 2026-12-05 b, call 1: 33b9c8e against fe4c31e, both orders; C2+trim as a variant; timeline; scale default
set -u
W=/tmp/w; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J
C2="c2trim:JVM=-XX:MaxRAMPercentage=60~-XX:+UseSerialGC~-XX:MaxRAM=512m~-XX:CICompilerCount=2~-XX:TrimNativeHeapInterval=2000"
date -u; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader
OUT=$W/hpA VARIANTS="$C2" timeout 200 bash gpu/hotpath.sh > $W/hpA.out 2>&1; echo "A exit $?"; sed -n '/=== summary/,$p' $W/hpA/hotpath.log
OUT=$W/hpB ORDER=reverse timeout 150 bash gpu/hotpath.sh > $W/hpB.out 2>&1; echo "B exit $?"; sed -n '/=== summary/,$p' $W/hpB/hotpath.log
OUT=$W/tl TIMELINE=1 FLOORS=0 timeout 150 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "TL exit $?"
python3 gpu/timeline.py $W/tl new > $W/tl-new.txt 2>&1; python3 gpu/timeline.py $W/tl old > $W/tl-old.txt 2>&1; tail -25 $W/tl-new.txt
date -u
timeout 250 bash bench/run.sh --driver real --java $J --jar .gpu-bundle/imexprobe.jar --sections scale --scale-rounds 1,2 --out $W/scale-default.json > $W/scale-default.log 2>&1; echo "scale exit $?"; grep -E "RSS|CPU|ready" $W/scale-default.log | head -12
date -u
rm -f $W/*/*.jfr.tmp; tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude='driver_floor' --exclude='fake-driver' . ; ls -la $OUT
