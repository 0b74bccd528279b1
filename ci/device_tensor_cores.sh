#!/usr/bin/env bash
# Issue 18's pending device work in one call (fits a ~9 minute budget, BUDGET seconds): the TF32 1x1 convolution
# (mma.sync GEMM with M = 64 filters, the one conv row under 0.8x cuDNN) under the default tile and the
# CLT_GEMM_MMA shapes with mi 2 (32 x 64 warp tiles, never yet run on a GPU), profiler split; the Check test that
# forces those shapes (gemm_math/tensor_cores_f32) and the conv2d_math / gemm_math suites; then, with what is
# left, the conv and matmul_* rows beside PyTorch CUDA. Every step runs only while time is left; results under
# $OUT ($OUT/ab.txt, $OUT/tests.txt, $OUT/steps.txt, $OUT/compare.md). BIN: the build folder (default build).
cd "$(dirname "$0")/.."
export CLT_DEVICE=nvidia CLT_CACHE_DIR=${CLT_CACHE_DIR:-/tmp/clt-cache} CLT_TUNING_FILE=off CK_DEFAULT_TIMEOUT=600
r=$OUT; t0=$(date +%s); B=${BUDGET:-560}; bin=${BIN:-build}; b=$bin/clt-bench; P=bench/peers/torch_suite.py
step() { # cap, then the command: runs with min(cap, time left - 20)
    local cap=$1; shift; local l=$(( B - ($(date +%s) - t0) - 20 ))
    [ $l -lt 20 ] && { echo "skipped: $*" >> $r/steps.txt; return; }
    [ $cap -lt $l ] && l=$cap; timeout $l "$@"; echo "rc=$? $(( $(date +%s) - t0 ))s: $*" >> $r/steps.txt; }
suite() { # Check suite, case (empty: all of the suite's), cap
    (cd $bin && export CK_RUN_SUITE=$1 && { [ -z "$2" ] || export CK_RUN_CASE=$2; } && step $3 ./clt-tests > $r/t_$1$2.log 2>&1
     echo "$1 $2 $(grep -E '^[0-9]+%' $r/t_$1$2.log)"; grep -E ':F:|:E:' $r/t_$1$2.log | head -5) >> $r/tests.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $r/gpu.txt 2>&1
ab() { local tag=$1; shift; step 45 env "$@" $b --suite conv --case conv2d_tf32/n8c256 --split --json $r/ab_$tag.jsonl \
           > $r/ab_$tag.md 2>&1; echo "$tag: $(grep -E '^\| conv2d_tf32' $r/ab_$tag.md | head -1)" >> $r/ab.txt; }
ab default X=1                       # 64 x 128 tiles of 64 x 64 warp tiles (2 warps), 4 stages
ab mi2_wm2wn2s3 CLT_GEMM_MMA=2,2,3,4,2 # same tile, 4 warps of 32 x 64
ab mi2_wm2wn1s4 CLT_GEMM_MMA=2,1,4,4,2 # 64 x 64 tiles, 2 warps of 32 x 64
ab mi2_wm1wn2s4 CLT_GEMM_MMA=1,2,4,4,2 # 32 x 128 tiles, 2 warps
ab mi2_wm1wn1s4 CLT_GEMM_MMA=1,1,4,4,2 # 32 x 64 tiles, 1 warp
ab mi4_wm1wn1s4 CLT_GEMM_MMA=1,1,4,4,4 # 64 x 64 tiles, 1 warp of 64 x 64
suite gemm_math tensor_cores_f32 170
suite conv2d_math "" 100
suite gemm_math "" 100
step 120 $b --suite conv --json $r/conv.cltensor.jsonl > $r/conv.md 2>&1
step 80 python3 $P --suite conv --device cuda --json $r/conv.torch-cuda.jsonl > $r/torch_conv.log 2>&1
step 100 $b --suite gemm --case matmul_ --json $r/gemm_math.cltensor.jsonl > $r/gemm_math.md 2>&1
step 60 python3 $P --suite gemm --case matmul_ --device cuda --json $r/gemm_math.torch-cuda.jsonl > $r/torch_gemm.log 2>&1
ls $r/*.cltensor.jsonl > /dev/null 2>&1 && $b --compare $r/*.cltensor.jsonl $r/*.torch-cuda.jsonl > $r/compare.md 2>&1
echo "end $(( $(date +%s) - t0 ))s" >> $r/steps.txt
