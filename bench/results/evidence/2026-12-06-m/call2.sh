#!/usr/bin/env bash
# session 2026-12-06 m, calls 2 and 3 (run from the bundle; ORDER="new old" or "old new"): the 72-GPU scale agent after six
# warm-up rounds (--scale-rounds 6,1), this build against ba93e82 (.gpu-bundle/old-classes.tgz, the build before
# issue 23's last hot-path changes), as session l's call 4, now with the JVM's own memory account (jvmMemoryMiB):
# session l read one RSS of 256 MiB beside 236-243, and could not say whether the heap made the difference.
# CALL=3 ORDER="old new" names the second call's files.
set -u
W=/tmp/w-m2-$$; rm -rf $W; mkdir -p $W/old
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null || exit 1
cp .gpu-bundle/imexprobe-bench.jar $W/old/
i=0; for b in ${ORDER:-new old}; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 280 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 6,1 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"
  python3 -c "
import json; d=json.load(open('$W/scale-$i-$b.json'))
for s in d['scale']: print('  %4.0fs out %d in %d rounds %s whole %s win %.1fs cpu %.2f%% rss %.0f peak %.0f ready %.2f' % (s['intervalSeconds'], s['outboundProbesInWindow'], s['inboundPushesInWindow'], s.get('windowRounds'), s.get('windowRoundsWhole'), s['windowSeconds'], 100*s['cpuShare'], s['rssMiB'], s['peakRssMiB'], s['readySeconds'])); print('    by thread', s.get('cpuSecondsByThread')); print('    jvm MiB', s.get('jvmMemoryMiB'))
print('  576:', d.get('domain576',{}).get('subsets',[{}])[0])
"
  cp $W/scale-$i-$b.json $OUT/call${CALL:-2}-${ORDER// /-}-scale-$i-$b.json; cp $W/scale-$i-$b.log $OUT/call${CALL:-2}-${ORDER// /-}-scale-$i-$b.log; date -u
done
cp $W/host.txt $OUT/call${CALL:-2}-${ORDER// /-}-host.txt
nvidia-smi --query-gpu=memory.used --format=csv,noheader
