#!/usr/bin/env bash
# session 2026-12-07 x, call 3: check beside a job that has filled the GPU (the bundle of the session's last code):
# gpu/busy_job.py holds all but 2 GiB; `check --json` must skip the GPU with GPU_MEMORY_IN_USE (exit 0, no self-probe,
# no context of its own); with IMEXPROBE_DRIVER_MINFREEMEMORY=0 it probes beside the job; the job's next 256 MiB
# allocation must still succeed. Then gpu/hotpath.sh twice.
set -u
W=/tmp/w-x3-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; } | tee $OUT/call3-host.txt
summ() { python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
print("  exit", d.get("exitCode"), "selfProbe", [(p["gpu"], p["verdict"]) for p in d.get("selfProbe", [])],
      "findings", [(f["code"], f["severity"], f.get("evidence", {}).get("freeMiB")) for f in d.get("findings", [])])' "$1"; }
{
coproc JOB { python3 gpu/busy_job.py 2048; }
read -r -t 60 line <&"${JOB[0]}"; echo "job: $line"
S=$(date +%s%N); $J -jar .gpu-bundle/imexprobe.jar check --json > $W/busy.json 2> $W/busy.err; rc=$?
echo "check beside the job: exit $rc in $(( ($(date +%s%N) - S) / 1000000 )) ms"; summ $W/busy.json
echo "  compute apps after: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ';')"
S=$(date +%s%N); IMEXPROBE_DRIVER_MINFREEMEMORY=0 $J -jar .gpu-bundle/imexprobe.jar check --json > $W/off.json 2> $W/off.err; rc=$?
echo "check with IMEXPROBE_DRIVER_MINFREEMEMORY=0 beside the job: exit $rc in $(( ($(date +%s%N) - S) / 1000000 )) ms"; summ $W/off.json
echo go >&"${JOB[1]}"; read -r -t 30 line <&"${JOB[0]}"; echo "job's next allocation: $line"; wait $JOB_PID 2>/dev/null
IMEXPROBE_DRIVER_MINFREEMEMORY=plenty $J -jar .gpu-bundle/imexprobe.jar check > $W/bad.out 2> $W/bad.err; echo "a bad value: exit $? stdout $(wc -c < $W/bad.out) bytes, $(head -1 $W/bad.err)"
$J -jar .gpu-bundle/imexprobe.jar check --json > $W/idle.json 2>/dev/null; echo "check with the job gone: exit $?"; summ $W/idle.json
} 2>&1 | tee $OUT/call3-check-busy.txt
for r in $(seq 1 ${HOT:-2}); do
  OUT=$W/g$r COUNT=1000 OLD_CLASSES=/none timeout 100 bash gpu/hotpath.sh > $W/g$r.out 2>&1; echo "hotpath run $r: exit $?"
  cp $W/g$r/hotpath.log $OUT/call3-run$r-goals.log
  grep -E "Python peer  |C driver floor \(|goal 1:|goal 2|^/probe push" $W/g$r/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
done
date -u
