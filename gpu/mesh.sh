#!/usr/bin/env bash
# Two agents in the mesh on the one GPU for several intervals (2 s): the scrape, /v1/mesh and the matrix page.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; J=$(bash .gpu-bundle/unpack.sh); JAR=.gpu-bundle/imexprobe.jar
export IMEXPROBE_AUTH_TOKEN=gpu-validation-token-0123456789 IMEXPROBE_MESH_INTERVAL=2s NCCL_NVLS_ENABLE=0
export IMEXPROBE_PEERS_STATIC=localhost:18091,localhost:18092
for n in m1:18091 m2:18092; do
  IMEXPROBE_NODE_NAME=${n%%:*} SERVER_PORT=${n##*:} setsid $J -jar $JAR serve > "$OUT/mesh-${n%%:*}.log" 2>&1 &
  PIDS="${PIDS:-} $!"
done
for p in 18091 18092; do for i in $(seq 60); do curl -sf localhost:$p/actuator/health/readiness >/dev/null && break; sleep 0.5; done; done
sleep 12   # several 2 s intervals
echo "=== /v1/mesh?scope=domain after ~6 intervals"
curl -s "localhost:18091/v1/mesh?scope=domain" | python3 -c '
import json,sys; d=json.load(sys.stdin)
print("agents", d["agents"], "pairs", len(d["pairs"]), "mesh findings", [f["code"] for f in d["findings"]])
for p in d["pairs"]: print(" ", p["sourceNode"], p["sourceGpu"][:12], "->", p["targetNode"], p["targetGpu"][:12], p["state"], "age", p.get("ageSeconds"))'
echo "=== health"; curl -s localhost:18091/actuator/health/readiness; echo; curl -s localhost:18091/actuator/health | python3 -c 'import json,sys;print(json.load(sys.stdin)["components"]["mesh"])'
echo "=== scrape (imexprobe_ lines, buckets left out)"
curl -s localhost:18091/actuator/prometheus > "$OUT/mesh-scrape.txt"; grep -E "^imexprobe_" "$OUT/mesh-scrape.txt" | grep -v _bucket
curl -s localhost:18091/ > "$OUT/mesh-matrix.html"; grep -o '<td class="[a-z]*"' "$OUT/mesh-matrix.html" | sort | uniq -c
kill $PIDS 2>/dev/null; sleep 2   # only our own agents
