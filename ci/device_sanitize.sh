#!/usr/bin/env bash
# The sanitizer job on a GPU machine: the Check suite built with ASan + UBSan (as ci/sanitize.sh, with
# the sanitizer runtimes linked statically so the binary runs where no libasan is installed) run on
# the first NVIDIA device, the suites in parallel, each until a shared deadline. The NVIDIA driver maps
# memory where ASan's shadow gap would be (protect_shadow_gap=0); LSan stays on, with suppressions
# for the driver's own allocations only (tests/sanitize/lsan_nvidia.supp).
#   bash ci/device_sanitize.sh CLT_TESTS_BINARY OUTDIR [SECONDS] [JOBS]
# OUTDIR/sanitize.txt: one line per suite (exit status, Check's summary, any sanitizer report's first
# line); OUTDIR/sanitize_fail.txt: the tail of each failing suite's log. Exit 1 on any failure.
set -u
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin=$(realpath "${1:?usage: device_sanitize.sh CLT_TESTS OUTDIR [SECONDS] [JOBS]}")
out=${2:?usage: device_sanitize.sh CLT_TESTS OUTDIR [SECONDS] [JOBS]}
end=$(( $(date +%s) + ${3:-430} ))
jobs=${4:-12}
logs=$(mktemp -d)
export CLT_DEVICE=${CLT_DEVICE:-nvidia} CLT_DEVICE_PROFILE=native CLT_TUNING_FILE=off CK_DEFAULT_TIMEOUT=1800
export CLT_CACHE_DIR=${CLT_CACHE_DIR:-$logs/cache}
export ASAN_OPTIONS="protect_shadow_gap=0:new_delete_type_mismatch=0:detect_leaks=1:halt_on_error=1:exitcode=23:detect_stack_use_after_return=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=24"
export LSAN_OPTIONS="suppressions=$top/tests/sanitize/lsan_nvidia.supp:print_suppressions=0:exitcode=25"
run_suite() {
    local s=$1 left=$(( end - $(date +%s) )) rc
    if [ "$left" -lt 5 ]; then echo "$s not-run (deadline)"; return; fi
    CK_RUN_SUITE=$s timeout "$left" "$bin" > "$logs/$s.log" 2>&1
    rc=$?
    echo "$s rc=$rc $(grep -E '^[0-9]+%' "$logs/$s.log" | head -1) $(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$logs/$s.log")"
    if [ "$rc" -ne 0 ]; then { echo "== $s rc=$rc"; grep -E -A12 "ERROR: (Address|Leak)Sanitizer|runtime error:|:[EF]:" "$logs/$s.log" | head -60; } >> "$out/sanitize_fail.txt"; fi
}
export -f run_suite; export bin end logs out
mkdir -p "$out"; : > "$out/sanitize_fail.txt"
# Heaviest first, so the deadline cuts the short ones last.
heavy="gemm_tiled gemm gemm_math conv2d conv2d_backward conv2d_winograd conv2d_backward_winograd conv2d_backward_wgemm fft mlp pinn attention gpt cnn kernel_variants conv2d_math"
all=$(ls "$top"/tests/check_*.c "$top"/tests/*/check_*.c | sed 's|.*/check_||;s|\.c$||')
{ printf '%s\n' $heavy; printf '%s\n' $all | grep -vxF -f <(printf '%s\n' $heavy); } |
    xargs -P "$jobs" -I{} bash -c 'run_suite {}' | sort > "$out/sanitize.txt"
ran=$(grep -c "rc=" "$out/sanitize.txt"); ok=$(grep -c "rc=0 100%" "$out/sanitize.txt")
echo "device_sanitize: $ok of $ran suites clean, $(grep -c not-run "$out/sanitize.txt") not run" | tee -a "$out/sanitize.txt"
rm -rf "$logs/"*.log
[ "$ok" -eq "$ran" ] && ! grep -q not-run "$out/sanitize.txt"
