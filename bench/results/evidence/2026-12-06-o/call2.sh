#!/usr/bin/env bash
# session 2026-12-06 o, call 2 (run from the bundle; its parts in the order of their worth, the device's time being short): the guarantees to jobs and deadlines on the final build, last
# proven on a GPU with builds before the driver pool's and the contexts' rework: safe-jobs.sh (compute mode, MIG,
# an observer agent is no compute process), stuck.sh (hung driver calls: liveness, refusal, memory back),
# context-lifecycle.sh (no GPU memory between probes), hostile.sh with N=2000, and a mute peer (gpu/mute_peer.py: GET
# answered by a real agent behind it, the import taken and never answered) probed with timeout=3s five times, and a
# TCP peer that never reads once: the wall time, the report, the exporter's live allocations and context afterwards.
set -u
W=/tmp/w-o2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1
S=$W/summary.txt
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; } | tee $S
cp $S $OUT/call2-summary.txt
echo "===== a mute peer: answers GET as a real agent does, takes the import and never answers" | tee -a $S
TOKEN=gpu-silent-token-0123456789abcdef
for n in a:18131 b:18133; do
  IMEXPROBE_AUTH_TOKEN=$TOKEN IMEXPROBE_NODE_NAME=mute-${n%%:*} SERVER_PORT=${n#*:} IMEXPROBE_MESH_INTERVAL=1h setsid $J -jar .gpu-bundle/imexprobe.jar serve > $W/mute-agent-${n%%:*}.log 2>&1 &
done
for p in 18131 18133; do for i in $(seq 120); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.5; done; done
python3 gpu/mute_peer.py 18132 http://127.0.0.1:18133 > $W/mute-peer.log 2>&1 &
MUTE=$!
python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 18134)); s.listen(8); import time; time.sleep(3600)' &
SILENT=$!
sleep 1
m0=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
show() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["results"][0]; f=r.get("finding") or {}; print("  verdict", d["verdict"], "|", " ".join(s["name"] + ":" + s["status"] for s in r["stages"]), "|", f.get("code"), "|", (f.get("cause") or "")[:160])' "$1" 2>&1 | tee -a $S; }
for i in 1 2 3 4 5; do
  curl -s -o $W/mute-$i.json -w "mute probe $i: HTTP %{http_code} in %{time_total} s\n" "localhost:18131/probe?target=127.0.0.1:18132&direction=push&timeout=3s" | tee -a $S
  show $W/mute-$i.json
done
curl -s -o $W/silent.json -w "silent TCP peer (accepts, never reads): HTTP %{http_code} in %{time_total} s\n" "localhost:18131/probe?target=127.0.0.1:18134&direction=push&timeout=3s" | tee -a $S
show $W/silent.json
curl -s localhost:18131/actuator/prometheus | grep -E "^imexprobe_(allocations_live|cuda_context_held|driver_calls_stuck)" | tee -a $S
sleep 3
echo "after the 2 s linger:" | tee -a $S
curl -s localhost:18131/actuator/prometheus | grep -E "^imexprobe_(allocations_live|cuda_context_held)" | tee -a $S
curl -s -o $W/good.json -w "then a good peer: HTTP %{http_code} in %{time_total} s\n" "localhost:18131/probe?target=127.0.0.1:18133&direction=push&timeout=3s" | tee -a $S
show $W/good.json
sleep 3
echo "GPU memory.used before the probes $m0 MiB, 3 s after the last $(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1) MiB; compute apps: $(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c .)" | tee -a $S
kill $MUTE $SILENT; for p in $(pgrep -f "imexprobe.jar serve"); do tr '\0' ' ' < /proc/$p/environ | grep -q "IMEXPROBE_NODE_NAME=mute-" && kill $p; done; sleep 2
grep -cE "SIGSEGV|hs_err|OutOfMemory| ERROR " $W/mute-agent-a.log | sed 's/^/exporter log errors: /' | tee -a $S
cp $S $OUT/call2-summary.txt
echo "===== stuck" | tee -a $S; OUT=$W/stuck timeout 150 bash gpu/stuck.sh > $W/stuck.out 2>&1; echo "exit $?" | tee -a $S; cat $W/stuck.out | cut -c1-400 | tee -a $S
cp $S $OUT/call2-summary.txt
echo "===== context-lifecycle" | tee -a $S; OUT=$W/ctx timeout 200 bash gpu/context-lifecycle.sh > $W/ctx.out 2>&1; echo "exit $?" | tee -a $S; cat $W/ctx/contexts.txt 2>/dev/null | tee -a $S
cp $S $OUT/call2-summary.txt
echo "===== hostile N=2000" | tee -a $S; OUT=$W/hostile N=2000 timeout 150 bash gpu/hostile.sh > $W/hostile.out 2>&1; echo "exit $?" | tee -a $S; tail -14 $W/hostile.out | cut -c1-300 | tee -a $S
cp $S $OUT/call2-summary.txt
echo "===== safe-jobs" | tee -a $S; OUT=$W/safe timeout 90 bash gpu/safe-jobs.sh > $W/safe.out 2>&1; echo "exit $?" | tee -a $S; tail -8 $W/safe.out | tee -a $S
date -u | tee -a $S; nvidia-smi --query-gpu=memory.used --format=csv,noheader | tee -a $S
cp $S $OUT/call2-summary.txt
( cd $W && tar czf $OUT/call2-files.tgz --exclude='*.jfr' --exclude=driver_floor . )
ls -la $OUT
