#!/usr/bin/env bash
# session 2026-12-06 r, call 3 (run from the bundle, the final build): (1) the goals, one pair alone, 1,000 probes per
# setting after 300; (2) the guarantees to jobs and deadlines (session o's call2.sh: a mute peer, hung driver calls, no
# context between rounds, 2,000 hostile handles, compute mode and MIG); (3) while time is left, the domains run with
# IMEXPROBE_MESH_SUBSET=16 on the real driver (one agent alone in a 72-GPU domain, then inside 8 domains of 72).
set -u
W=/tmp/w-r3-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
cp $W/host.txt $OUT/call3-host.txt
OUT_ALL=$OUT
OUT=$W/goals COUNT=1000 OLD_CLASSES=/none timeout 200 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $? at ${SECONDS}s"
cp $W/goals/hotpath.log $OUT_ALL/call3-goals.log 2>/dev/null
grep -E "^/probe push|VmRSS" $W/goals/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 1,|goal 2" $W/goals/hotpath.log | cut -c1-150
OUT=$OUT_ALL timeout 260 bash bench/results/evidence/2026-12-06-o/call2.sh > $W/guarantees.out 2>&1; echo "== guarantees exit $? at ${SECONDS}s"
grep -E "HTTP 200 in|PASS|FAIL|stuck|hostile|delta|SIGTERM|context|memory.used" $OUT_ALL/call2-summary.txt 2>/dev/null | cut -c1-200 | head -40
if [ $SECONDS -lt 420 ]; then
  timeout 160 bash bench/run.sh --driver real --java $J --jar .gpu-bundle/imexprobe.jar --sections domains --quick --agent-env "IMEXPROBE_MESH_SUBSET=16" --out $W/domains.json > $W/domains.log 2>&1; echo "== domains exit $? at ${SECONDS}s"
  cp $W/domains.json $OUT_ALL/call3-domains.json 2>/dev/null
  python3 -c "
import json; d=json.load(open('$W/domains.json'))['domains']
for k in ('oneDomain','eightDomains'):
    r=d.get(k)
    if r: print(k, 'win %.1fs out %d in %d cpu %.1f%% rss %.0f mesh %s' % (r['windowSeconds'], r['outboundProbesInWindow'], r['inboundPushesInWindow'], 100*r['cpuShare'], r['rssMiB'], r['mesh']['pairsByState']))
" 2>&1 | head -3
fi
nvidia-smi --query-gpu=memory.used --format=csv,noheader; date -u
