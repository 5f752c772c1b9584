#!/usr/bin/env bash
# The seed scenario on two GPUs of one node (docs/gpu-validation.md, "Seed scenario on two GPUs"): how the GPUs
# are linked, both GPUs' NVML fabric info, the isolation ladder on the pair (FABRIC and POSIX_FD), two agents
# each limited to its own GPU and sharing channel0 (by CUDA_VISIBLE_DEVICES alone, then also by a mount namespace
# that hides the other GPU's device node, as a container runtime does) probing both ways, and copy bandwidth
# through the imported mapping across the GPUs against a peer copy in one process. Run from the repository root
# on a machine with two GPUs, as root, after `bash gpu/bundle.sh`:
#   J=$(bash .gpu-bundle/unpack.sh) OUT=/tmp/out bash gpu/two-gpus.sh
# Never creates multicast objects; touches no GPU setting; every mount dies with its agent.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=${J:-$(bash .gpu-bundle/unpack.sh)}; JAR=.gpu-bundle/imexprobe.jar
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 CUDA_DEVICE_MAX_CONNECTIONS=1
export IMEXPROBE_AUTH_TOKEN=two-gpus-token-0123456789abcdef IMEXPROBE_MESH_INTERVAL=1h
PROBES=${PROBES:-50}
# What to run (all by default): the ladder, the copy bandwidth, and the agent setups, among
#   cvd   CUDA_VISIBLE_DEVICES only          ns    + the other GPU's /dev node and /proc entry hidden (a container)
#   dev   + only the other GPU's /dev node   proc  + only the other GPU's /proc/driver/nvidia/gpus entry
LADDER=${LADDER:-1}; COPY=${COPY:-1}; SETUPS=${SETUPS:-cvd ns}
log() { echo "=== $*"; }
mem() { nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits | tr '\n' ' '; }

log "machine"; date -u; uname -r; cat .gpu-bundle/COMMIT 2>/dev/null
nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,driver_version,memory.used,compute_mode,mig.mode.current --format=csv
n=$(nvidia-smi -L | wc -l); echo "GPUs: $n"
[ "$n" -ge 2 ] || { echo "two-gpus.sh needs two GPUs; this machine has $n"; exit 2; }
$J -version 2>&1 | head -1

log "how the GPUs are linked"
nvidia-smi topo -m
nvidia-smi topo -p2p rw
nvidia-smi nvlink -s
nvidia-smi -q | grep -B1 -A10 -i "^ *fabric"
grep -E "ModifyDeviceFiles|ImexChannelCount|CreateImexChannel0" /proc/driver/nvidia/params
for g in /proc/driver/nvidia/gpus/*/information; do echo "$g: $(grep -E 'Device Minor|Bus Location' "$g" | tr '\n' ' ')"; done
ls -la /dev/nvidia*

log "channel0 and channel1"
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
[ -n "$MAJ" ] || { echo "no nvidia-caps-imex-channels in /proc/devices"; exit 2; }
D=/dev/nvidia-caps-imex-channels; mkdir -p $D
for c in 0 1; do [ -e $D/channel$c ] || mknod -m 666 $D/channel$c c "$MAJ" $c; done
ls -la $D
echo "GPU memory used before (index, MiB): $(mem)"

log "check --json (both GPUs' attributes and NVML fabric info, a self-probe)"
$J -jar $JAR check --json > "$OUT/check.json" 2> "$OUT/check.stderr"; echo "exit=$?"
python3 - "$OUT/check.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for g in d['gpus']:
    f = g.get('fabric') or {}
    print(f"GPU {g['index']} {g['uuid']} {g['pciBusId']} attrs {g['attributes']}")
    print(f"   fabric {g.get('fabricResult')} state {f.get('stateName')} status {f.get('statusName')} clique {f.get('cliqueId')} "
          f"cluster {f.get('clusterUuid')} health {f.get('healthSummaryName')} {f.get('health')} domain {g.get('imexDomain')}")
print("findings", [x['code'] for x in d['findings']], "verdict", d.get('verdict'), "exit", d.get('exitCode'))
PY

if [ "$LADDER" = 1 ]; then
log "ladder --json (rungs 0-5 on GPUs 0 and 1, FABRIC and POSIX_FD)"
$J -jar $JAR ladder --json > "$OUT/ladder.json" 2> "$OUT/ladder.stderr"; echo "exit=$?"
python3 gpu/ladder_summary.py "$OUT/ladder.json"
tail -5 "$OUT/ladder.stderr"
fi

# Each GPU's UUID, /proc entry and device node, to give each agent exactly one.
declare -A UUID PROC NODE
while IFS=, read -r idx uuid bus; do
  idx=${idx// /}; uuid=${uuid// /}; bus=$(echo "${bus// /}" | tr A-F a-f)
  for g in /proc/driver/nvidia/gpus/*; do  # nvidia-smi writes 00000000:18:00.0, /proc 0000:18:00.0
    e=$(basename "$g" | tr A-F a-f)
    if [ "${e: -7}" = "${bus: -7}" ]; then
      PROC[$idx]=$(basename "$g"); NODE[$idx]=nvidia$(awk '/Device Minor/{print $3}' "$g/information")
    fi
  done
  UUID[$idx]=$uuid
done < <(nvidia-smi --query-gpu=index,uuid,pci.bus_id --format=csv,noheader)
for i in 0 1; do echo "GPU $i: ${UUID[$i]} /proc entry ${PROC[$i]:-?} node ${NODE[$i]:-?}"; done
ISO="$OUT/isolate.sh"
python3 -c "import zipfile,sys; open(sys.argv[2],'wb').write(zipfile.ZipFile(sys.argv[1]).read('BOOT-INF/classes/dev/imexprobe/ladder/isolate.sh'))" "$JAR" "$ISO"

PIDS=""
agent() { # name port gpu mode(cvd|ns|dev|proc)
  local name=$1 port=$2 gpu=$3 mode=$4 other=$((1 - $3)) ops=()
  local run=(env CUDA_VISIBLE_DEVICES=${UUID[$gpu]} IMEXPROBE_NODE_NAME=two-gpus SERVER_PORT=$port "$J" -jar "$JAR" serve)
  case $mode in
    ns) ops=(hide /dev 1 "${NODE[$other]}" hide /proc/driver/nvidia/gpus 1 "${PROC[$other]}"
             param /proc/driver/nvidia/params ModifyDeviceFiles 0) ;;
    dev) ops=(hide /dev 1 "${NODE[$other]}" param /proc/driver/nvidia/params ModifyDeviceFiles 0) ;;
    proc) ops=(hide /proc/driver/nvidia/gpus 1 "${PROC[$other]}") ;;
  esac
  if [ "${#ops[@]}" -gt 0 ]; then
    local stage; stage=$(mktemp -d /tmp/two-gpus-stage.XXXXXX)
    setsid unshare --mount --propagation private -- /bin/sh -c "$(cat "$ISO")" isolate "$stage" "${ops[@]}" \
      -- "${run[@]}" > "$OUT/agent-$name.log" 2>&1 &
  else
    setsid "${run[@]}" > "$OUT/agent-$name.log" 2>&1 &
  fi
  PIDS="$PIDS $!"
}
ready() { for i in $(seq 120); do curl -sf "localhost:$1/actuator/health/readiness" >/dev/null && return 0; sleep 0.5; done; echo "agent on $1 not ready"; return 1; }
probe_pair() { # label portA portB
  local label=$1 a=$2 b=$3
  for p in $a $b; do ready $p || { tail -20 "$OUT"/agent-*.log; return 1; }; done
  for p in $a $b; do
    curl -s "localhost:$p/v1/node" > "$OUT/node-$label-$p.json"
    python3 -c "import json,sys;d=json.load(open(sys.argv[1]));dn=d.get('deviceNodes') or {};print('agent',sys.argv[2],'sees',[(g['index'],g['uuid'],g['pciBusId']) for g in d['gpus']],'device nodes',[n['name'] for n in dn.get('nodes',[]) if n.get('exists')],'CUDA_VISIBLE_DEVICES',(d.get('visibleDevices') or {}).get('raw'),'findings',[f['code'] for f in d['findings']])" "$OUT/node-$label-$p.json" $p
  done
  for dir in "$a $b" "$b $a"; do
    set -- $dir
    log "$label: agent $1 -> agent $2, direction=both, write-back"
    curl -s "localhost:$1/probe?target=localhost:$2&direction=both" > "$OUT/probe-$label-$1-$2.json"
    python3 gpu/summary.py "$OUT/probe-$label-$1-$2.json"
  done
  log "$label: $PROBES probes each way (push and pull)"
  python3 - "$a" "$b" "$PROBES" "$OUT/probes-$label.jsonl" <<'PY'
import json, sys, urllib.request, collections
a, b, n, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
seen = collections.Counter()
with open(path, "w") as out:
    for src, dst in ((a, b), (b, a)):
        for _ in range(n):
            with urllib.request.urlopen(f"http://localhost:{src}/probe?target=localhost:{dst}&direction=both", timeout=60) as r:
                doc = json.load(r)
            out.write(json.dumps(doc) + "\n")
            for res in doc["results"]:
                failed = [s for s in res["stages"] if s["status"] not in ("ok", "skipped")]
                key = (f"{src}->{dst}", res["direction"], res["verdict"],
                       failed[0]["name"] + " " + str(failed[0].get("cuResultName")) if failed else "",
                       (res.get("finding") or {}).get("code", ""))
                seen[key] += 1
for k, v in sorted(seen.items()):
    print(f"  {k[0]} {k[1]:5} {k[2]:8} {k[3]:40} {k[4]:32} x{v}")
PY
  curl -s "localhost:$a/actuator/prometheus" | grep -E "^imexprobe_(probes_total|pair_up|pair_last_cu_result|stage_results_total)" | head -40
}
stop_agents() { for p in $PIDS; do kill -- -"$p" 2>/dev/null; done; sleep 2; PIDS=""; }

port=18100
for setup in $SETUPS; do
  case $setup in
    cvd) log "agents limited by CUDA_VISIBLE_DEVICES only (each sees one GPU; both device nodes present)" ;;
    ns) log "agents limited as a container runtime does: CUDA_VISIBLE_DEVICES + the other GPU's /dev node and /proc entry hidden" ;;
    dev) log "agents limited by CUDA_VISIBLE_DEVICES + only the other GPU's /dev node hidden (ModifyDeviceFiles 0)" ;;
    proc) log "agents limited by CUDA_VISIBLE_DEVICES + only the other GPU's /proc/driver/nvidia/gpus entry hidden" ;;
  esac
  agent ${setup}0 $port 0 $setup; agent ${setup}1 $((port + 1)) 1 $setup
  probe_pair $setup $port $((port + 1)); stop_agents
  echo "GPU memory used (index, MiB): $(mem)"
  port=$((port + 10))
done

for pair in $([ "$COPY" = 1 ] && echo 0,1 1,0); do
  log "copy bandwidth through the imported mapping, exporter,importer = GPU $pair, against a peer copy in one process"
  timeout 240 bash bench/run.sh --driver real --java "$J" --jar "$JAR" --bench-jar .gpu-bundle/imexprobe-bench.jar \
    --sections copy --copy-gpus $pair --copy-sizes "${COPY_SIZES:-256M,1G}" --out "$OUT/copy-${pair/,/-}.json" 2>&1 | tail -6
done

log "afterwards"
echo "GPU memory used after (index, MiB): $(mem)"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv
echo "two-gpus mounts left here: $(grep -c imexprobe-ladder /proc/self/mountinfo)"
rm -rf /tmp/two-gpus-stage.*
