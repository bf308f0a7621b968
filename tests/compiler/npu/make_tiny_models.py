#!/usr/bin/env python3
"""Writes small ONNX CNNs for the emberc command-line tests (seeded, deterministic):
  tiny_cnn.onnx      Conv+Relu, MaxPool, Conv+BatchNorm+Relu, a 1x1 branch, Add,
                     GlobalAveragePool, Flatten, Gemm (everything the NPU runs)
  tiny_softmax.onnx  the same with a Softmax along a middle axis at the end (the NPU
                     normalises along the channels only: refused, or on the host)
  tiny_reducesum.onnx  Conv+Relu, ReduceSum over H and W, Gemm (global sum pooling)
and [1, 3, 4, 4] models for the messages: identity, passthrough (the input is the output),
const_out, bigpad (a Conv the NPU cannot pad, after a Relu), gather_oob (an index out of range).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(with_softmax):
    rng = np.random.default_rng(7)
    inits = []

    def const(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    nodes = [
        helper.make_node("Conv", ["x", const("w1", rng.normal(0, 0.3, (16, 3, 3, 3))),
                                  const("b1", rng.normal(0, 0.1, 16))], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", const("w2", rng.normal(0, 0.2, (32, 16, 3, 3)))], ["c2"],
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["c2", const("g", rng.uniform(0.5, 1.5, 32)), const("be", rng.normal(0, 0.1, 32)),
                          const("mu", rng.normal(0, 0.1, 32)), const("var", rng.uniform(0.5, 2, 32))],
                         ["bn"]),
        helper.make_node("Relu", ["bn"], ["r2"]),
        helper.make_node("Conv", ["p1", const("w3", rng.normal(0, 0.2, (32, 16, 1, 1)))], ["c3"]),
        helper.make_node("Add", ["r2", "c3"], ["sum"]),
        helper.make_node("GlobalAveragePool", ["sum"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", const("fw", rng.normal(0, 0.2, (10, 32))),
                                  const("fb", rng.normal(0, 0.1, 10))], ["logits" if not with_softmax else "fc"],
                         transB=1),
    ]
    if with_softmax:
        nodes.append(helper.make_node("Reshape", ["fc", "groups"], ["fc3"]))
        nodes.append(helper.make_node("Softmax", ["fc3"], ["logits"], axis=1))
        inits.append(numpy_helper.from_array(np.array([1, 2, 5], np.int64), "groups"))
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                                             [1, 2, 5] if with_softmax else [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model


def build_reducesum():
    """Conv+Relu, a ReduceSum over H and W (opset 13: axes an operand, keepdims 0) and a Gemm:
    global sum pooling, which the NPU runs as GlobalAveragePool times H * W."""
    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (24, 3, 3, 3)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.1, 24).astype(np.float32), "b1"),
             numpy_helper.from_array(np.array([2, 3], np.int64), "axes"),
             numpy_helper.from_array(rng.normal(0, 0.05, (10, 24)).astype(np.float32), "fw"),
             numpy_helper.from_array(rng.normal(0, 0.1, 10).astype(np.float32), "fb")]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("ReduceSum", ["r1", "axes"], ["s"], keepdims=0, name="global_sum"),
        helper.make_node("Gemm", ["s", "fw", "fb"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(nodes, "tiny_reducesum",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model


def small(name, nodes, outputs, inits=()):
    """A one-input ([1, 3, 4, 4] float x) model for the message tests."""
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                          [1, 3, 4, 4])],
                              outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    onnx.save(build(False), os.path.join(args.out, "tiny_cnn.onnx"))
    onnx.save(build(True), os.path.join(args.out, "tiny_softmax.onnx"))
    onnx.save(build_reducesum(), os.path.join(args.out, "tiny_reducesum.onnx"))
    vi = lambda n, d: helper.make_tensor_value_info(n, TensorProto.FLOAT, d)
    # The input returned unchanged, under another name (Identity) and under its own.
    onnx.save(small("identity", [helper.make_node("Identity", ["x"], ["y"], name="id")],
                    [vi("y", [1, 3, 4, 4])]), os.path.join(args.out, "identity.onnx"))
    onnx.save(small("passthrough", [], [vi("x", [1, 3, 4, 4])]),
              os.path.join(args.out, "passthrough.onnx"))
    # A constant output.
    onnx.save(small("const_out", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                    [vi("y", [1, 3, 4, 4]), vi("c", [2])], [numpy_helper.from_array(np.ones(2, np.float32), "c")]),
              os.path.join(args.out, "const_out.onnx"))
    # A Conv the NPU cannot pad (pads 5 > what dma.ld pads), after a Relu: on a graph input
    # the host would write its padded patches (and the NPU would run it).
    onnx.save(small("bigpad", [helper.make_node("Relu", ["x"], ["r"], name="relu_bigpad"),
                               helper.make_node("Conv", ["r", "w"], ["y"], name="conv_bigpad",
                                                pads=[5, 5, 5, 5])],
                    [vi("y", [1, 4, 12, 12])], [numpy_helper.from_array(np.full((4, 3, 3, 3), 0.1, np.float32), "w")]),
              os.path.join(args.out, "bigpad.onnx"))
    # A Gather whose constant index is out of range: an error of the import-time fold.
    onnx.save(small("gather_oob", [helper.make_node("Gather", ["x", "i"], ["y"], name="gather_oob",
                                                    axis=3)],
                    [vi("y", [1, 3, 4, 2])],
                    [numpy_helper.from_array(np.array([1, 100], np.int64), "i")]),
              os.path.join(args.out, "gather_oob.onnx"))
    x = np.random.default_rng(3).normal(0, 1, (4, 3, 16, 16)).astype(np.float32)
    np.save(os.path.join(args.out, "calib.npy"), x)


if __name__ == "__main__":
    main()
