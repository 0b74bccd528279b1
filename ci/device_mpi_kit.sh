#!/bin/bash
# The MPI runs on the GPU machine (issue 21), which has no MPI: puts this machine's Debian Open MPI
# (mpirun, orted, libmpi, its plugins and PMIx, and the shared libraries they need beyond glibc)
# into .mpikit/ (git-ignored) with env.sh, relocated through OPAL_PREFIX. Plugins for networks
# (verbs, UCX, OFI, PSM) are left out: one machine needs shared memory (vader) and self only.
# Then, on the GPU machine, with .devkit/ and a CLT_WITH_MPI=ON build carried along:
#   source .devkit/env.sh; source .mpikit/env.sh; mpirun -np 2 build/clt-bench --suite dist
set -e
top="$(git rev-parse --show-toplevel)"
kit="$top/.mpikit"
L=/usr/lib/x86_64-linux-gnu
[ -d $L/openmpi ] || { echo "no Open MPI here: apt-get install libopenmpi-dev openmpi-bin" >&2; exit 1; }
rm -rf "$kit"
mkdir -p "$kit/usr/bin" "$kit/usr/lib/x86_64-linux-gnu" "$kit/usr/share"
cp -a $L/openmpi $L/pmix2 "$kit/usr/lib/x86_64-linux-gnu/"
rm -rf "$kit/usr/lib/x86_64-linux-gnu/openmpi/include"
cp -a /usr/share/openmpi "$kit/usr/share/"
cp -L /usr/bin/orterun /usr/bin/orted "$kit/usr/bin/"
ln -s orterun "$kit/usr/bin/mpirun"
find "$kit" -name '*.so' | while read -r f; do
    if ldd "$f" 2>/dev/null | grep -qE 'libucp|libuct|libucs|libfabric|libibverbs|libpsm|librdmacm|libnl-'; then
        rm -f "$f"
    fi
done
find "$kit" -type f \( -name '*.so*' -o -path '*/bin/*' \) -exec ldd {} \; 2>/dev/null |
    awk '/=> \//{print $3}' | sort -u | while read -r lib; do
    case "$lib" in */openmpi/* | */pmix2/*) continue ;; esac
    case "$(basename "$lib")" in libc.so* | libm.so* | libpthread* | libdl* | librt* | ld-linux* | libgcc_s* | libstdc++*) continue ;; esac
    cp -L "$lib" "$kit/usr/lib/x86_64-linux-gnu/"
done
cat > "$kit/env.sh" <<'EOS'
# Source on the GPU machine (bash), after .devkit/env.sh.
_k="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export OPAL_PREFIX="$_k/usr" PMIX_INSTALL_PREFIX="$_k/usr/lib/x86_64-linux-gnu/pmix2"
export PATH="$_k/usr/bin:$PATH"
export LD_LIBRARY_PATH="$_k/usr/lib/x86_64-linux-gnu/openmpi/lib:$_k/usr/lib/x86_64-linux-gnu/pmix2/lib:$_k/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_osc=sm,pt2pt,rdma OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PMIX_MCA_pcompress_base_silence_warning=1
unset _k
EOS
grep -qx '/.mpikit/' "$top/.git/info/exclude" 2>/dev/null || echo '/.mpikit/' >> "$top/.git/info/exclude"
echo "staged Open MPI into .mpikit/ ($(du -sh "$kit" | cut -f1))"
