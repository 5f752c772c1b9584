#!/usr/bin/env bash
# GPU validation for the foundation and the agent probe (issues: check, agents probing each other).
# Run on the H200 machine from the repository root after `bash gpu/bundle.sh` here:
#   bash gpu/validate-foundation.sh   (writes its evidence under $OUT, default /tmp/out)
# Never creates multicast objects; touches no GPU setting. Creates IMEX channel nodes 0 and 1 (as root).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=$(bash .gpu-bundle/unpack.sh); JAR=.gpu-bundle/imexprobe.jar
export NCCL_NVLS_ENABLE=0
log() { echo "=== $*"; }
mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
log "machine"; date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv
ldd --version | head -1; $J -version 2>&1 | head -1
grep -E "ImexChannelCount|CreateImexChannel0" /proc/driver/nvidia/params; grep imex /proc/devices
log "abi check against the real headers"
ls /usr/local/cuda/include/nvml.h 2>/dev/null && make -s -C native abi-check OUT=/tmp/abi NVML_INCLUDE=/usr/local/cuda/include 2>&1 | grep -vE "^ok " | tail -5
log "check without a channel"; ls -la /dev/nvidia-caps-imex-channels 2>&1
$J -jar $JAR check; echo "exit=$?"
$J -jar $JAR check --json > "$OUT/check-nochannel.json"; echo "exit=$?"
log "create channel0 and channel1"
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
[ -e /dev/nvidia-caps-imex-channels/channel1 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel1 c "$MAJ" 1
ls -la /dev/nvidia-caps-imex-channels
$J -jar $JAR check; echo "exit=$?"
log "1000 self-probes in one process"; echo "GPU memory used before: $(mem) MiB"
$J -jar $JAR check --json --repeat 1000 > "$OUT/check-repeat1000.json"; echo "exit=$?"
echo "GPU memory used after: $(mem) MiB"
python3 -c "import json;d=json.load(open('$OUT/check-repeat1000.json'));print(json.dumps(d['repeat'],indent=1))"
bash gpu/agents.sh
