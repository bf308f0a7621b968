#!/usr/bin/env bash
# Set everything up on this machine, build, and run every test (ctest).
# Extra arguments go to ctest (e.g. scripts/test.sh -R isa).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# Everything, tests included, and the rtl device with every shipped description (-U resets
# EMBER_RTL_MODELS to its default, rtl/CMakeLists.txt's list; scripts/demo.sh's holds ember-v1).
EMBER_BUILD_TARGETS= EMBER_CMAKE_ARGS="-UEMBER_RTL_MODELS ${EMBER_CMAKE_ARGS:-}" \
  "$root/scripts/setup.sh"
cd "$build"
ctest --output-on-failure --timeout 1500 -j "$(nproc)" "$@"
