#!/usr/bin/env bash
# The AMD kernel ISA check: every kernel variant an AMD profile's dispatch tables select (listed by
# clt-kernels from the real tables), compiled with clang's AMDGPU backend and ROCm's device-library
# bitcode for the real ISA, assembled and linked into a code object with ld.lld, with a resource
# report per kernel from the compiler's kernel-resource-usage remarks and the code object metadata:
# $ISA_OUT/<target>/report.txt for people, $ISA_OUT/<target>/resources.tsv for clt-info --resources
# (first line "#cltensor-isa-resources v1 <target>", then one tab-separated row per kernel: index,
# use, program, kernel, VGPRs, SGPRs, scratch bytes/lane, VGPR spills, SGPR spills, LDS bytes,
# occupancy in waves/SIMD, full build options).
#
#   tests/isa/amd_isa_check.sh CLT_KERNELS [TARGET...]     (default targets: gfx902 gfx90a gfx1030)
#
# Fails (exit 1) on: a missing toolchain (never skips: CI must run it), any compile or link error,
# any scratch or VGPR spill in a variant the profile selects (SGPR spills go to VGPR lanes; those
# that reach memory show as scratch), LDS above 64 KiB, a kernel whose
# work-group size the target cannot run (reqd_work_group_size above the 256 the profile plans
# with, or a launch size above the kernel's .max_flat_workgroup_size), and occupancy below the
# floor of its class on gfx902 (GEMM / convolution programs (conv2d_stem's 2 x 16 outputs an item: 66-75
# VGPRs; conv2d_stem_dw's 8 x 5: 103), the fused MLP and the micro-tiled
# attention kernels, whose items keep accumulators of a tile resident, and the one-launch FFTs
# (fft_local, fft_wide), whose items hold a butterfly of up to 17 complex values, 32 in fft_wide's
# 8192 (93 VGPRs at 85 = 5 x 17; fft_wide 4096: 81-85 with a generic layout, 8192: 121-122, whose
# 34 KiB of LDS leave one group a CU anyway), 2 waves per SIMD; the others 4).
# Compile-only variants (CPU-class kernels an AMD device never selects) must build and link; their
# resources are reported, not judged. Environment: ISA_OUT (work folder, default a temp dir kept
# on failure; the ctests use <build>/isa), ISA_JOBS (parallel compiles, default nproc), ISA_SCOPE (full | breadth, see below),
# ISA_KEEP (all | reports: see the end), CLANG / LLD / AMD_BITCODE overrides.
set -uo pipefail
kernels_tool=${1:?usage: amd_isa_check.sh CLT_KERNELS [TARGET...]}
shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(gfx902 gfx90a gfx1030)
clang=${CLANG:-clang-15}
lld=${LLD:-ld.lld-15}
bitcode=${AMD_BITCODE:-/usr/lib/x86_64-linux-gnu/amdgcn/bitcode}
jobs=${ISA_JOBS:-$(nproc)}
missing=""
command -v "$clang" >/dev/null || missing+=" $clang (Debian: clang-15)"
command -v "$lld" >/dev/null || missing+=" $lld (Debian: lld-15)"
[ -f "$bitcode/ocml.bc" ] || missing+=" $bitcode/ocml.bc (Debian: rocm-device-libs)"
if [ -n "$missing" ]; then
    echo "amd_isa_check: FAIL: toolchain missing:$missing (ci/setup.sh installs it)" >&2
    exit 1
fi
out=${ISA_OUT:-$(mktemp -d /tmp/clt-isa.XXXXXX)}
mkdir -p "$out"
export CLT_TUNING_FILE=off CLT_CACHE_DIR=off

# compile_one TARGET DIR INDEX OPTIONS: DIR/INDEX.{s,o,co,log}; DIR/INDEX.status "ok" or the failing step
compile_one() {
    local target=$1 dir=$2 i=$3 opts=$4 isa wave
    isa=${target#gfx}
    wave=on
    [ "$target" = gfx1030 ] && wave=off
    local libs=()
    for b in opencl ocml ockl "oclc_isa_version_$isa" "oclc_wavefrontsize64_$wave" oclc_daz_opt_off \
             oclc_finite_only_off oclc_unsafe_math_off oclc_correctly_rounded_sqrt_on oclc_abi_version_400; do
        libs+=(-Xclang -mlink-builtin-bitcode -Xclang "$bitcode/$b.bc")
    done
    # shellcheck disable=SC2086 # opts is the option string the program cache keys on, split as the driver does
    if ! "$clang" -x cl -target amdgcn-amd-amdhsa -mcpu="$target" -nogpulib \
            -Xclang -finclude-default-header "${libs[@]}" -O3 -Rpass-analysis=kernel-resource-usage \
            $opts -S "$dir/$i.cl" -o "$dir/$i.s" 2>"$dir/$i.log"; then
        echo compile >"$dir/$i.status"; return
    fi
    if ! "$clang" -target amdgcn-amd-amdhsa -mcpu="$target" -c "$dir/$i.s" -o "$dir/$i.o" 2>>"$dir/$i.log"; then
        echo assemble >"$dir/$i.status"; return
    fi
    if ! "$lld" -shared "$dir/$i.o" -o "$dir/$i.co" 2>>"$dir/$i.log"; then
        echo link >"$dir/$i.status"; return
    fi
    echo ok >"$dir/$i.status"
}
export -f compile_one
export clang lld bitcode

# report TARGET DIR: one row per kernel from the remarks (resources) and the metadata (work-group
# limits), joined by kernel name; then the verdict.
report() {
    local target=$1 dir=$2
    awk -F'\t' -v target="$target" -v dir="$dir" '
    function num(s) { sub(/.*: */, "", s); sub(/ .*/, "", s); return s + 0 }
    FNR == 1 { file++ }
    file == 1 { idx[NR] = $1; use[$1] = $2; prog[$1] = $3; lwg[$1] = $4; opts[$1] = $5; n = NR; next }
    END {
        fails = 0
        # the machine-readable table (clt-info --resources --profile <target> reads it)
        tsv = dir "/resources.tsv"
        printf "#cltensor-isa-resources v1 %s\n", target > tsv
        printf "#index\tuse\tprogram\tkernel\tvgpr\tsgpr\tscratch\tvgpr_spill\tsgpr_spill\tlds_bytes\toccupancy\toptions\n" > tsv
        printf "%-8s %4s %-12s %-22s %-34s %5s %5s %5s %7s %6s %6s %4s %4s %6s\n", "target", "#", "use", "program",
               "kernel", "VGPR", "AGPR", "SGPR", "scratch", "vspill", "sspill", "LDS", "occ", "maxWG"
        for (r = 1; r <= n; r++) {
            i = idx[r]
            st = ""
            if ((getline st < (dir "/" i ".status")) <= 0) st = "missing"
            close(dir "/" i ".status")
            if (st != "ok") {
                printf "FAIL %s #%d %s (%s): %s failed:\n", target, i, prog[i], use[i], st
                while ((getline line < (dir "/" i ".log")) > 0) if (line !~ /remark/) print "    " line
                close(dir "/" i ".log"); fails++; continue
            }
            # metadata: .max_flat_workgroup_size and .reqd_workgroup_size per kernel (fields of
            # one "  - " item, in any order)
            delete mwg; delete rqn; nm = ""; m = 0; rq = 1; in_reqd = 0
            while ((getline line < (dir "/" i ".s")) > 0) {
                if (line ~ /^  - / || line ~ /end_amdgpu_metadata/) {
                    if (nm != "") { mwg[nm] = m; rqn[nm] = rq }
                    nm = ""; m = 0; rq = 1; in_reqd = 0
                }
                if (in_reqd && line ~ /^      - [0-9]+$/) { rv = line; sub(/.*- */, "", rv); rq *= rv; continue }
                if (line ~ /^    \./) in_reqd = 0
                if (line ~ /^    \.max_flat_workgroup_size:/) m = num(line)
                if (line ~ /^    \.reqd_workgroup_size:/) in_reqd = 1
                if (line ~ /^    \.name:/) { nm = line; sub(/.*: */, "", nm) }
            }
            close(dir "/" i ".s")
            # remarks: kernels carry an LDS line, helper functions that stayed calls do not
            fn = ""; delete seen
            while ((getline line < (dir "/" i ".log")) > 0) {
                if (line !~ /remark:/) continue
                if (line ~ /Function Name:/) { fn = line; sub(/.*Function Name: */, "", fn); sub(/ .*/, "", fn); continue }
                if (line ~ / SGPRs: /) s[fn] = num(line)
                else if (line ~ / VGPRs: /) v[fn] = num(line)
                else if (line ~ / AGPRs: /) a[fn] = num(line)
                else if (line ~ /ScratchSize/) sc[fn] = num(line)
                else if (line ~ /Occupancy/) oc[fn] = num(line)
                else if (line ~ /SGPRs Spill/) ss[fn] = num(line)
                else if (line ~ /VGPRs Spill/) vs[fn] = num(line)
                else if (line ~ /LDS Size/) { lds[fn] = num(line); seen[fn] = 1; order[++nk] = fn }
            }
            close(dir "/" i ".log")
            p = prog[i]
            heavy = (p ~ /^(gemm_tiled|gemm_cpu|conv2d|conv2d_cpu|conv2d_stem|conv2d_stem_dw|conv2d_backward|conv2d_winograd|mlp_fused|attention_tiled|fft_local|fft_wide)$/)
            floor_occ = heavy ? 2 : 4
            for (k = 1; k <= nk; k++) {
                fn = order[k]
                if (!(fn in seen)) continue
                delete seen[fn]
                printf "%-8s %4d %-12s %-22s %-34s %5d %5d %5d %7d %6d %6d %4d %4d %6d\n", target, i, use[i], p, fn,
                       v[fn], a[fn], s[fn], sc[fn], vs[fn], ss[fn], lds[fn] / 1024, oc[fn], mwg[fn]
                printf "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", i, use[i], p, fn, v[fn], s[fn],
                       sc[fn], vs[fn], ss[fn], lds[fn], oc[fn], opts[i] > tsv
                why = ""
                if (lds[fn] > 65536) why = why " LDS " lds[fn] " B > 64 KiB;"
                if (rqn[fn] > 256) why = why " reqd_work_group_size " rqn[fn] " > 256;"
                if (lwg[i] > 0 && mwg[fn] > 0 && lwg[i] > mwg[fn] && rqn[fn] <= 1)
                    why = why " launched with " lwg[i] " items > max_flat_workgroup_size " mwg[fn] ";"
                if (use[i] == "selected") {
                    if (sc[fn] > 0) why = why " scratch " sc[fn] " B/lane;"
                    # SGPR spills land in VGPR lanes (v_writelane), not memory: scratch shows
                    # the ones that do not; VGPR spills always go to scratch
                    if (vs[fn] > 0) why = why " VGPR spills " vs[fn] ";"
                    if (target == "gfx902" && oc[fn] < floor_occ) why = why " occupancy " oc[fn] " < " floor_occ ";"
                }
                if (why != "") { printf "FAIL %s #%d %s %s:%s\n", target, i, p, fn, why; fails++ }
            }
            nk = 0
        }
        close(tsv)
        printf "%s: %d variants, %d failures\n", target, n, fails
        exit fails > 0
    }' "$dir/manifest.tsv" /dev/null
}

status=0
for target in "${targets[@]}"; do
    dir="$out/$target"
    rm -rf "$dir"
    mkdir -p "$dir"
    if ! "$kernels_tool" --list --profile "$target" --dump "$dir" >"$dir/manifest.tsv"; then
        echo "amd_isa_check: FAIL: clt-kernels --list --profile $target failed" >&2
        status=1
        continue
    fi
    # ISA_SCOPE=breadth (the default; CI's gfx90a and gfx1030 ctests): of the GEMM programs' fused-activation x
    # index-width product (7 x 2 builds of every tile config), 64-bit indices (more address
    # registers) with no activation and with GELU (erf), the heaviest epilogue; every other variant
    # in full. ISA_SCOPE=full (CI's gfx902 ctest) compiles the whole list.
    scope=${ISA_SCOPE:-breadth}
    if [ "$scope" = breadth ]; then
        awk -F'\t' '$3 !~ /^gemm(_tiled|_cpu)?$/ || ($5 ~ /-DIDX64=1/ && ($5 !~ /-DACT=/ || $5 ~ /-DACT=clt_act_gelu_erf/))' \
            "$dir/manifest.tsv" >"$dir/manifest.scope" && mv "$dir/manifest.scope" "$dir/manifest.tsv"
    fi
    start=$(date +%s%N)
    cut -f1,5 "$dir/manifest.tsv" | tr '\t' '\034' |
        xargs -d '\n' -P "$jobs" -I{} bash -c 'IFS=$'"'"'\034'"'"' read -r i o <<<"$1"; compile_one "$2" "$3" "$i" "$o"' _ {} "$target" "$dir"
    secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
    report "$target" "$dir" | tee "$dir/report.txt" || status=1
    echo "$target: compiled and linked $(wc -l <"$dir/manifest.tsv") variants ($scope) in ${secs}s with $jobs jobs"
done
[ $status -eq 0 ] && [ -z "${ISA_OUT:-}" ] && rm -rf "$out"
# ISA_KEEP=reports (the ctests): a passing target keeps report.txt, resources.tsv and the manifest,
# not the per-variant sources, assembly and code objects (hundreds of MB)
if [ $status -eq 0 ] && [ -n "${ISA_OUT:-}" ] && [ "${ISA_KEEP:-all}" = reports ]; then
    for target in "${targets[@]}"; do
        find "$out/$target" -maxdepth 1 -type f ! -name report.txt ! -name resources.tsv ! -name manifest.tsv -delete
    done
fi
[ $status -ne 0 ] && echo "amd_isa_check: FAIL (work files in $out)" >&2
exit $status
