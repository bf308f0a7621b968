#!/usr/bin/env bash
# modules_on_demand.sh EMBER_RUN EMBERC MODEL.onnx OUT_DIR
# ember-run maps the ONNX importer (libonnx, libonnx_proto, libprotobuf) and the cpu
# backend (libLLVM) only when a run needs them (docs/compiler/importer.md, "The importer
# as a module"): none of those libraries is among the program's NEEDED entries, and an
# NPU binary runs on the simulator with both modules made unreachable ($EMBER_ONNX_PLUGIN
# and $EMBER_CPU_PLUGIN naming no file), where a model would fail.
set -euo pipefail
run=$1 emberc=$2 model=$3 out=$4
mkdir -p "$out"
needed=$(readelf -d "$run" | grep NEEDED || true)
echo "$needed"
if grep -Eq 'libonnx|libprotobuf|libLLVM' <<<"$needed"; then
  echo "FAIL: ember-run needs libonnx, libprotobuf or libLLVM at start"
  exit 1
fi
"$emberc" "$model" -o "$out/model.elf" --quiet
export EMBER_ONNX_PLUGIN=$out/absent/libember_onnx_plugin.so
export EMBER_CPU_PLUGIN=$out/absent/libember_cpu_plugin.so
"$run" "$out/model.elf" --device sim --random-input 1 --quiet
echo "the binary ran without either module"
if "$run" "$model" --device interp --random-input 1 --quiet 2>"$out/model.err"; then
  echo "FAIL: the model ran though the importer's module is absent"
  exit 1
fi
cat "$out/model.err"
grep -q "absent/libember_onnx_plugin.so: no such file" "$out/model.err"
echo "PASS"
