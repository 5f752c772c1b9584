#!/usr/bin/env bash
# session 2026-12-07 v, call 2 (the bundle of the self-target change): a probe of an agent by itself, under three
# addresses, is refused with 400 before any driver call (no compute process, GPU memory unchanged), while the other
# agent of the GPU is probed; then gpu/start_rss.sh as it now is (200 probes of a peer agent, both directions); then
# the goals of issue 23 on this build (gpu/hotpath.sh, one pair alone, 1,000 probes per setting after 300).
set -u
W=/tmp/w-v2-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2 IMEXPROBE_AUTH_TOKEN=call2-token-0123456789abcdef
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; } | tee $OUT/call2-host.txt
S=$OUT/call2-self.txt; : > $S
for n in a b; do p=$([ $n = a ] && echo 18201 || echo 18202)
  IMEXPROBE_NODE_NAME=self-$n SERVER_PORT=$p IMEXPROBE_MESH_INTERVAL=1h setsid "$J" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Djava.io.tmpdir=/tmp -jar .gpu-bundle/imexprobe.jar serve > $W/agent-$n.log 2>&1 &
  echo $! >> $W/pids
done
for p in 18201 18202; do for i in $(seq 160); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.25; done; done
sleep 3  # past the 2 s context linger of anything the start did
mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits; }
apps() { nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l; }
echo "before: memory.used $(mem) MiB, compute apps $(apps)" | tee -a $S
IP=$(hostname -I | awk '{print $1}')
for t in 127.0.0.1:18201 localhost:18201 $IP:18201; do
  curl -s -o $W/self.json -w "self target $t: HTTP %{http_code} in %{time_total} s; " "localhost:18201/probe?target=$t&direction=both" | tee -a $S
  echo "compute apps right after $(apps)" | tee -a $S
  python3 -c "import json; d=json.load(open('$W/self.json')); print('  ', d.get('type'), '|', d.get('detail'))" | tee -a $S
done
curl -s "localhost:18201/actuator/prometheus" | grep -E "^imexprobe_cuda_context_creations_total|^imexprobe_allocations_live" | tee -a $S
curl -s -o $W/other.json -w "the other agent: HTTP %{http_code} in %{time_total} s; " "localhost:18201/probe?target=127.0.0.1:18202&direction=both" | tee -a $S
python3 -c "import json; d=json.load(open('$W/other.json')); print('verdict', d['verdict'], [r['verdict'] for r in d['results']])" | tee -a $S
kill $(cat $W/pids); sleep 3
echo "after: memory.used $(mem) MiB, compute apps $(apps)" | tee -a $S
echo "== start_rss.sh, ROUNDS=3 PROBES=200" | tee -a $S
ROUNDS=3 PROBES=200 timeout 200 bash gpu/start_rss.sh .gpu-bundle/imexprobe.jar 2>&1 | tee -a $S
echo "== goals" | tee -a $S
OUT=$W/goals COUNT=1000 OLD_CLASSES=/none timeout 230 bash gpu/hotpath.sh > $W/goals.out 2>&1; echo "goals exit $?"
cp $W/goals/hotpath.log $OUT/call2-goals.log 2>/dev/null
grep -E "Python peer|C driver floor|HTTP floor  |goal 1:|goal 1,|goal 2|^/probe push|VmRSS" $W/goals/hotpath.log | sed 's/, p90 [0-9.]* ms//' | cut -c1-170
nvidia-smi --query-gpu=memory.used --format=csv,noheader; date -u
