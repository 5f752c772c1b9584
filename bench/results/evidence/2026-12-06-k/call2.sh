#!/usr/bin/env bash
# session 2026-12-06 k, call 2 (run from the bundle): one pair alone with the floors (the goals) again; the 72-GPU scale agent with the window that holds the agent's
# rounds whole (ScaleRun.windowTarget), this build against ba93e82 (.gpu-bundle/old-classes.tgz), in the order
# new, old, old, new, two warm-up rounds (the first is cold) and one measured round each (--scale-rounds 2,1). Call 1's and session i's
# readings compared windows that held one round more for the new build than for the old.
set -u
W=/tmp/w-k2-$$; rm -rf $W; mkdir -p $W/old
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
OUT=$W/lone COUNT=1000 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/lone.out 2>&1; echo "== lone exit $?"
sed -n '/=== summary/,$p' $W/lone/hotpath.log | grep -v "^|" | sed -n '2,13p' | cut -c1-150
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null || exit 1
cp .gpu-bundle/imexprobe-bench.jar $W/old/
i=0; for b in new old old new; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 150 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 2,1 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"
  python3 -c "
import json; d=json.load(open('$W/scale-$i-$b.json'))
for s in d['scale']: print('  %4.0fs out %d in %d rounds %s whole %s win %.1fs cpu %.2f%% rss %.0f peak %.0f ready %.2f' % (s['intervalSeconds'], s['outboundProbesInWindow'], s['inboundPushesInWindow'], s.get('windowRounds'), s.get('windowRoundsWhole'), s['windowSeconds'], 100*s['cpuShare'], s['rssMiB'], s['peakRssMiB'], s['readySeconds']))
print('  576:', d.get('domain576',{}).get('subsets',[{}])[0])
"
  tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=old --exclude=driver_floor .; date -u
done
nvidia-smi --query-gpu=memory.used --format=csv,noheader
