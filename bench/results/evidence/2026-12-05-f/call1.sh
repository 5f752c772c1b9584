#!/usr/bin/env bash
# session 2026-12-05 f, call 1 (run from the bundle, old-classes.tgz = 9c4f248, the kernel alone):
# 1. the final build's judged run: every figure of issue 23's goals in one run, 1000 probes per caller and setting;
# 1b. the C floor in its own order and in the agents' (FLOOR_ORDER=agents: the importer releases while the exporter
#     checks), alternately, twice each: which process's work the next create follows, on one GPU;
# 2. its timeline (TIMELINE=1, 500 probes), for where the wall time goes on this card;
# 3. the copy-engine window beside the kernel (this build) against the kernel alone (9c4f248), three more runs in
#    each order, 1000 probes per caller and setting, to settle last session's +0.08 ms wall reading.
set -u
W=/tmp/w-f1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc
OUT=$W/final COUNT=1000 FLOORS=1 timeout 150 bash gpu/hotpath.sh > $W/final.out 2>&1; echo "== final exit $?"
sed -n '/=== summary/,$p' $W/final/hotpath.log
grep -E "stage p50" $W/final/hotpath.log | sed -n '2p;4p'
for f in $W/final/floor-*.json; do python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], {k: v.get('p50') for k, v in d.get('stages', {}).items()})" $f 2>/dev/null; done
for i in 1 2; do for o in own agents; do
  FLOOR_ORDER=$o timeout 60 $W/final/driver_floor --iterations 1000 --warmup 50 --out $W/floor-$o-$i.json > /dev/null 2>&1
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[1].split('/')[-1], 'total', round(d['total']['p50'],3), {k: round(v['p50'],3) for k, v in d['stages'].items()})" $W/floor-$o-$i.json
done; done
OUT=$W/tl COUNT=500 FLOORS=0 TIMELINE=1 timeout 120 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "== timeline exit $?"
grep -E "^/probe push" $W/tl/hotpath.log | sed 's/; agent.s own.*//'
for i in 1 2 3; do
  for order in "" reverse; do
    name=win$i${order:+R}
    OUT=$W/$name COUNT=1000 FLOORS=0 ORDER=$order OLD_CLASSES=.gpu-bundle/old-classes.tgz timeout 120 bash gpu/hotpath.sh > $W/$name.out 2>&1
    echo "== $name (other build 9c4f248, order ${order:-this build first}) exit $?"
    grep -E "^/probe push" $W/$name/hotpath.log | sed 's/; agent.s own.*//'
    grep "stage p50" $W/$name/hotpath.log | sed -n '3p;7p'
  done
done
date -u; nvidia-smi --query-gpu=memory.used --format=csv,noheader
find $W -name driver_floor -delete; find $W -name '*.jfr' ! -path "$W/tl/*" -delete
tar -C $W -czf $OUT/all.tgz --exclude='*.jar' . ; ls -la $OUT
