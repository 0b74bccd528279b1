#!/usr/bin/env bash
# One call on the GPU machine for the foundation: capabilities, the test suite on the GPU under both
# profiles, start-up cold/warm, transfers (ours and PyTorch's). Writes everything under $OUT.
set -u
cd build
nvidia-smi -L > "$OUT/smi.txt" 2>&1
./clt-info > "$OUT/info.txt" 2>&1
./clt-info --json > "$OUT/info.json" 2>&1
export CLT_DEVICE=nvidia CK_DEFAULT_TIMEOUT=600
for p in native gfx902; do
    CLT_DEVICE_PROFILE=$p CLT_CACHE_DIR=/tmp/clt-test-cache ./clt-tests > "$OUT/tests_$p.txt" 2>&1
    echo "tests $p rc=$?"; grep -E "^[0-9]+%|:F:|:E:" "$OUT/tests_$p.txt" | head -20
done
# Start-up: a fresh cache dir (cold: compiled from source) then the same dir again (warm: disk);
# NVIDIA's own JIT cache is off so "cold" really compiles.
export CUDA_CACHE_DISABLE=1
rm -rf /tmp/clt-bench-cache
for run in cold warm; do
    CLT_CACHE_DIR=/tmp/clt-bench-cache ./clt-bench --suite transfer --json "$OUT/bench_$run.jsonl" > "$OUT/bench_$run.md" 2>&1
done
CLT_CACHE_DIR=/tmp/clt-bench-cache ./clt-bench --suite transfer --profile gfx902 --json "$OUT/bench_gfx902.jsonl" > "$OUT/bench_gfx902.md" 2>&1
python3 ../bench/peers/torch_suite.py --suite transfer --device cuda --json "$OUT/torch_transfer.jsonl" > "$OUT/torch_transfer.md" 2>&1
cat "$OUT/bench_cold.md" "$OUT/bench_warm.md" "$OUT/bench_gfx902.md" | grep -E "^\|" ; cat "$OUT/torch_transfer.jsonl"
