#!/usr/bin/env bash
# session 2026-12-06 l, call 1 (run from the bundle): the host; whether the IMEX daemon's tools are installed (the
# agent's IMEX-daemon facts have only run against the fake's nvidia-imex-ctl so far); `check` once (its node facts);
# then issue 23's goals with one pair alone and the floors, 1,000 probes per setting (gpu/hotpath.sh).
set -u
W=/tmp/w-l1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; lscpu | grep -E "Model name" | head -1; } | tee $W/host.txt
{ echo "== IMEX tools"; for t in nvidia-imex nvidia-imex-ctl; do command -v $t || echo "no $t on PATH"; done
  ls -la /etc/nvidia-imex /usr/bin/nvidia-imex* /usr/sbin/nvidia-imex* 2>&1 | head; (dpkg -l 2>/dev/null | grep -i imex) || echo "no imex package (dpkg)"; } | tee $W/imex-tools.txt
timeout 60 $J -jar .gpu-bundle/imexprobe.jar check --json > $W/check.json 2> $W/check.err; echo "== check exit $?"
python3 - $W/check.json <<'PY' 2>&1 | head -30
import json,sys
d=json.load(open(sys.argv[1]))
def walk(o, path=""):
    if isinstance(o, dict):
        for k,v in o.items():
            if 'imex' in k.lower() or 'daemon' in k.lower(): print(path+"/"+k, json.dumps(v)[:300])
            else: walk(v, path+"/"+k)
    elif isinstance(o, list):
        for i,v in enumerate(o): walk(v, path+"[%d]"%i)
walk(d)
for f in d.get('findings', []): print('finding', f.get('code'), f.get('severity'))
PY
OUT=$W/lone COUNT=1000 OLD_CLASSES=/none timeout 200 bash gpu/hotpath.sh > $W/lone.out 2>&1; echo "== lone exit $?"
sed -n '/=== summary/,$p' $W/lone/hotpath.log | grep -v "^|" | sed -n '2,14p' | cut -c1-160
cp $W/lone/hotpath.json $OUT/call1-lone.json 2>/dev/null; cp $W/lone/hotpath.log $OUT/call1-lone.log 2>/dev/null
cp $W/host.txt $OUT/call1-host.txt; cp $W/imex-tools.txt $OUT/call1-imex-tools.txt; cp $W/check.json $OUT/call1-check.json; cp $W/check.err $OUT/call1-check.err
nvidia-smi --query-gpu=memory.used --format=csv,noheader
