#!/usr/bin/env bash
# One call on the GPU machine after a round of op work: tests (native first, gfx902 if time allows),
# the seed/micro/gemm suites with our GEMM and with CLBlast, and the PyTorch peer, joined in one table.
# Each step has its own time cap so one slow step cannot eat the call. Results under $OUT.
set -u
cd build
export CLT_DEVICE=nvidia CK_DEFAULT_TIMEOUT=600 CLT_CACHE_DIR=/tmp/clt-cache
timeout 300 ./clt-tests > "$OUT/tests_native.txt" 2>&1; echo "tests native rc=$?"
grep -E "^[0-9]+%|:F:|:E:" "$OUT/tests_native.txt" | head -20
timeout 110 ./clt-bench --suite transfer,seed,micro,gemm --impl tiled --json "$OUT/clt_tiled.jsonl" > "$OUT/clt_tiled.md" 2>&1
timeout 50 ./clt-bench --suite gemm --impl clblast --json "$OUT/clt_clblast.jsonl" > "$OUT/clt_clblast.md" 2>&1
timeout 60 python3 ../bench/peers/torch_suite.py --suite seed,micro,gemm --device cuda --json "$OUT/torch.jsonl" > "$OUT/torch.log" 2>&1
./clt-bench --compare "$OUT/clt_tiled.jsonl" "$OUT/clt_clblast.jsonl" "$OUT/torch.jsonl" > "$OUT/compare.md"
cat "$OUT/compare.md"
CLT_DEVICE_PROFILE=gfx902 timeout 240 ./clt-tests > "$OUT/tests_gfx902.txt" 2>&1; echo "tests gfx902 rc=$?"
grep -E "^[0-9]+%|:F:|:E:" "$OUT/tests_gfx902.txt" | head -20
