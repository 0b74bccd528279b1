#!/usr/bin/env bash
# The main job: builds (installing what is missing), then runs the seed benchmark on the best device
# (first GPU, else the CPU through POCL) and prints its table. Extra arguments go to clt-bench.
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$top/ci/setup.sh"
"$top/build/clt-bench" --suite seed "$@"
