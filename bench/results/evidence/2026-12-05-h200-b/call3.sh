#!/usr/bin/env bash
# session 2026-12-05 b, call 3: the importer's early head (exporter's check overlapping) against 33b9c8e, both orders,
# timeline; floor gap experiments; check --repeat; scale against fe4c31e
set -u
W=/tmp/w; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; nproc; lscpu | grep -E "Model name|L2|L3" ; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader
OUT=$W/hpA timeout 150 bash gpu/hotpath.sh > $W/hpA.out 2>&1; echo "A exit $?"; sed -n '/=== summary/,$p' $W/hpA/hotpath.log | grep -v "^|"
OUT=$W/hpB ORDER=reverse timeout 150 bash gpu/hotpath.sh > $W/hpB.out 2>&1; echo "B exit $?"; sed -n '/=== summary/,$p' $W/hpB/hotpath.log | grep -v "^|"
OUT=$W/tl TIMELINE=1 FLOORS=0 timeout 150 bash gpu/hotpath.sh > $W/tl.out 2>&1; echo "TL exit $?"
date -u
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter -Inative/include -Inative/src native/src/loader.c bench/driver_floor.c -o $W/df -ldl -lpthread
fl() { tag=$1; shift
  env "$@" timeout 60 $W/df --iterations 500 --warmup 50 --out $W/floor-$tag.json > $W/floor-$tag.log 2>&1
  python3 - $W/floor-$tag.json $tag <<'PY'
import json,sys; r=json.load(open(sys.argv[1])); s=r["stages"]
print(f'{sys.argv[2]:>14} total {r["total"]["p50"]:.3f}  ' + ' '.join(f'{k} {v["p50"]:.3f}' for k,v in s.items()))
PY
}
for round in 1 2; do
fl base$round FLOOR_GAP_US=0
fl sleep200-$round FLOOR_GAP_US=200 FLOOR_GAP_MODE=sleep
fl sleep500-$round FLOOR_GAP_US=500 FLOOR_GAP_MODE=sleep
fl spin500-$round FLOOR_GAP_US=500 FLOOR_GAP_MODE=spin
fl evict200-$round FLOOR_GAP_US=200 FLOOR_GAP_MODE=evict
fl evict500-$round FLOOR_GAP_US=500 FLOOR_GAP_MODE=evict
fl cpu2-$round FLOOR_GAP_US=0 taskset -c 2
done
timeout 60 $J -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar .gpu-bundle/imexprobe.jar check --repeat 1000 --json > $W/check.json 2> $W/check.err; echo "check exit $?"
python3 - $W/check.json <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
for r in d.get("repeat") or []: print("check --repeat 1000 (one process) stage p50 ms:", {k: round(v[0]*1000, 3) for k, v in r["stageSecondsP50P99"].items()}, "passed", r["passed"])
PY
date -u
python3 gpu/swap_classes.py .gpu-bundle/imexprobe.jar .gpu-bundle/fe4c31e-classes.tgz $W/fe4c31e.jar > /dev/null
for b in fe4c31e new; do jar=.gpu-bundle/imexprobe.jar; [ $b = fe4c31e ] && jar=$W/fe4c31e.jar
timeout 170 bash bench/run.sh --driver real --java $J --jar $jar --sections scale --scale-rounds 1,2 --out $W/scale-$b.json > $W/scale-$b.log 2>&1; echo "scale $b exit $?"; grep -E "agent (RSS|CPU|start)" $W/scale-$b.log | cut -c1-150
done
date -u
rm -f $W/df; tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude='driver_floor' . ; ls -la $OUT
