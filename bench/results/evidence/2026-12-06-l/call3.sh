#!/usr/bin/env bash
# session 2026-12-06 l, call 3 (run from the bundle): the scale run with ThreadLedger (threads that end inside the
# window keep their last reading and are named "... (ended)"), twice: the usual plan (--scale-rounds 2,1) and six
# warm-up rounds (6,1), to see how much of the window's CPU is the JIT still compiling after two rounds.
set -u
W=/tmp/w-l3-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
for r in 2,1 6,1; do n=${r/,/-}
  timeout 330 bash bench/run.sh --driver real --java $J --jar .gpu-bundle/imexprobe.jar --sections scale --scale-rounds $r --out $W/scale-$n.json > $W/scale-$n.log 2>&1; echo "scale $r exit $?"
  python3 -c "
import json; d=json.load(open('$W/scale-$n.json'))
for s in d['scale']: print('  %4.0fs out %d in %d rounds %s whole %s win %.1fs cpu %.2f%% rss %.0f peak %.0f ready %.2f' % (s['intervalSeconds'], s['outboundProbesInWindow'], s['inboundPushesInWindow'], s.get('windowRounds'), s.get('windowRoundsWhole'), s['windowSeconds'], 100*s['cpuShare'], s['rssMiB'], s['peakRssMiB'], s['readySeconds'])); print('    by thread', s.get('cpuSecondsByThread'))
"
  cp $W/scale-$n.json $OUT/call3-scale-$n.json; cp $W/scale-$n.log $OUT/call3-scale-$n.log; date -u
done
cp $W/host.txt $OUT/call3-host.txt
nvidia-smi --query-gpu=memory.used --format=csv,noheader
