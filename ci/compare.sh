#!/usr/bin/env bash
# One command for the full comparison on the best device (first GPU, else the CPU through POCL):
# cltensor (automatic dispatch) on every suite, our kernels and CLBlast forced on the GEMM and conv
# cases, PyTorch on the same device (CUDA on a GPU machine, CPU otherwise), one joined table
# (compare.md) with the fastest per case and a chart (compare.png), and the profiler's split
# (split.md: kernel / transfer / host / idle per op, from a separate run because recording every
# command costs time of its own).
#
#   bash ci/compare.sh [OUTDIR]            (default: build/compare)
#
# Environment: SUITES (default all), SPLIT_SUITES (the profiled run; default SUITES), TORCH_PYTHON (a python with torch; else python3 if it has torch,
# else a venv in ~/.cache/cltensor-torch-venv made with pip — a peer that cannot be installed is
# skipped with a message, never faked), CLT_SKIP_SETUP=1 (use the existing build/ as it is).
set -uo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$top/build/compare}"
suites="${SUITES:-all}"
mkdir -p "$out"
if [ "${CLT_SKIP_SETUP:-0}" != 1 ]; then
    bash "$top/ci/setup.sh" || exit 1
fi
bench="$top/build/clt-bench"
step() { echo "== $*" >&2; }

step "cltensor, automatic dispatch: $suites"
"$bench" --suite "$suites" --json "$out/cltensor.jsonl" > "$out/cltensor.md" 2> "$out/cltensor.log"
step "cltensor, our kernels and CLBlast forced (GEMM, conv)"
for impl in tiled clblast; do
    "$bench" --suite gemm,conv,seed --case matmul --impl "$impl" --json "$out/gemm_$impl.jsonl" \
        > /dev/null 2>> "$out/cltensor.log"
    "$bench" --suite conv,seed --case conv2d --impl "$impl" --json "$out/conv_$impl.jsonl" \
        > /dev/null 2>> "$out/cltensor.log"
    cat "$out/gemm_$impl.jsonl" "$out/conv_$impl.jsonl" > "$out/cltensor_$impl.jsonl"
    rm -f "$out/gemm_$impl.jsonl" "$out/conv_$impl.jsonl"
done
step "cltensor with the profiler: split columns"
"$bench" --suite "${SPLIT_SUITES:-$suites}" --split --trace "$out/trace.json" --json "$out/split.jsonl" \
    > "$out/split.md" 2>> "$out/cltensor.log"

# The PyTorch peer, on the device class clt-bench used.
has_torch() { "$1" -c "import torch" > /dev/null 2>&1; }
py="${TORCH_PYTHON:-}"
if [ -z "$py" ] && has_torch python3; then
    py=python3
fi
if [ -z "$py" ]; then
    venv="${HOME:-/tmp}/.cache/cltensor-torch-venv"
    if [ ! -x "$venv/bin/python" ] || ! has_torch "$venv/bin/python"; then
        step "installing PyTorch (CPU) into $venv"
        python3 -m venv "$venv" > /dev/null 2>&1 &&
            "$venv/bin/pip" install -q torch --index-url https://download.pytorch.org/whl/cpu \
                > "$out/torch_install.log" 2>&1
    fi
    has_torch "$venv/bin/python" && py="$venv/bin/python"
fi
peers=("$out/cltensor.jsonl" "$out/cltensor_tiled.jsonl" "$out/cltensor_clblast.jsonl")
if [ -n "$py" ]; then
    gpu=$("$top/build/clt-info" --list 2>/dev/null | grep -ci "gpu")
    dev=cpu
    if [ "$gpu" -gt 0 ] && "$py" -c "import torch,sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
        dev=cuda
    fi
    step "PyTorch ($dev)"
    "$py" "$top/bench/peers/torch_suite.py" --suite "$suites" --device "$dev" --threads "$(nproc)" \
        --json "$out/torch.jsonl" > "$out/torch.log" 2>&1 && peers+=("$out/torch.jsonl")
else
    echo "ci/compare: PyTorch is not available here (see $out/torch_install.log): peer skipped" >&2
fi

step "joined table and chart"
png=()
command -v gnuplot > /dev/null && png=(--png "$out/compare.png")
"$bench" "${png[@]}" --compare "${peers[@]}" > "$out/compare.md"
echo "$out/compare.md: $(grep -c '^| [a-z]' "$out/compare.md") rows; split: $out/split.md; trace: $out/trace.json" >&2
