#!/usr/bin/env bash
# session 2026-12-06 r, call 1 (run from the bundle): no loss elsewhere for session q's change (8d68c79; the bundle is 9327304, the same code) against
# 122b74a (.gpu-bundle/old-classes.tgz): (START_RSS=1: start -> ready and RSS, gpu/start_rss.sh, one round each, first), the
# 72-GPU scale agent (--scale-rounds 1,1), this build then 122b74a. Each part's output is packed as soon as it ends.
set -u
W=/tmp/w-r1-$$; rm -rf $W; mkdir -p $W/old
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call1-host.txt
OUT_ALL=$OUT
pack() { tar -C $W -czf $OUT_ALL/call1-all.tgz --exclude='*.jar' --exclude=driver_floor --exclude=old --exclude='*.jfr' . ; }
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null || exit 1
cp .gpu-bundle/imexprobe-bench.jar $W/old/
[ "${START_RSS:-0}" = 1 ] && ROUNDS=1 timeout 80 bash gpu/start_rss.sh .gpu-bundle/imexprobe.jar $W/old/imexprobe.jar > $W/start_rss.log 2>&1; echo "start_rss exit $? at ${SECONDS}s"; tail -8 $W/start_rss.log
pack
i=0; for b in new old; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  [ $SECONDS -gt 180 ] && { echo "scale $b skipped at ${SECONDS}s"; break; }
  timeout 110 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,1 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $? at ${SECONDS}s"
  python3 -c "
import json; d=json.load(open('$W/scale-$i-$b.json'))
for s in d['scale']: print('  %4.0fs out %d in %d rounds %s whole %s win %.1fs cpu %.2f%% rss %.0f peak %.0f ready %.2f' % (s['intervalSeconds'], s['outboundProbesInWindow'], s['inboundPushesInWindow'], s.get('windowRounds'), s.get('windowRoundsWhole'), s['windowSeconds'], 100*s['cpuShare'], s['rssMiB'], s['peakRssMiB'], s['readySeconds']))
" 2>&1 | head -4
  pack
done
nvidia-smi --query-gpu=memory.used --format=csv,noheader; date -u
# then the goals once more with this build, one pair alone, 1,000 probes per setting after 300, while time is left
if [ $SECONDS -lt 330 ]; then
  OUT=$W/goals COUNT=1000 OLD_CLASSES=/none timeout 220 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $? at ${SECONDS}s"
  cp $W/goals/hotpath.log $OUT_ALL/call1-goals.log 2>/dev/null
  grep -E "^/probe push|VmRSS" $W/goals/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
  grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 1,|goal 2" $W/goals/hotpath.log | cut -c1-150
fi
date -u
