#!/usr/bin/env bash
# session 2026-12-06 l, call 2 (run from the bundle): where the 72-GPU scale agent's "(the rest)" goes (threads that
# ended inside the window: 0.40-0.45 s of ~2 s at the 3 s interval in session k, 0.00-0.05 s on the fake). A thread
# census (census.py: every `java -jar ... serve` on the host, its threads every 10 ms) runs beside one scale run of
# this build (both intervals, two warm-up rounds, one measured: --scale-rounds 2,1).
set -u
W=/tmp/w-l2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
python3 .gpu-bundle/census.py $W/census.json 400 > $W/census.out 2>&1 &
CP=$!
timeout 300 bash bench/run.sh --driver real --java $J --jar .gpu-bundle/imexprobe.jar --sections scale --scale-rounds 2,1 --out $W/scale.json > $W/scale.log 2>&1; echo "scale exit $?"
wait $CP
python3 -c "
import json; d=json.load(open('$W/scale.json'))
for s in d['scale']: print('  %4.0fs out %d in %d rounds %s whole %s win %.1fs cpu %.2f%% rss %.0f peak %.0f ready %.2f' % (s['intervalSeconds'], s['outboundProbesInWindow'], s['inboundPushesInWindow'], s.get('windowRounds'), s.get('windowRoundsWhole'), s['windowSeconds'], 100*s['cpuShare'], s['rssMiB'], s['peakRssMiB'], s['readySeconds'])); print('    by thread', s.get('cpuSecondsByThread'))
"
cat $W/census.out
cp $W/host.txt $OUT/call2-host.txt; cp $W/census.json $W/census.out $OUT/ 2>/dev/null; cp $W/scale.json $OUT/call2-scale.json; cp $W/scale.log $OUT/call2-scale.log
nvidia-smi --query-gpu=memory.used --format=csv,noheader
