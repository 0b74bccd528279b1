#!/usr/bin/env bash
# What an application sees of cltensor: installs build/ into a temporary prefix, checks the install
# (library with its SONAME, headers, tools, CMake package, pkg-config file), compiles every public
# header alone as C11 and as C++17 (-Wall -Wextra -pedantic -Werror), then builds and runs the
# examples of tests/examples three ways: find_package, pkg-config, and cltensor as a sub-project
# (FetchContent of this source tree). Prints "package_check summary: P passed, F failed" (counted
# by ci/test.sh) and exits non-zero when anything failed. Needs a configured and built build/.
set -uo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$top/build}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
export CLT_CACHE_DIR="$work/cache" CLT_TUNING_FILE=off
passed=0
failed=0
check() { # check NAME COMMAND...: runs it, log kept in $work/log, one line per check
    local name="$1"; shift
    if "$@" > "$work/log" 2>&1; then
        passed=$((passed + 1)); echo "package_check: ok   $name"
    else
        failed=$((failed + 1)); echo "package_check: FAIL $name"; tail -20 "$work/log" | sed 's/^/    /'
    fi
}
examples=(gemm_epilogue training_loop interop)

check "cmake --install" cmake --install "$build" --prefix "$prefix"
lib=$(find "$prefix" -name 'libcltensor.so.*.*' | head -1)
libdir=$(dirname "${lib:-$prefix/lib/x}")
check "shared library has SONAME libcltensor.so.0" sh -c "objdump -p '$lib' | grep -q 'SONAME *libcltensor.so.0\$'"
check "headers installed" test -f "$prefix/include/cltensor.h" -a -f "$prefix/include/cltensor_all.h"
check "tools installed" test -x "$prefix/bin/clt-info" -a -x "$prefix/bin/clt-bench" -a -x "$prefix/bin/clt-tune"
check "clt-info --version runs installed" sh -c "LD_LIBRARY_PATH='$libdir' '$prefix/bin/clt-info' --version | grep -q '^clt-info '"
check "CMake package files" test -f "$libdir/cmake/cltensor/cltensorConfig.cmake" -a -f "$libdir/cmake/cltensor/cltensorConfigVersion.cmake"
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
want_version=$(sed -n 's/^#define CLT_VERSION_STRING "\(.*\)"$/\1/p' "$top/include/cltensor.h")
check "pkg-config --modversion cltensor is $want_version" test "$(pkg-config --modversion cltensor 2>&1)" = "$want_version"

# Every public header alone, as C and as C++ (what an application's first #include meets).
for h in "$prefix"/include/cltensor*.h; do
    name=$(basename "$h")
    mpi=() # cltensor_dist.h includes <mpi.h>: its directory, as a system one (MPI's C++ bindings warn)
    [ "$name" = cltensor_dist.h ] && read -r -a mpi <<< "$(pkg-config --cflags ompi-c | sed 's/-I/-isystem /g')"
    printf '#include <%s>\nint clt_header_check_%s;\n' "$name" "${name%.h}" > "$work/one.c"
    check "$name alone, C11" gcc -std=c11 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$prefix/include" "${mpi[@]}" "$work/one.c"
    cp "$work/one.c" "$work/one.cpp"
    check "$name alone, C++17" g++ -std=c++17 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$prefix/include" "${mpi[@]}" "$work/one.cpp"
done

run_examples() { # run_examples WAY DIR [VAR=VALUE...]: CMake builds find the library by their RUNPATH
    local way="$1" dir="$2"; shift 2
    for e in "${examples[@]}"; do
        check "$way: $e runs" env "$@" "$dir/$e"
    done
}
check "find_package: configure" cmake -S "$top/tests/examples" -B "$work/fp" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
check "find_package: build" cmake --build "$work/fp" -j2
run_examples find_package "$work/fp"

mkdir -p "$work/pc"
for e in "${examples[@]}"; do
    # shellcheck disable=SC2046 # pkg-config's output is a list of flags
    check "pkg-config: $e builds" gcc -std=c11 -Wall -Wextra -Werror "$top/tests/examples/$e.c" -o "$work/pc/$e" $(pkg-config --cflags --libs cltensor) -lm
done
run_examples pkg-config "$work/pc" LD_LIBRARY_PATH="$libdir"

check "sub-project (FetchContent): configure" cmake -S "$top/tests/examples" -B "$work/sub" -DCLT_EXAMPLES_FROM=fetchcontent -DCLT_SOURCE_DIR="$top" -DCMAKE_BUILD_TYPE=Release
check "sub-project (FetchContent): build" nice cmake --build "$work/sub" -j2
run_examples sub-project "$work/sub"

echo "package_check summary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
