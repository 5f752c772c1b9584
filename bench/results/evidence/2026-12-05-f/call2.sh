#!/usr/bin/env bash
# session 2026-12-05 f, call 2 (run from the bundle): issue 23's judged figures for the final build with ONE pair
# of agents on the GPU (no other build's pair beside it), 1000 probes per caller and setting, twice; then its
# timeline (TIMELINE=1, 500 probes): the driver's segments on the exchange's path against the goal's budget.
set -u
W=/tmp/w-f2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc
for i in 1 2; do
  OUT=$W/lone$i COUNT=1000 FLOORS=1 OLD_CLASSES=/none timeout 150 bash gpu/hotpath.sh > $W/lone$i.out 2>&1; echo "== lone$i exit $?"
  sed -n '/=== summary/,/the other build.s ratio/p' $W/lone$i/hotpath.log
  grep -E "stage p50" $W/lone$i/hotpath.log | sed -n '2p;4p'
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('floor-after', {k: round(v['p50'],3) for k, v in d['stages'].items()})" $W/lone$i/floor-after.json
done
OUT=$W/tl COUNT=500 FLOORS=0 TIMELINE=1 OLD_CLASSES=/none timeout 120 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
grep -E "^/probe push" $W/tl/hotpath.log | sed 's/; agent.s own.*//'
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
find $W -name driver_floor -delete
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' . ; ls -la $OUT
