#!/usr/bin/env bash
# Builds the C driver floor (bench/driver_floor.c with the shim's own loader) with gcc, never by Maven: the one
# build that bench/run.sh, gpu/hotpath.sh and DriverFloorIT use. An OUTPUT ending in .so is the same floor as a JNI
# library for dev.imexprobe.bench.FloorInJvm (bench/floor_jni.c; JAVA_HOME names the JDK whose headers it takes).
#   bash bench/build-floor.sh OUTPUT [EXTRA_GCC_FLAGS...]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/build-floor.sh OUTPUT [EXTRA_GCC_FLAGS...]" >&2; exit 64; }
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1; shift
jni=()
if [[ $out == *.so ]]; then
  [ -f "${JAVA_HOME:-}/include/jni.h" ] || { echo "bench/build-floor.sh: no jni.h under JAVA_HOME=${JAVA_HOME:-}" >&2; exit 2; }
  jni=(-shared -fPIC -Dmain=imexprobe_floor_main -I"$JAVA_HOME/include" -I"$JAVA_HOME/include/linux"
       "$root/bench/floor_jni.c")
fi
gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter "$@" -I"$root/native/include" \
  -I"$root/native/src" "${jni[@]}" "$root/native/src/loader.c" "$root/bench/driver_floor.c" -o "$out" -ldl -lpthread
