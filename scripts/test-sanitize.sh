#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer.
#   scripts/test-sanitize.sh [ctest arguments...]
# Sets up like scripts/test.sh, configures build-asan/ (EMBER_SANITIZE=ON, optimised with
# debug info so the zoo models finish), builds and runs ctest. Any sanitizer report fails
# the test that triggered it (UBSan does not recover; ASan aborts). Leak checking is on.
# By default the benches are left out (label bench: they print figures, they test nothing);
# pass your own -L/-E/-R to choose. Takes about 2-3x the normal suite's time.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${ASAN_BUILD_DIR:-$root/build-asan}
export EMBER_CMAKE_ARGS="-DEMBER_SANITIZE=ON ${EMBER_CMAKE_ARGS:-}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/scripts/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$root/scripts/setup.sh"
cd "$BUILD_DIR"
args=("$@")
((${#args[@]})) || args=(-LE bench)
ctest --output-on-failure --timeout 3000 -j "$(nproc)" "${args[@]}"
