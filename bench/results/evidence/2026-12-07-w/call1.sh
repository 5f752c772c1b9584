#!/usr/bin/env bash
# session 2026-12-07 w, call 1: (1) on the real driver, this build's view of a GPU's fabric capability (/v1/node's
# attributes and notProbed, the findings, gauges imexprobe_gpus_visible and imexprobe_gpus_fabric_capable, check's
# exit code) and the commands' one option parser (check --repeat=N; a repeated option is a usage error, exit 64);
# (2) session r's call3.sh as it is: the goals of issue 23, the guarantees to jobs and deadlines, the 72-GPU domains
# run with IMEXPROBE_MESH_SUBSET=16. Its files keep their call3-/call2- names in $OUT.
set -u
W=/tmp/w-w1-$$; rm -rf $W; mkdir -p $W
D=/dev/nvidia-caps-imex-channels; mkdir -p $D; MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices); [ -e $D/channel0 ] || mknod -m 666 $D/channel0 c $MAJ 0
export J NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 MALLOC_ARENA_MAX=2
F=$OUT/call1-fabric.txt; : > $F
{ date -u; cat .gpu-bundle/COMMIT; nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv,noheader; nproc; } | tee $OUT/call1-host.txt
"$J" -jar .gpu-bundle/imexprobe.jar check --json --repeat=200 > $W/check.json 2> $W/check.err; echo "check --json --repeat=200: exit $?" | tee -a $F
python3 - $W/check.json <<'PY' | tee -a $F
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["gpus"]:
    a = g["attributes"]
    print("  GPU", g["index"], g["name"], "fabric", a.get("fabric"), "virtualMemoryManagement", a.get("virtualMemoryManagement"), "notProbed", g.get("notProbed"))
print("  findings", [(f["code"], f["severity"]) for f in d["findings"]])
for r in d.get("repeat") or []:
    print("  repeat: GPU", r.get("gpu"), "runs", r.get("runs"), "passed", r.get("passed"), "liveAllocationsAfter", r.get("liveAllocationsAfter"))
PY
"$J" -jar .gpu-bundle/imexprobe.jar check --repeat 2 --repeat=3 > $W/twice.out 2> $W/twice.err; echo "check --repeat 2 --repeat=3: exit $?, stdout $(wc -c < $W/twice.out) bytes, stderr: $(head -1 $W/twice.err)" | tee -a $F
IMEXPROBE_NODE_NAME=fabric-a SERVER_PORT=18211 IMEXPROBE_MESH_INTERVAL=1h setsid "$J" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -Djava.io.tmpdir=/tmp -jar .gpu-bundle/imexprobe.jar serve > $W/agent.log 2>&1 & echo $! > $W/pid
for i in $(seq 160); do curl -sf localhost:18211/actuator/health/readiness >/dev/null && break; sleep 0.25; done
curl -s localhost:18211/v1/node | python3 -c "import json,sys; d=json.load(sys.stdin); print('  /v1/node:', [(g['index'], g['attributes'].get('fabric'), g.get('notProbed')) for g in d['gpus']], [f['code'] for f in d['findings'] if f['code'].endswith('_UNSUPPORTED')])" | tee -a $F
curl -s localhost:18211/actuator/prometheus | grep -E "^imexprobe_gpus_(visible|fabric_capable)" | sed 's/^/  /' | tee -a $F
kill $(cat $W/pid); sleep 2
echo "== session r's call3.sh"
bash bench/results/evidence/2026-12-06-r/call3.sh
