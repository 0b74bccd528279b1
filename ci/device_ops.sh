#!/usr/bin/env bash
# One call on the GPU machine for the op families: the test suite on the GPU under both profiles,
# then clt-bench and the PyTorch CUDA peer side by side, joined into one table. Results under $OUT.
set -u
cd build
export CLT_DEVICE=nvidia CK_DEFAULT_TIMEOUT=600
for p in native gfx902; do
    CLT_DEVICE_PROFILE=$p CLT_CACHE_DIR=/tmp/clt-test-cache ./clt-tests > "$OUT/tests_$p.txt" 2>&1
    echo "tests $p rc=$?"; grep -E "^[0-9]+%|:F:|:E:" "$OUT/tests_$p.txt" | head -20
done
suites=${SUITES:-transfer,seed,micro}
./clt-bench --suite "$suites" --json "$OUT/clt.jsonl" > "$OUT/clt.md" 2>&1
python3 ../bench/peers/torch_suite.py --suite "$suites" --device cuda --json "$OUT/torch.jsonl" > "$OUT/torch.log" 2>&1
./clt-bench --compare "$OUT/clt.jsonl" "$OUT/torch.jsonl" > "$OUT/compare.md"
cat "$OUT/compare.md"
