#!/usr/bin/env bash
# Set everything up on this machine, build, and run every test (ctest).
# Extra arguments go to ctest (e.g. scripts/test.sh -R isa).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
EMBER_BUILD_TARGETS= "$root/scripts/setup.sh" # everything, tests included
cd "$build"
ctest --output-on-failure --timeout 1500 -j "$(nproc)" "$@"
