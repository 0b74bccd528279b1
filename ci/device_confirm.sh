#!/usr/bin/env bash
# A short confirming device call after the full one (ci/device_quick.sh): the suites a late change
# touched (SUITES, default seed,micro,gemm), ours, CLBlast on the gemm suite and the seed matmuls,
# and PyTorch CUDA, one joined table in $OUT/confirm/compare.md. ROUNDS=N ROUND_CASE=seed:matmul/512 then
# times that one case N more times, ours and PyTorch alternating (a peer whose time swings from run to run
# is seen beside ours in every round, not once), into $OUT/confirm/rounds.md.
cd "$(dirname "$0")/.."
export CLT_DEVICE=nvidia CLT_CACHE_DIR=/tmp/clt-cache CLT_TUNING_FILE=off
r=$OUT/confirm; mkdir -p $r; b=build/clt-bench; s=${SUITES:-seed,micro,gemm}
timeout 200 $b --suite $s --json $r/cltensor.jsonl > $r/cltensor.md 2> $r/cltensor.log
timeout 90 $b --suite gemm --impl clblast --json $r/gemm_clblast.jsonl > /dev/null 2>&1
timeout 30 $b --suite seed --case matmul --impl clblast --json $r/seed_clblast.jsonl > /dev/null 2>&1
cat $r/gemm_clblast.jsonl $r/seed_clblast.jsonl > $r/cltensor_clblast.jsonl
timeout 150 python3 bench/peers/torch_suite.py --suite $s --device cuda --json $r/torch.jsonl > $r/torch.log 2>&1
$b --compare $r/cltensor.jsonl $r/cltensor_clblast.jsonl $r/torch.jsonl > $r/compare.md 2>&1
rc=${ROUND_CASE:-seed:matmul/512}; rs=${rc%%:*}; rcase=${rc#*:}
for i in $(seq 1 "${ROUNDS:-0}"); do
    timeout 30 $b --suite $rs --case $rcase --samples 9 --json $r/round$i.jsonl > /dev/null 2>&1
    timeout 60 python3 bench/peers/torch_suite.py --suite $rs --case $rcase --samples 9 --device cuda \
        --json $r/round${i}_torch.jsonl > /dev/null 2>&1
    echo "## round $i"; $b --compare $r/round$i.jsonl $r/round${i}_torch.jsonl 2>&1 | grep -v startup
done > $r/rounds.md
tar -C $OUT -czf $OUT/confirm.tgz confirm
