#!/usr/bin/env bash
# One GPU-machine call for the fused MLP (issue 19): the mlp and pinn Check suites on the GPU, the
# pinn suite on the fused path (default) and the per-layer path (cltensor-layers), PyTorch's best
# rows (whole step in one CUDA graph; torch.compile + CUDA graph; EAGER=1 adds eager), the profiler
# split of the fused step, and SWEEP=1 the fused kernels' knobs (CLT_MLP_GROUPS, CLT_MLP_PPI).
# Needs build/ and .devkit/ carried (../shared/device/README.md). Everything lands in $OUT/mlp.tgz.
cd "$(dirname "$0")/../.."
source .devkit/env.sh
export CLT_DEVICE=nvidia CLT_CACHE_DIR=/tmp/clt-cache CLT_TUNING_FILE=off CK_DEFAULT_TIMEOUT=600
r=$OUT/mlp; mkdir -p $r; b=build/clt-bench; t=bench/peers/torch_suite.py
(cd build && CK_RUN_SUITE=mlp timeout 240 ./clt-tests; CK_RUN_SUITE=pinn timeout 60 ./clt-tests) > $r/tests.log 2>&1
build/clt-info > $r/info.txt 2>&1
timeout 120 $b --suite pinn --json $r/fused.jsonl > $r/fused.md 2>&1
timeout 90 $b --suite pinn --pinn-path layers --json $r/layers.jsonl > $r/layers.md 2>&1
timeout 60 $b --suite pinn --case pinn_train_step --split > $r/split.md 2>&1
timeout 150 python3 $t --suite pinn --device cuda --mode graph --json $r/torch_graph.jsonl > $r/torch_graph.log 2>&1
timeout 240 python3 $t --suite pinn --device cuda --mode compile --json $r/torch_compile.jsonl > $r/torch_compile.log 2>&1
[ "${EAGER:-0}" = 1 ] && timeout 200 python3 $t --suite pinn --device cuda --json $r/torch_eager.jsonl > /dev/null 2>&1
$b --compare $r/fused.jsonl $r/layers.jsonl $r/torch_*.jsonl > $r/compare.md 2>&1
if [ "${SWEEP:-0}" = 1 ]; then
    for p in 1 2 4 8 16; do echo "## CLT_MLP_PPI=$p"; CLT_MLP_PPI=$p timeout 60 $b --suite pinn --case pinn_ 2>&1 | grep "^| pinn"; done
    for g in 66 132 264 528; do echo "## CLT_MLP_GROUPS=$g"; CLT_MLP_GROUPS=$g timeout 30 $b --suite pinn --case /10000 2>&1 | grep "^| pinn"; done
fi > $r/sweep.md
tar -C $OUT -czf $OUT/mlp.tgz mlp && rm -rf $r
