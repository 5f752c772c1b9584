#!/usr/bin/env bash
# Builds the C driver floor (bench/driver_floor.c with the shim's own loader) with gcc, never by Maven: the one
# build that bench/run.sh, gpu/hotpath.sh and DriverFloorIT use.
#   bash bench/build-floor.sh OUTPUT [EXTRA_GCC_FLAGS...]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/build-floor.sh OUTPUT [EXTRA_GCC_FLAGS...]" >&2; exit 64; }
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1; shift
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter "$@" -I"$root/native/include" \
  -I"$root/native/src" "$root/native/src/loader.c" "$root/bench/driver_floor.c" -o "$out" -ldl -lpthread
