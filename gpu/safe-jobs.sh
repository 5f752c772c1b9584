#!/usr/bin/env bash
# Issue 17, compute modes and MIG on the H200: what nvidia-smi says about each GPU's compute mode and MIG mode,
# against what the agent reads through NVML (/v1/node gpus[].computeMode, migEnabled, notProbed, and the findings).
# Read-only: it changes no GPU setting (no nvidia-smi -c, -mig, -r), creates no channel and makes no probe; the one
# agent runs in observer mode, so it creates no context either.
#   J=$(bash .gpu-bundle/unpack.sh); OUT=/tmp/out J=$J bash gpu/safe-jobs.sh
# Writes $OUT/safe-jobs.txt (summary), $OUT/safe-jobs-nvidia-smi.csv, $OUT/safe-jobs-node.json, the agent's log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=${J:-$(bash .gpu-bundle/unpack.sh)}
JAR=${JAR:-.gpu-bundle/imexprobe.jar}
export NCCL_NVLS_ENABLE=0 CUDA_DEVICE_MAX_CONNECTIONS=1 IMEXPROBE_AUTH_TOKEN=safe-jobs-token-0123456789abcdef
S=$OUT/safe-jobs.txt; : > "$S"
say() { echo "$*" | tee -a "$S"; }
say "=== $(date -u) gpu/safe-jobs.sh: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
nvidia-smi --query-gpu=index,uuid,compute_mode,mig.mode.current,mig.mode.pending --format=csv \
  > "$OUT/safe-jobs-nvidia-smi.csv" 2>&1
say "nvidia-smi:"; sed 's/^/  /' "$OUT/safe-jobs-nvidia-smi.csv" | tee -a "$S"
nvidia-smi -q -d COMPUTE > "$OUT/safe-jobs-nvidia-smi-q-compute.txt" 2>&1
PORT=18095
IMEXPROBE_NODE_NAME=safe-jobs SERVER_PORT=$PORT IMEXPROBE_CHANNEL_MODE=observer IMEXPROBE_MESH_INTERVAL=100000h \
  setsid "$J" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "$JAR" serve > "$OUT/safe-jobs-agent.log" 2>&1 &
PID=$!
for i in $(seq 240); do curl -sf localhost:$PORT/actuator/health/readiness >/dev/null && break; sleep 0.25; done
curl -s "localhost:$PORT/v1/node?refresh=true" > "$OUT/safe-jobs-node.json"
say "compute processes while the agent is up (expected: none of it): $(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader | tr '\n' ';')"
kill $PID 2>/dev/null; sleep 1
python3 - "$OUT/safe-jobs-nvidia-smi.csv" "$OUT/safe-jobs-node.json" <<'PY' 2>&1 | tee -a "$S"
import csv, json, sys
smi = {r["uuid"].strip(): r for r in csv.DictReader(open(sys.argv[1]), skipinitialspace=True)}
node = json.load(open(sys.argv[2]))
names = {"Default": "DEFAULT", "Exclusive_Process": "EXCLUSIVE_PROCESS", "Prohibited": "PROHIBITED",
         "Exclusive_Thread": "EXCLUSIVE_THREAD"}
agree = True
for g in node.get("gpus", []):
    s = smi.get(g["uuid"], {})
    mode = names.get((s.get("compute_mode") or "").strip(), (s.get("compute_mode") or "?").strip())
    mig = (s.get("mig.mode.current") or "?").strip()
    mig_smi = {"Enabled": True, "Disabled": False}.get(mig, mig)  # "[N/A]" on GPUs without MIG
    same = mode == g.get("computeMode") and (mig_smi == g.get("migEnabled") or (mig_smi == "[N/A]" and g.get("migEnabled") is False))
    agree &= same
    print(f"GPU {g['index']} {g['uuid']}: nvidia-smi compute_mode={mode} mig={mig}; agent computeMode={g.get('computeMode')} "
          f"migEnabled={g.get('migEnabled')} notProbed={g.get('notProbed')} -> {'agree' if same else 'DIFFER'}")
codes = [f["code"] + "@" + str(f.get("evidence", {}).get("gpu")) for f in node.get("findings", [])
         if f["code"] in ("COMPUTE_MODE_EXCLUSIVE_PROCESS", "COMPUTE_MODE_PROHIBITED", "MIG_ENABLED")]
print(f"findings for compute mode / MIG: {codes or 'none'}")
print("nvidia-smi and the agent " + ("agree on every GPU" if agree and node.get("gpus") else "DO NOT agree (or no GPU seen)"))
PY
