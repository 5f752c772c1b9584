#!/usr/bin/env bash
# session 2026-12-06 k, call 3 (run from the bundle): the 72-GPU scale agent again, with the window's CPU by thread
# (ScaleRun's cpuSecondsByThread), to see where call 2's 30 s CPU difference lies: ba93e82, this build, ba93e82
# (call 2 ran new, old, old, new), --scale-rounds 2,1.
set -u
W=/tmp/w-k3-$$; rm -rf $W; mkdir -p $W/old
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/old-classes.tgz $W/old/imexprobe.jar > /dev/null || exit 1
cp .gpu-bundle/imexprobe-bench.jar $W/old/
i=0; for b in old new old; do i=$((i+1)); jar=.gpu-bundle/imexprobe.jar; [ $b = old ] && jar=$W/old/imexprobe.jar
  timeout 150 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 2,1 --out $W/scale-$i-$b.json > $W/scale-$i-$b.log 2>&1; echo "scale $i $b exit $?"
  python3 -c "
import json; d=json.load(open('$W/scale-$i-$b.json'))
for s in d['scale']: print('  %4.0fs out %d in %d whole %s win %.1fs cpu %.2f%% (%.2f s, sys %.2f) rss %.0f peak %.0f' % (s['intervalSeconds'], s['outboundProbesInWindow'], s['inboundPushesInWindow'], s.get('windowRoundsWhole'), s['windowSeconds'], 100*s['cpuShare'], s['agentCpuSeconds'], s['agentSystemCpuSeconds'], s['rssMiB'], s['peakRssMiB'])); print('     ', json.dumps(s.get('cpuSecondsByThread')))
"
  tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude=old .; date -u
done
