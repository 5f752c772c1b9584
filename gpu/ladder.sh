#!/usr/bin/env bash
# The isolation ladder on the H200 machine (issue 6): rungs 0, 1 and the channel rungs 5a/5b for real. With one
# GPU, rungs 2-4 are skipped ("needs a second GPU"); they belong to the two-GPU run. Run from the repository root
# after `bash gpu/bundle.sh` here:
#   bash gpu/ladder.sh      (writes its evidence under $OUT, default /tmp/out: ladder.txt, ladder.json)
# Needs root: it creates IMEX channel nodes 0 and 1 (as gpu/validate-foundation.sh does), and the channel rungs
# give each worker its own view of /dev/nvidia-caps-imex-channels in a mount namespace (unshare, tmpfs).
# Never creates multicast objects; touches no GPU setting; every mount dies with its worker process.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
J=$(bash .gpu-bundle/unpack.sh); JAR=.gpu-bundle/imexprobe.jar
export NCCL_NVLS_ENABLE=0
log() { echo "=== $*"; }
mem() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }

log "machine"; date -u; uname -r
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.used --format=csv
$J -version 2>&1 | head -1; echo "uid $(id -u)"
if unshare --mount true 2>/dev/null; then echo "mount namespaces: yes"; else echo "mount namespaces: NO (rungs 4, 5a, 5b will be skipped)"; fi
ls /proc/driver/nvidia/gpus; grep -E "ModifyDeviceFiles|ImexChannelCount|CreateImexChannel0" /proc/driver/nvidia/params
for g in /proc/driver/nvidia/gpus/*/information; do grep -H "Device Minor" "$g"; done
ls -la /dev/nvidia*

log "create channel0 and channel1"
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
if [ -z "$MAJ" ]; then echo "no nvidia-caps-imex-channels in /proc/devices: this driver has no IMEX channels"; exit 2; fi
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
[ -e /dev/nvidia-caps-imex-channels/channel1 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel1 c "$MAJ" 1
ls -la /dev/nvidia-caps-imex-channels
echo "GPU memory used before: $(mem) MiB"

log "ladder (table; stderr shows the ladder's own log)"
$J -jar $JAR ladder 2>"$OUT/ladder.stderr" | tee "$OUT/ladder.txt"; echo "exit=${PIPESTATUS[0]}"
cat "$OUT/ladder.stderr"

log "ladder --json"
$J -jar $JAR ladder --json > "$OUT/ladder.json" 2>>"$OUT/ladder.stderr"; echo "exit=$?"
python3 gpu/ladder_summary.py "$OUT/ladder.json"

log "afterwards"
echo "GPU memory used after: $(mem) MiB"
echo "ladder mounts left in this namespace: $(grep -c imexprobe-ladder /proc/self/mountinfo)"
ls -d /tmp/imexprobe-ladder-* 2>/dev/null || echo "no ladder working folders left"
