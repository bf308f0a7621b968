#!/usr/bin/env bash
# Ember demo (this stage): set up and build, export the bundled example model (ResNet-18
# with random weights, from the model-zoo generator) into the build folder, import it
# and run it on Ember's interpreter with ember-run, print the top-5 outputs and timing,
# and compare with PyTorch's own output for the same input.
# Environment: BUILD_DIR (default build), EMBER_DEMO_MODEL (default resnet18; any name of
# `tests/models/gen_models.py --list`).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
model=${EMBER_DEMO_MODEL:-resnet18}
py=/usr/bin/python3

echo "== 1. set-up and build"
"$root/scripts/setup.sh"

echo
echo "== 2. export $model from PyTorch to ONNX (cached in $build/models/$model)"
"$py" "$root/tests/models/gen_models.py" --out "$build/models" --only "$model" \
  2> >(grep -v -i "warn" >&2)
dir=$build/models/$model
out=$build/demo/$model

echo
echo "== 3. import and run on Ember's interpreter"
run=$build/tools/ember-run/ember-run
"$run" "$dir/model.onnx" --device interp --input "input=$dir/input.npy" --out "$out" --top 5

echo
echo "== 4. compare with PyTorch"
"$py" - "$out/output.npy" "$dir/expected.npy" <<'PY'
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
