#!/usr/bin/env bash
# The whole test suite: builds (installing what is missing), then runs every ctest test on every OpenCL
# device present (POCL at least), each test under both device profiles (native and gfx902).
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
    if CLT_DEVICE="$d" ctest --output-on-failure --timeout 3000; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
done
echo "devices: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
