#!/usr/bin/env bash
# Fetches NVIDIA's own cuda.h, cudaTypedefs.h and nvml.h from Debian's non-free archive (packages nvidia-cuda-dev
# and libnvidia-ml-dev), unpacking the .debs without installing anything, so the ABI check (AbiCheckTest) and
# the CUresult table check (CuResultTableTest) run on a machine without the CUDA toolkit.
# Usage: bash native/test/vendor-headers.sh [DEST]    (DEST defaults to target/vendor-cuda)
# Then: CUDA_HOME=DEST (DEST/include/cuda.h). nvml.h is kept only when it declares the v3 fabric-info struct the
# agent reads (nvmlGpuFabricInfo_v3_t); otherwise the script says so and the NVML half of the check is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=$(realpath -m "${1:-target/vendor-cuda}")
suite=${VENDOR_HEADERS_SUITE:-trixie}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/x"
echo "deb http://deb.debian.org/debian $suite non-free" > "$work/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o APT::Get::List-Cleanup=0
          -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" download -qq nvidia-cuda-dev libnvidia-ml-dev)
# Only the three headers, and tar stops once it has them: they come early in the 930 MB nvidia-cuda-dev, whose
# whole extraction (2.5 GB) took 24 s of the script's 39. dpkg-deb then dies of the closed pipe, by design.
# (Each package is asked only for its own headers: a name it lacks would make tar read all of it.)
headers() { # deb pattern...
    local deb=$1; shift
    dpkg-deb --fsys-tarfile "$deb" 2>/dev/null | tar -x -C "$work/x" --occurrence=1 --wildcards "$@" 2>/dev/null || true
}
headers "$work"/nvidia-cuda-dev_*.deb '*/include/cuda.h' '*/include/cudaTypedefs.h'
headers "$work"/libnvidia-ml-dev_*.deb '*/include/nvml.h'
rm -rf "$dest" && mkdir -p "$dest/include"
for h in cuda.h cudaTypedefs.h nvml.h; do
    f=$(find "$work/x" -name "$h" -type f | head -n 1)
    [ -n "$f" ] || { echo "vendor-headers: no $h in the $suite non-free packages" >&2; exit 1; }
    cp "$f" "$dest/include/"
done
version=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$dest/include/cuda.h")
echo "vendor-headers: cuda.h of CUDA_VERSION $version ($suite: $(ls "$work" | grep -o 'nvidia-cuda-dev_[^_]*' | head -n 1))"
if ! grep -q nvmlGpuFabricInfo_v3_t "$dest/include/nvml.h"; then
    rm "$dest/include/nvml.h"
    echo "vendor-headers: this nvml.h has no nvmlGpuFabricInfo_v3_t: the NVML offsets are not checked (see docs/gpu-validation.md)"
fi
echo "$dest"
