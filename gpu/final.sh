#!/usr/bin/env bash
# The GPU runs of the mesh, the ladder and hostile handles, in one machine lease. From the repository root on the
# H200 after `bash gpu/bundle.sh` here:  OUT=/tmp/out bash gpu/final.sh [mesh] [ladder] [hostile]
# (all three when none is named). Each part creates the IMEX channels it needs and stops only its own agents.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
parts=${*:-mesh ladder hostile}
echo "=== $(date -u) driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader) parts: $parts"
MAJ=$(awk '$2=="nvidia-caps-imex-channels"{print $1}' /proc/devices)
mkdir -p /dev/nvidia-caps-imex-channels
[ -e /dev/nvidia-caps-imex-channels/channel0 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c "$MAJ" 0
[ -e /dev/nvidia-caps-imex-channels/channel1 ] || mknod -m 666 /dev/nvidia-caps-imex-channels/channel1 c "$MAJ" 1
for p in $parts; do
  case $p in
    mesh) echo "===== mesh"; bash gpu/mesh.sh ;;
    ladder) echo "===== ladder"; bash gpu/ladder.sh ;;
    hostile) echo "===== hostile handles"; if [ -f gpu/hostile.sh ]; then bash gpu/hostile.sh; else echo "no gpu/hostile.sh"; fi ;;
    *) echo "unknown part $p" ;;
  esac
done
