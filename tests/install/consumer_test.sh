#!/usr/bin/env bash
# The installed package as a user gets it: `cmake --install` into a fresh prefix, then
#   1. examples/cmake-consumer, a CMake project of its own, finds it with find_package(Ember),
#      links Ember::compiler/sim/runtime/devices, compiles a small ONNX model for the NPU,
#      simulates it and requires the int8 interpreter's outputs bit for bit;
#   2. a program built with nothing but `pkg-config --cflags --libs ember`;
#   3. the installed tools and the installed Python package.
# Usage: consumer_test.sh BUILD_DIR SOURCE_DIR WORK_DIR PYTHON
set -euo pipefail
build=$1 src=$2 work=$3 py=$4
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" --strip >"$work/install.log"
test -f "$prefix/lib/libember.so" && test -f "$prefix/lib/cmake/Ember/EmberConfig.cmake"
test -f "$prefix/share/ember/isa/ember-v1.json" && test -f "$prefix/include/ember/driver/Driver.h"

echo "== a small model (onnx.helper)"
"$py" - "$work/tiny.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(5)
init = [numpy_helper.from_array(rng.uniform(-0.3, 0.3, s).astype(np.float32), n)
        for n, s in (("w", (16, 16, 3, 3)), ("fw", (10, 16)))]
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["r"]),
     helper.make_node("GlobalAveragePool", ["r"], ["p"]),
     helper.make_node("Flatten", ["p"], ["f"]),
     helper.make_node("Gemm", ["f", "fw"], ["y"], transB=1)],
    "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], init)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY

echo "== find_package(Ember): examples/cmake-consumer"
cmake -S "$src/examples/cmake-consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/consumer-configure.log"
cmake --build "$work/consumer" >"$work/consumer-build.log"
"$work/consumer/npu_check" "$work/tiny.onnx"

echo "== pkg-config ember"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs ember)
echo "pkg-config: $flags"
cat >"$work/pc.cpp" <<'CPP'
#include "ember/isa/description.h"
#include "ember/support/Version.h"
#include <cstdio>
int main(int, char** argv) {
  auto d = ember::isa::IsaDescription::loadFile(argv[1]);
  std::printf("Ember %s reads %s (%llu MACs/cycle)\n", ember::versionString(), d.name().c_str(),
              static_cast<unsigned long long>(d.peakMacsPerCycle()));
  return 0;
}
CPP
# shellcheck disable=SC2086
c++ "$work/pc.cpp" $flags -o "$work/pc"
LD_LIBRARY_PATH=$prefix/lib "$work/pc" "$prefix/share/ember/isa/ember-v1.json"

echo "== installed tools and Python package"
"$prefix/bin/emberc" --help >/dev/null
# The installed tool's --version loads its default description and prints its hash.
version=$(env -u EMBER_ISA "$prefix/bin/emberc" --version)
echo "$version"
[[ $version == "emberc "*" (default description ember-v1 sha256 "* ]]
EMBER_ISA=$prefix/share/ember/isa/ember-v1.json "$prefix/bin/emberc" "$work/tiny.onnx" \
  -o "$work/tiny.elf" --quiet
# The installed ember-run imports a model through the importer's module installed beside
# it (P/lib/ember/, ember/importer/OnnxPlugin.h), named here so that the build tree's
# module cannot stand in for it.
[[ -f $prefix/lib/ember/libember_onnx_plugin.so ]]
EMBER_ONNX_PLUGIN=$prefix/lib/ember/libember_onnx_plugin.so \
  EMBER_ISA=$prefix/share/ember/isa/ember-v1.json "$prefix/bin/ember-run" "$work/tiny.onnx" \
  --random-input 1 --compare interp,sim --quiet
if [[ -d $prefix/lib/python3/dist-packages/ember ]]; then
  PYTHONPATH=$prefix/lib/python3/dist-packages "$py" -c \
    "import ember; p = ember.load('$work/tiny.elf'); print('python:', p, p.devices)"
  # Without EMBER_ISA the installed code finds the prefix's descriptions, not the source tree's.
  default=$(env -u EMBER_ISA PYTHONPATH=$prefix/lib/python3/dist-packages "$py" -c \
    "import ember; print(ember.isa.default_path())")
  echo "python: default description $default"
  [[ $default == "$prefix"/share/ember/isa/ember-v1.json ]]
fi
echo "install consumer: ok"
