#!/usr/bin/env bash
# Regenerates native/src/pattern_kernel.h from pattern_kernel.cu (needs nvcc; the build does not: the header is
# committed). The PTX is lowered to ISA 7.0 / sm_70 (CUDA 11.0 drivers and later JIT it; it uses nothing newer),
# and checked by ptxas for sm_90 (the H200).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
nvcc -ptx -arch=compute_75 "$here/pattern_kernel.cu" -o "$tmp/k.ptx"
sed -e 's/^\.version [0-9.]*/.version 7.0/' -e 's/^\.target sm_[0-9]*/.target sm_70/' -e '/^\/\//d' "$tmp/k.ptx" > "$tmp/k70.ptx"
ptxas -arch=sm_90 "$tmp/k70.ptx" -o "$tmp/k.cubin"
{
  sed -n '1,/^\/\* PTX begin \*\//p' "$here/pattern_kernel.h"
  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$tmp/k70.ptx"
  sed -n '/^\/\* PTX end \*\//,$p' "$here/pattern_kernel.h"
} > "$tmp/h" && mv "$tmp/h" "$here/pattern_kernel.h"
