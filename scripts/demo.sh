#!/usr/bin/env bash
# Ember demo: set up and build, export the bundled example model (ResNet-18 with random
# weights, from the model-zoo generator) into the build folder, compile it for the Ember
# NPU (quantized to int8, calibrated on random inputs), simulate it on the cycle-accurate
# model and print the per-layer cycle/energy report and the cross-check (NPU == int8
# interpreter bit for bit; int8 vs float), then check the float interpreter against
# PyTorch's own output for the same input.
# Environment: BUILD_DIR (default build), EMBER_DEMO_MODEL (default resnet18; any name of
# `tests/models/gen_models.py --list`), EMBER_ISA (default isa/ember-v1.json).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
model=${EMBER_DEMO_MODEL:-resnet18}
isa=${EMBER_ISA:-$root/isa/ember-v1.json}
py=/usr/bin/python3

echo "== 1. set-up and build (only the demo's tools: emberc, ember-run and the Python package;"
echo "   scripts/test.sh builds the tests)"
# A new build folder gets the rtl device with ember-v1's Verilated NPU only (the demo's
# description; about two minutes less of a first build); scripts/test.sh adds the others.
# A folder already configured keeps its list.
rtl_models=
[[ -f "$build/build.ninja" ]] || rtl_models=-DEMBER_RTL_MODELS=ember-v1
EMBER_BUILD_TARGETS=${EMBER_BUILD_TARGETS:-emberc ember-run ember_python} \
  EMBER_CMAKE_ARGS="$rtl_models ${EMBER_CMAKE_ARGS:-}" "$root/scripts/setup.sh"

echo
echo "== 2. export $model from PyTorch to ONNX (cached in $build/models/$model)"
"$py" "$root/tests/models/gen_models.py" --out "$build/models" --only "$model" \
  2> >(grep -v -i "warn" >&2)
dir=$build/models/$model
out=$build/demo/$model
mkdir -p "$out"
run=$build/tools/ember-run/ember-run

echo
echo "== 3. compile for the NPU ($(basename "$isa")): $out/$model.elf"
"$build/tools/emberc/emberc" "$dir/model.onnx" -o "$out/$model.elf" --isa "$isa" \
  --calibrate random:8

# The LLVM CPU backend joins the cross-check when the build has it.
devices=interp,sim
"$run" --help | grep '^  cpu ' >/dev/null && devices=interp,cpu,sim # grep reads all: no SIGPIPE under pipefail

echo
echo "== 4. simulate on the NPU, cross-check with the int8 interpreter ($devices)"
"$run" "$dir/model.onnx" --compare "$devices" --precision int8 --isa "$isa" \
  --input "input=$dir/input.npy" --out "$out/int8" --top 5 \
  --report "$out/report.json" --trace "$out/trace.json"
echo "report: $out/report.json; timeline: $out/trace.json (open in https://ui.perfetto.dev)"

echo
echo "== 5. the float interpreter against PyTorch"
"$run" "$dir/model.onnx" --device interp --input "input=$dir/input.npy" --out "$out/float" \
  --quiet
"$py" - "$out/float/output.npy" "$dir/expected.npy" <<'PY'
import sys
import numpy as np
ours, ref = np.load(sys.argv[1]), np.load(sys.argv[2])
err = float(np.max(np.abs(ours.astype(np.float64) - ref)))
tol = 1e-4 * max(1.0, float(np.max(np.abs(ref))))
top = lambda a: np.argsort(-a.reshape(-1), kind="stable")[:5].tolist()
print(f"top-5 classes: ember {top(ours)}, pytorch {top(ref)}")
print(f"max abs difference vs PyTorch: {err:.3g} (tolerance {tol:.3g}): "
      f"{'MATCH' if err <= tol else 'MISMATCH'}")
sys.exit(0 if err <= tol else 1)
PY
