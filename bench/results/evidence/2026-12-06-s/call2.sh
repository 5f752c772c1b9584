#!/usr/bin/env bash
# session 2026-12-06 s, call 2 (run from the bundle, 319efd1), for when little device time is left: the domains run with
# IMEXPROBE_MESH_SUBSET=16 on the real driver (a subset's pairs shown as unknown from the first round), then the
# goals (one pair alone, 1,000 probes per setting after 300). The guarantees (call 1's middle part) are left out.
set -u
W=/tmp/w-s2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $OUT/call2-host.txt
timeout 170 bash bench/run.sh --driver real --java $J --jar .gpu-bundle/imexprobe.jar --sections domains --quick --agent-env "IMEXPROBE_MESH_SUBSET=16" --out $OUT/call2-domains.json > $W/domains.log 2>&1; echo "== domains exit $? at ${SECONDS}s"
python3 -c "
import json; d=json.load(open('$OUT/call2-domains.json'))['domains']
for k in ('oneDomain','eightDomains'):
    r=d.get(k)
    if r: print(k, 'win %.1fs out %d in %d cpu %.1f%% rss %.0f mesh %s' % (r['windowSeconds'], r['outboundProbesInWindow'], r['inboundPushesInWindow'], 100*r['cpuShare'], r['rssMiB'], r['mesh']['pairsByState']))
" 2>&1 | head -3
OUT=$W/goals COUNT=1000 OLD_CLASSES=/none timeout 200 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "== goals exit $? at ${SECONDS}s"
cp $W/goals/hotpath.log $OUT/call2-goals.log 2>/dev/null
grep -E "^/probe push" $W/goals/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 2" $W/goals/hotpath.log | cut -c1-150
nvidia-smi --query-gpu=memory.used --format=csv,noheader; date -u
