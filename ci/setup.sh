#!/usr/bin/env bash
# Installs what cltensor needs (Debian 12, as root) if anything is missing, then configures and builds
# into build/. Sourced by ci/test.sh and ci/bench.sh; safe to run again.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
packages=(build-essential cmake pkg-config ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
          libclblast-dev libclfft-dev libvkfft-dev check libsubunit-dev clinfo libcjson-dev doxygen
          clang-15 lld-15 rocm-device-libs  # these three: the AMD kernel ISA check (tests/isa)
          libopenmpi-dev openmpi-bin)        # the MPI layer and its tests (CLT_WITH_MPI)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "ci/setup: installing ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        echo "ci/setup: run as root (apt-get install is needed)" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Warnings are errors in CI (CLT_WERROR defaults to OFF for packagers on newer compilers).
cmake -S "$top" -B "$top/build" -DCMAKE_BUILD_TYPE=Release -DCLT_WERROR=ON -DCLT_WITH_MPI=ON >/dev/null
cmake --build "$top/build" -j"$(nproc)"
