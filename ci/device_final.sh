#!/usr/bin/env bash
# One call on the GPU machine (build/ and .devkit/ carried, see ../shared/device/README.md): every
# Check suite on the GPU (native profile; each suite capped so one slow build cannot eat the call),
# then ci/compare.sh (cltensor vs CLBlast vs PyTorch CUDA, joined table, chart, profiler split).
# Results in $OUT/results.tgz (the device tool returns few files, so they travel as one archive).
set -u
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
res=$(mktemp -d)
export CLT_DEVICE=nvidia CK_DEFAULT_TIMEOUT=600 CLT_CACHE_DIR=/tmp/clt-cache CLT_TUNING_FILE=off
cd "$top/build"
for s in $(ls "$top"/tests/check_*.c "$top"/tests/*/check_*.c | sed 's|.*/check_||;s|\.c$||'); do
    CK_RUN_SUITE=$s timeout "${SUITE_CAP:-150}" ./clt-tests > "$res/test_$s.log" 2>&1
    echo "$s rc=$? $(grep -E '^[0-9]+%' "$res/test_$s.log")"
    grep -E ":F:|:E:" "$res/test_$s.log" | head -3
done > "$res/tests.txt"
grep -v "rc=0 100%" "$res/tests.txt"; echo "suites passed: $(grep -c 'rc=0 100%' "$res/tests.txt") of $(grep -c rc= "$res/tests.txt")"
rm -f "$res"/test_*.log
CLT_SKIP_SETUP=1 SUITES="${SUITES:-all}" SPLIT_SUITES="${SPLIT_SUITES:-seed,micro,pinn}" bash "$top/ci/compare.sh" "$res/compare"
rm -f "$res/compare/trace.json"
tar -C "$res" -czf "$OUT/results.tgz" .
grep -c '^| [a-z]' "$res/compare/compare.md"
