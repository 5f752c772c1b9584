#!/usr/bin/env bash
# session 2026-12-05 c, call 1: the compare kernel (verify and write-back check on the GPU) against d3776a8, both
# orders, timeline on run A; the floor's kernels per process (which process's kernel costs what on a shared GPU),
# long gaps; check --repeat
set -u
W=/tmp/w; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
date -u; nproc; lscpu | grep -E "Model name" ; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter -Inative/include -Inative/src native/src/loader.c bench/driver_floor.c -o $W/df -ldl -lpthread
fl() { tag=$1; shift
  env "$@" timeout 60 $W/df --iterations 500 --warmup 50 --out $W/floor-$tag.json > $W/floor-$tag.log 2>&1 || tail -2 $W/floor-$tag.log
  python3 - $W/floor-$tag.json $tag <<'PY'
import json,sys; r=json.load(open(sys.argv[1])); s=r["stages"]
print(f'{sys.argv[2]:>14} total {r["total"]["p50"]:.3f}  ' + ' '.join(f'{k} {v["p50"]:.3f}' for k,v in s.items()))
PY
}
for round in 1 2; do
fl kernel$round FLOOR_GAP_US=0
fl copy$round FLOOR_VERIFY=copy
fl nokernel$round FLOOR_NO_KERNEL=1
fl noimpk$round FLOOR_NO_KERNEL=importer
fl noexpk$round FLOOR_NO_KERNEL=exporter
done
fl copy-sleep1000 FLOOR_VERIFY=copy FLOOR_GAP_US=1000
fl copy-sleep2000 FLOOR_VERIFY=copy FLOOR_GAP_US=2000
fl kernel-sleep1000 FLOOR_GAP_US=1000
date -u
OUT=$W/hpA TIMELINE=1 OTHER_FLOOR=FLOOR_VERIFY=copy timeout 200 bash gpu/hotpath.sh > $W/hpA.out 2>&1; echo "A exit $?"; sed -n '/=== summary/,$p' $W/hpA/hotpath.log | grep -v "^|"
grep "stage p50" $W/hpA/hotpath.log
OUT=$W/hpB ORDER=reverse OTHER_FLOOR=FLOOR_VERIFY=copy timeout 200 bash gpu/hotpath.sh > $W/hpB.out 2>&1; echo "B exit $?"; sed -n '/=== summary/,$p' $W/hpB/hotpath.log | grep -v "^|"
grep "stage p50" $W/hpB/hotpath.log
date -u
timeout 60 $J -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar .gpu-bundle/imexprobe.jar check --repeat 1000 --json > $W/check.json 2> $W/check.err; echo "check exit $?"
python3 - $W/check.json <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
for r in d.get("repeat") or []: print("check --repeat 1000 (one process) stage p50 ms:", {k: round(v[0]*1000, 3) for k, v in r["stageSecondsP50P99"].items()}, "passed", r["passed"])
for p in d.get("pairs") or d.get("results") or []:
  for st in p.get("stages", []):
    if st.get("name") in ("verify","writeback","create"): print(st.get("name"), st.get("status"), st.get("detail"))
PY
date -u
rm -f $W/df; tar -C $W -czf $OUT/all.tgz --exclude='*.jar' --exclude='driver_floor' . ; ls -la $OUT
