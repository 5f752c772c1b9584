#!/usr/bin/env bash
# session 2026-12-07 y, call 3 (the bundle of e8098b2 or later: GPU_OUT_OF_MEMORY): a job leaving 8 MiB of the GPU
# free and the headroom off, so the probe's 2 MiB do not fit:
#  1. check --json: expected exit 0, its self-probe not_probed with GPU_OUT_OF_MEMORY (info) at create.
#  2. gpu/busy-gpu.sh with LEAVE_MIB=8 MINFREE=0: two agents; expected push and pull not_probed with
#     GPU_OUT_OF_MEMORY blamed on the source, pass before and after; nothing left allocated.
#  3. gpu/hotpath.sh, HOT times.
set -u
W=/tmp/w-y3-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader; nproc; } | tee $OUT/call3-host.txt
{
coproc JOB { python3 gpu/busy_job.py 8; }
read -r -t 60 line <&"${JOB[0]}"; echo "job: $line"
S=$(date +%s%N); IMEXPROBE_DRIVER_MINFREEMEMORY=0 $J -jar .gpu-bundle/imexprobe.jar check --json > $W/full.json 2> $W/full.err; rc=$?
echo "check with the headroom off beside a full GPU: exit $rc in $(( ($(date +%s%N) - S) / 1000000 )) ms"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
print("  exit", d.get("exitCode"), "verdict", d.get("verdict"), "findings", [(f["code"], f["severity"], f.get("blame")) for f in d.get("findings", [])])
for p in d.get("selfProbe", []):
    bad = [s for s in p.get("stages", []) if s.get("status") not in ("ok", "skipped")]
    print("  selfProbe gpu", p["gpu"], p["verdict"], [(s["name"], s.get("cuResultName")) for s in bad][:2], p.get("finding") and p["finding"]["code"])' $W/full.json
cp $W/full.json $OUT/call3-full-gpu-check.json
echo "  compute apps: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ';')"
echo go >&"${JOB[1]}"; read -r -t 30 line <&"${JOB[0]}"; echo "job's next allocation: $line"; wait $JOB_PID 2>/dev/null
} 2>&1 | tee $OUT/call3-check-full.txt
LEAVE_MIB=8 MINFREE=0 OUT=$W/busy timeout 120 bash gpu/busy-gpu.sh > /dev/null 2>&1; echo "busy-gpu.sh: exit $?"
cp $W/busy/busy-gpu.txt $OUT/call3-busy-gpu.txt; cat $W/busy/busy-gpu.txt
for r in $(seq 1 ${HOT:-2}); do
  OUT=$W/g$r COUNT=1000 OLD_CLASSES=/none timeout 100 bash gpu/hotpath.sh > $W/g$r.out 2>&1; echo "hotpath run $r: exit $?"
  cp $W/g$r/hotpath.log $OUT/call3-run$r-goals.log
  grep -E "Python peer  |C driver floor \(|goal 1:|goal 2|^/probe push" $W/g$r/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
done
date -u
