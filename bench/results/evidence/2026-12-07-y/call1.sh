#!/usr/bin/env bash
# session 2026-12-07 y, call 1 (the bundle of the session's code):
#  A. check beside a job that has filled the GPU but 2 GiB (gpu/busy_job.py): skipped with GPU_MEMORY_IN_USE, no
#     context of its own; with IMEXPROBE_DRIVER_MINFREEMEMORY=0 it probes beside the job; the job's next 256 MiB
#     allocation must still succeed.
#  B. a GPU filled to its last 64 MiB and the headroom turned off (IMEXPROBE_DRIVER_MINFREEMEMORY=0): which driver call
#     fails and with what code (what the driver does when a job has taken everything; the fake follows it), and that
#     check leaves no context or allocation behind.
#  C. gpu/hotpath.sh, HOT times.
set -u
W=/tmp/w-y1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader; nproc; } | tee $OUT/call1-host.txt
summ() { python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
print("  exit", d.get("exitCode"), "verdict", d.get("verdict"), "findings", [(f["code"], f["severity"], f.get("evidence", {}).get("freeMiB")) for f in d.get("findings", [])])
for p in d.get("selfProbe", []):
    bad = [s for s in p.get("stages", []) if s.get("status") not in ("ok", "skipped")]
    print("  selfProbe gpu", p["gpu"], p["verdict"], "first failing stage:", (bad[0]["name"], bad[0].get("cuResultName"), bad[0].get("detail", "")[:160]) if bad else None,
          "finding:", (p["finding"]["code"], p["finding"]["severity"], p["finding"].get("blame")) if p.get("finding") else None)' "$1"; }
apps() { echo "  compute apps: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ';')"; }
{
echo "== A: a job holding all but 2048 MiB"
coproc JOB { python3 gpu/busy_job.py 2048; }
read -r -t 60 line <&"${JOB[0]}"; echo "job: $line"
S=$(date +%s%N); $J -jar .gpu-bundle/imexprobe.jar check --json > $W/busy.json 2> $W/busy.err; rc=$?
echo "check beside the job: exit $rc in $(( ($(date +%s%N) - S) / 1000000 )) ms"; summ $W/busy.json; apps
S=$(date +%s%N); IMEXPROBE_DRIVER_MINFREEMEMORY=0 $J -jar .gpu-bundle/imexprobe.jar check --json > $W/off.json 2> $W/off.err; rc=$?
echo "check with IMEXPROBE_DRIVER_MINFREEMEMORY=0 beside the job: exit $rc in $(( ($(date +%s%N) - S) / 1000000 )) ms"; summ $W/off.json
echo go >&"${JOB[1]}"; read -r -t 30 line <&"${JOB[0]}"; echo "job's next allocation: $line"; wait $JOB_PID 2>/dev/null
echo "== B: a job holding all but 64 MiB, the headroom off"
coproc JOB2 { python3 gpu/busy_job.py 64; }
read -r -t 60 line <&"${JOB2[0]}"; echo "job: $line"
S=$(date +%s%N); IMEXPROBE_DRIVER_MINFREEMEMORY=0 $J -jar .gpu-bundle/imexprobe.jar check --json > $W/full.json 2> $W/full.err; rc=$?
echo "check with the headroom off beside a full GPU: exit $rc in $(( ($(date +%s%N) - S) / 1000000 )) ms"; summ $W/full.json; apps
grep -i -E "error|out of memory|OUT_OF" $W/full.err | head -5
cp $W/full.json $OUT/call1-full-gpu-check.json
S=$(date +%s%N); $J -jar .gpu-bundle/imexprobe.jar check --json > $W/fulldef.json 2> $W/fulldef.err; rc=$?
echo "check with the default headroom beside the full GPU: exit $rc in $(( ($(date +%s%N) - S) / 1000000 )) ms"; summ $W/fulldef.json
echo go >&"${JOB2[1]}"; read -r -t 30 line <&"${JOB2[0]}"; echo "job's next allocation (64 MiB were left, so 256 MiB cannot fit): $line"; wait $JOB2_PID 2>/dev/null
IMEXPROBE_DRIVER_MINFREEMEMORY=plenty $J -jar .gpu-bundle/imexprobe.jar check > $W/bad.out 2> $W/bad.err; echo "a bad value: exit $? stdout $(wc -c < $W/bad.out) bytes, $(head -1 $W/bad.err)"
$J -jar .gpu-bundle/imexprobe.jar check --json > $W/idle.json 2>/dev/null; echo "check with the job gone: exit $?"; summ $W/idle.json
echo "GPU memory used now: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader)"; apps
} 2>&1 | tee $OUT/call1-check-busy.txt
for r in $(seq 1 ${HOT:-2}); do
  OUT=$W/g$r COUNT=1000 OLD_CLASSES=/none timeout 100 bash gpu/hotpath.sh > $W/g$r.out 2>&1; echo "hotpath run $r: exit $?"
  cp $W/g$r/hotpath.log $OUT/call1-run$r-goals.log
  grep -E "Python peer  |C driver floor \(|goal 1:|goal 2|^/probe push" $W/g$r/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
done
date -u
