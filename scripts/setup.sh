#!/usr/bin/env bash
# Install every dependency Ember needs (Debian packages only), then configure and build.
# Idempotent: packages already installed are not touched; a configured build is reused.
# Environment: BUILD_DIR (default build), EMBER_CMAKE_ARGS (extra -D options),
#              EMBER_SKIP_BUILD=1 to stop after configuring,
#              EMBER_BUILD_TARGETS="t1 t2" to build only these targets (and what they
#              need) instead of everything (scripts/demo.sh builds only its tools).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}

mapfile -t wanted < <(grep -v '^\s*#' "$root/scripts/deps.txt" | sed '/^\s*$/d')
# Names an installed package provides count as present (e.g. npm, which NodeSource's
# nodejs package provides and conflicts with: installing Debian's npm would remove it).
mapfile -t provided < <(dpkg-query -W -f='${db:Status-Abbrev}|${Provides}\n' 2>/dev/null |
  sed -n 's/^ii *|//p' | tr ',' '\n' | sed 's/(.*//; s/ //g' | sed '/^$/d' | sort -u)
missing=()
for p in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
  [[ "$status" == ii* ]] || printf '%s\n' "${provided[@]}" | grep -qx -- "$p" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} Debian packages (apt; a few minutes on a new machine):" \
    "${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#wanted[@]} Debian packages present"
fi

llvm=ON
[[ -d /usr/lib/llvm-19/lib/cmake/llvm ]] || llvm=OFF
# The generated RTL and its Verilated tests (docs/rtl.md) whenever Verilator is there.
rtl=ON
command -v verilator >/dev/null || rtl=OFF
if [[ ! -f "$build/build.ninja" ]]; then
  echo "setup: configuring $build"
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DEMBER_WITH_LLVM=$llvm -DEMBER_WITH_RTL=$rtl ${EMBER_CMAKE_ARGS:-}
else
  # Re-run CMake on the existing cache (fast): picks up new test and tool folders, which
  # the build's folder globs only see at configure time.
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" -DEMBER_WITH_RTL=$rtl ${EMBER_CMAKE_ARGS:-} >/dev/null
fi
if [[ "${EMBER_SKIP_BUILD:-0}" != 1 ]]; then
  read -r -a targets <<<"${EMBER_BUILD_TARGETS:-}"
  if ((${#targets[@]})); then
    # Only targets this build defines (the Python package needs pybind11, ember-run the
    # ONNX importer): a missing one is left out with a note, not a failed build.
    known=$(ninja -C "$build" -t targets all | sed -n 's/^\([^:]*\): .*/\1/p')
    present=()
    for t in "${targets[@]}"; do
      if grep -qx -- "$t" <<<"$known"; then present+=("$t"); else echo "setup: no target $t in this build"; fi
    done
    echo "setup: building ${present[*]} and what they need (ninja, $(nproc) jobs; the first" \
      "build takes several minutes, later ones only what changed)"
    cmake --build "$build" --parallel "$(nproc)" --target "${present[@]}"
  else
    echo "setup: building everything, tests included (ninja, $(nproc) jobs; the first build" \
      "takes about half an hour on 2 cores, later ones only what changed)"
    cmake --build "$build" --parallel "$(nproc)"
  fi
fi
