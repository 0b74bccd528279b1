#!/usr/bin/env bash
# A shorter device call than ci/device_final.sh (fits a ~9 minute budget): every benchmark suite but
# transfer (ours auto, CLBlast forced for the gemm suite and the matmul/conv cases, PyTorch CUDA), the
# A/B variants of AB_SPEC (default bench/ab/quick.spec), the joined table; the archive $OUT/final.tgz is
# written before the GPU test suites (GPU_SUITES) run with what is left of FINAL_BUDGET seconds
# (their summary: $OUT/tests.txt). COLD_RUN=1 adds a cold-compile run of matmul/8192 first.
cd "$(dirname "$0")/.."
export CLT_DEVICE=nvidia CLT_CACHE_DIR=/tmp/clt-cache CLT_TUNING_FILE=off CK_DEFAULT_TIMEOUT=600
r=$OUT/r; mkdir -p $r/ab
b=build/clt-bench
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > $r/gpu.txt 2>&1
if [ "${COLD_RUN:-0}" = 1 ]; then # the cold-compile yardstick (stop 9: 31.4 s)
    c0=$(date +%s.%N); CLT_CACHE_DIR=/tmp/clt-cold timeout 120 $b --suite gemm --case matmul/8192 --samples 5 > $r/cold.md 2>&1
    echo "cold matmul/8192 run (empty program cache): $(python3 -c "print(round($(date +%s.%N) - $c0, 1))") s" >> $r/times.txt
fi
timeout 220 $b --suite seed,micro,gemm,conv,pinn --json $r/cltensor.jsonl > $r/cltensor.md 2> $r/cltensor.log
echo "ours $(( $(date +%s) - t0 )) s" >> $r/times.txt
timeout 90 $b --suite gemm --impl clblast --json $r/gemm_clblast.jsonl > /dev/null 2>&1 # matmul and mlp (+ epilogue kernel)
timeout 30 $b --suite seed --case matmul --impl clblast --json $r/seed_clblast.jsonl > /dev/null 2>&1
timeout 60 $b --suite conv,seed --case conv2d --impl clblast --json $r/conv_clblast.jsonl > /dev/null 2>&1
cat $r/gemm_clblast.jsonl $r/seed_clblast.jsonl $r/conv_clblast.jsonl > $r/cltensor_clblast.jsonl
echo "clblast $(( $(date +%s) - t0 )) s" >> $r/times.txt
timeout 150 python3 bench/peers/torch_suite.py --suite seed,micro,gemm,conv,pinn --device cuda --json $r/torch.jsonl > $r/torch.log 2>&1
echo "torch $(( $(date +%s) - t0 )) s" >> $r/times.txt
left=$(( ${FINAL_BUDGET:-480} - ($(date +%s) - t0) - 30 )) # the A/B runs get what is left, minus the archive's margin
[ $left -gt 20 ] && timeout $left env AB_CAP=${AB_CAP:-60} bash bench/ab/ab.sh ${AB_SPEC:-bench/ab/quick.spec} $r/ab > $r/ab_run.txt 2>&1
rm -f $r/ab/*.trace.json
$b --compare $r/cltensor.jsonl $r/cltensor_clblast.jsonl $r/torch.jsonl > $r/compare.md 2>&1
echo "ab $(( $(date +%s) - t0 )) s" >> $r/times.txt
tar -C $OUT -czf $OUT/final.tgz r
for suite in ${GPU_SUITES:-conv2d_backward_wgemm conv2d_winograd conv2d_backward conv2d gemm_tiled}; do
  left=$(( ${FINAL_BUDGET:-480} - ($(date +%s) - t0) ))
  [ $left -gt 20 ] || break
  (cd build && CK_RUN_SUITE=$suite timeout $((left - 10)) ./clt-tests > /tmp/t_$suite.log 2>&1; echo "$suite rc=$? $(grep -E '^[0-9]+%' /tmp/t_$suite.log) $(grep -c 'random seed' /tmp/t_$suite.log) tests started"; grep -E ':F:|:E:' /tmp/t_$suite.log | head -3) >> $OUT/tests.txt
done
cat $r/times.txt
