#!/usr/bin/env bash
# What NVML reaches from a process, against what CUDA enumerates, in three views of one node: as it is, with
# CUDA_VISIBLE_DEVICES naming no GPU of it, and with GPU 0's /dev/nvidiaN hidden as a container runtime hides it
# (a private mount namespace; ModifyDeviceFiles 0 so the driver does not re-create the node). Each view runs
# `imexprobe check --json` (its driver.nvmlGpus and gpus) and the raw NVML calls through ctypes.
# The importer's same-node diagnosis rests on this: NVML ignores CUDA_VISIBLE_DEVICES but not a hidden node.
#   J=<java 25> bash gpu/nvml-view.sh [JAR] [OUT]     (root: the hidden view needs unshare and mounts)
# Touches no GPU setting; check self-probes each GPU it sees (2 MiB, freed); every mount dies with its process.
set -uo pipefail
JAR=${1:-.gpu-bundle/imexprobe.jar}
OUT=${2:-/tmp/nvml-view}
J=${J:?set J to a Java 25 binary}
mkdir -p "$OUT"
log() { echo "=== $*"; }

NVML_PY='
import ctypes, json, sys
n = ctypes.CDLL("libnvidia-ml.so.1")
out = {"init": n.nvmlInit_v2()}
c = ctypes.c_uint(0)
out["getCount"] = n.nvmlDeviceGetCount_v2(ctypes.byref(c)); out["count"] = c.value
out["byIndex"] = []
for i in range(c.value):
    h = ctypes.c_void_p(); rc = n.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h))
    u = ctypes.create_string_buffer(96); urc = n.nvmlDeviceGetUUID(h, u, 96) if rc == 0 else None
    out["byIndex"].append({"index": i, "rc": rc, "uuid": u.value.decode() if urc == 0 else None})
for uuid in sys.argv[1:]:
    h = ctypes.c_void_p()
    out.setdefault("byUuid", {})[uuid] = n.nvmlDeviceGetHandleByUUID(uuid.encode(), ctypes.byref(h))
print(json.dumps(out))
'
summary() { # file: one line of what check saw
  python3 -c "import json,sys;d=json.load(open(sys.argv[1]));n=d.get('node',d);dr=n['driver'];print('  cuda gpus',[g['uuid'] for g in n['gpus']],'init',dr.get('initResult'),'nvmlGpus',dr.get('nvmlGpus'))" "$1" \
    || { echo "  (no JSON; stderr:)"; tail -5 "$1.stderr"; }
}

GPU0=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 | tr -d ' ')
BUS0=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0 | tr -d ' ' | tr A-F a-f)
NODE0=""
for g in /proc/driver/nvidia/gpus/*; do
  e=$(basename "$g" | tr A-F a-f)
  [ "${e: -7}" = "${BUS0: -7}" ] && NODE0=nvidia$(awk '/Device Minor/{print $3}' "$g/information")
done
log "GPU 0: $GPU0, device node /dev/${NODE0:-?}; GPUs on the node: $(nvidia-smi -L | wc -l)"

log "view 1: as it is"
$J -jar "$JAR" check --json > "$OUT/as-is.json" 2> "$OUT/as-is.json.stderr"; echo "  check exit=$?"
summary "$OUT/as-is.json"
echo "  raw NVML: $(python3 -c "$NVML_PY" "$GPU0")"

log "view 2: CUDA_VISIBLE_DEVICES names no GPU of this node"
CUDA_VISIBLE_DEVICES=GPU-ffffffff $J -jar "$JAR" check --json > "$OUT/cvd.json" 2> "$OUT/cvd.json.stderr"
echo "  check exit=$?"
summary "$OUT/cvd.json"
echo "  raw NVML: $(CUDA_VISIBLE_DEVICES=GPU-ffffffff python3 -c "$NVML_PY" "$GPU0")"

log "view 3: /dev/$NODE0 hidden (mount namespace, ModifyDeviceFiles 0)"
ISO="$OUT/isolate.sh"
python3 -c "import zipfile,sys; open(sys.argv[2],'wb').write(zipfile.ZipFile(sys.argv[1]).read('BOOT-INF/classes/dev/imexprobe/ladder/isolate.sh'))" "$JAR" "$ISO"
hidden() { # command...: run it with GPU 0's node hidden
  local stage; stage=$(mktemp -d /tmp/nvml-view-stage.XXXXXX)
  unshare --mount --propagation private -- /bin/sh -c "$(cat "$ISO")" isolate "$stage" \
    hide /dev 1 "$NODE0" param /proc/driver/nvidia/params ModifyDeviceFiles 0 -- "$@"
}
hidden ls /dev | grep -c "^nvidia[0-9]" | sed 's/^/  nvidiaN nodes in the view: /'
hidden $J -jar "$JAR" check --json > "$OUT/hidden.json" 2> "$OUT/hidden.json.stderr"; echo "  check exit=$?"
summary "$OUT/hidden.json"
echo "  raw NVML: $(hidden python3 -c "$NVML_PY" "$GPU0")"
echo "  nvidia-smi -L: $(hidden nvidia-smi -L 2>&1 | head -3 | tr '\n' ' ')"
log "mounts left: $(grep -c imexprobe-ladder /proc/self/mountinfo)"
