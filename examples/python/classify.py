#!/usr/bin/env python3
"""Ember from Python: compile an ONNX model for the Ember NPU, run it on the
cycle-accurate simulator, check it bit for bit against the int8 interpreter, print the
cycle and energy figures, and save the binary.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/classify.py \
        build/models/resnet18/model.onnx [--isa isa/examples/ember-v1-large.json]

With no model it builds a small CNN with onnx.helper (so the example runs anywhere).
"""

import argparse
import os
import sys
import tempfile

import numpy as np

import ember


def small_cnn(path):
    """Conv 3x3 + Relu + global pooling + a linear classifier, random weights."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    init = [numpy_helper.from_array(rng.uniform(-0.3, 0.3, s).astype(np.float32), n)
            for n, s in (("w", (32, 16, 3, 3)), ("fw", (10, 32)), ("fb", (10,)))]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["input", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("GlobalAveragePool", ["r"], ["g"]),
         helper.make_node("Flatten", ["g"], ["f"]),
         helper.make_node("Gemm", ["f", "fw", "fb"], ["output"], transB=1)],
        "small_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 16, 16, 16])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 10])], init)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?", help="an ONNX model (default: a small CNN)")
    ap.add_argument("--isa", help="the NPU description (default isa/ember-v1.json)")
    ap.add_argument("--out", default=tempfile.gettempdir(), help="where to save the binary")
    args = ap.parse_args()
    model = args.model or small_cnn(os.path.join(args.out, "small_cnn.onnx"))

    prog = ember.compile(model, isa=args.isa, calibrate="random:8")
    print(prog)
    print(prog.placement)
    (inp,) = prog.inputs
    x = np.random.default_rng(1).standard_normal(inp["shape"]).astype(np.float32)

    npu = prog.run({inp["name"]: x})            # the simulated NPU
    report = prog.reports                         # one dict per NPU segment
    ref = prog.run({inp["name"]: x}, device="interp")
    check = ember.compare(npu, ref)
    for name, c in check.items():
        print(f"{name}: top-1 class {int(np.argmax(npu[name]))}, "
              f"bit-exact with the int8 interpreter: {c['bit_exact']}")
    cycles = sum(r["cycles"] for r in report)
    energy_uj = sum(r["energy"]["total_pj"] for r in report) * 1e-6
    print(f"NPU: {cycles} cycles, {energy_uj:.1f} uJ on {prog.isa_name}")

    path = os.path.join(args.out, "model.elf" if prog.whole_on_npu else "model.pkg")
    prog.save(path)
    print(f"saved {path}")
    return 0 if all(c["bit_exact"] for c in check.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
