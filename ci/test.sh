#!/usr/bin/env bash
# The whole test suite: builds (installing what is missing), then runs every ctest test on every OpenCL
# device present (POCL at least), each test under both device profiles (native and gfx902); then
# ci/package_check.sh (install, headers alone, the examples built three ways) and the sanitizer job
# (ci/sanitize.sh), counted in the summary.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$top/ci/setup.sh"
cd "$top/build"
devices=$(./clt-info --list | awk '{print $1}')
if [ -z "$devices" ]; then
    echo "ci/test: no OpenCL device found" >&2
    exit 1
fi
passed=0
failed=0
for d in $devices; do
    echo "=== device $(./clt-info --list | awk -v d="$d" '$1 == d')"
    log=$(mktemp)
    CLT_DEVICE="$d" ctest --output-on-failure --timeout 3000 2>&1 | tee "$log" || true
    # "100% tests passed, 0 tests failed out of 3"
    summary=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -1)
    rm -f "$log"
    if [ -z "$summary" ]; then
        echo "ci/test: ctest printed no summary on device $d" >&2
        failed=$((failed + 1))
        continue
    fi
    f=$(echo "$summary" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
    n=$(echo "$summary" | sed -E 's/.* failed out of ([0-9]+).*/\1/')
    passed=$((passed + n - f))
    failed=$((failed + f))
done
log=$(mktemp)
bash "$top/ci/package_check.sh" "$top/build" 2>&1 | tee "$log" || true
summary=$(grep -E "^package_check summary: [0-9]+ passed, [0-9]+ failed" "$log" | tail -1 || true)
rm -f "$log"
if [ -z "$summary" ]; then
    echo "ci/test: ci/package_check.sh printed no summary" >&2
    failed=$((failed + 1))
else
    passed=$((passed + $(echo "$summary" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$summary" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
fi
# The sanitizer job (ASan + UBSan + LSan over the Check suite on POCL, its own build-asan/): one
# more test in the summary.
echo "=== sanitizer job (ci/sanitize.sh)"
if bash "$top/ci/sanitize.sh"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi
echo "ctest tests on every device, each under both profiles, the package checks and the sanitizer job:"
echo "summary: $passed passed, $failed failed (ci/test.sh took $SECONDS s)"
[ "$failed" -eq 0 ]
