#!/usr/bin/python3
"""Small ONNX graphs fed with NaN, +Inf and -Inf, and PyTorch's outputs for them.

Usage: gen_float_specials.py OUTDIR
Writes NAME.onnx, NAME.input.npy and NAME.expected.npy per case and a list file
`cases.txt`. The expected values come from PyTorch's own operators (torch.relu,
torch.softmax, F.max_pool2d, ...), never from Ember: they are the reference for the
NaN/Inf rules of docs/numerics.md.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
NAN, INF = float("nan"), float("inf")

# Every row holds a NaN, an Inf or both, next to ordinary values; the last row is finite.
X = np.array([[[[NAN, 1.0, -2.0, 0.5], [INF, -1.0, 3.0, -0.25]],
               [[-INF, 2.0, 0.75, -3.0], [NAN, INF, -INF, 1.5]],
               [[0.0, -0.5, NAN, 2.5], [1.25, -1.75, 0.125, -0.625]]]], np.float32)  # [1,3,2,4]
# A second operand for binary ops: NaN and Inf in other places than X.
Y = np.array([[[[0.0, NAN, 1.0, INF], [-INF, 0.5, NAN, -1.0]],
               [[1.0, -2.0, NAN, 4.0], [0.0, 1.0, 2.0, NAN]],
               [[INF, -INF, 0.5, -0.5], [1.0, 2.0, 3.0, 4.0]]]], np.float32)
W = np.array(np.linspace(-1, 1, 3 * 3 * 1 * 1), np.float32).reshape(3, 3, 1, 1)  # 1x1 conv

cases = []


def case(name, nodes, expected, inits=(), opset=13, x=X, out_type=TensorProto.FLOAT):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      list(x.shape))],
                          [helper.make_tensor_value_info("y", out_type, list(expected.shape))],
                          initializer=[numpy_helper.from_array(np.asarray(v, np.float32), k)
                                       for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="ember-tests")
    m.ir_version = 8
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    np.save(os.path.join(OUT, name + ".input.npy"), x)
    np.save(os.path.join(OUT, name + ".expected.npy"),
            np.asarray(expected, np.int64 if out_type == TensorProto.INT64 else np.float32))
    cases.append(name)


def unary(name, op, ref, **attrs):
    case(name, [helper.make_node(op, ["x"], ["y"], name=name, **attrs)],
         ref(torch.from_numpy(X)).numpy())


t = torch.from_numpy(X)
ty = torch.from_numpy(Y)
unary("relu", "Relu", torch.relu)
unary("leaky_relu", "LeakyRelu", lambda v: F.leaky_relu(v, 0.1), alpha=0.1)
unary("sigmoid", "Sigmoid", torch.sigmoid)
unary("tanh", "Tanh", torch.tanh)
unary("elu", "Elu", lambda v: F.elu(v, 1.0), alpha=1.0)
unary("selu", "Selu", F.selu)
unary("celu", "Celu", lambda v: F.celu(v, 1.0), alpha=1.0)
unary("softplus", "Softplus", F.softplus)
unary("hard_sigmoid", "HardSigmoid", lambda v: torch.clamp(0.2 * v + 0.5, 0, 1),
      alpha=0.2, beta=0.5)
unary("hard_swish", "HardSwish", F.hardswish)
unary("thresholded_relu", "ThresholdedRelu", lambda v: F.threshold(v, 1.0, 0.0), alpha=1.0)
unary("shrink", "Shrink", lambda v: F.hardshrink(v, 0.5), lambd=0.5, bias=0.0)
unary("abs", "Abs", torch.abs)
unary("sign", "Sign", torch.sign)
unary("floor", "Floor", torch.floor)
unary("round", "Round", torch.round)
unary("exp", "Exp", torch.exp)
unary("softmax", "Softmax", lambda v: torch.softmax(v, -1), axis=-1)
unary("log_softmax", "LogSoftmax", lambda v: torch.log_softmax(v, -1), axis=-1)
unary("reduce_max", "ReduceMax", lambda v: torch.amax(v, dim=3, keepdim=True), axes=[3])
unary("reduce_min", "ReduceMin", lambda v: torch.amin(v, dim=3, keepdim=True), axes=[3])
unary("reduce_sum_square", "ReduceSumSquare",
      lambda v: torch.sum(v * v, dim=3, keepdim=True), axes=[3])
unary("max_pool", "MaxPool", lambda v: F.max_pool2d(v, 2, 2), kernel_shape=[2, 2],
      strides=[2, 2])
unary("global_max_pool", "GlobalMaxPool", lambda v: torch.amax(v, dim=(2, 3), keepdim=True))
unary("average_pool", "AveragePool", lambda v: F.avg_pool2d(v, 2, 2), kernel_shape=[2, 2],
      strides=[2, 2])
unary("reduce_log_sum_exp", "ReduceLogSumExp",
      lambda v: torch.logsumexp(v, dim=3, keepdim=True), axes=[3])
unary("reduce_l2", "ReduceL2", lambda v: torch.linalg.vector_norm(v, dim=3, keepdim=True),
      axes=[3])
unary("reduce_mean", "ReduceMean", lambda v: torch.mean(v, dim=3, keepdim=True), axes=[3])
unary("global_average_pool", "GlobalAveragePool",
      lambda v: torch.mean(v, dim=(2, 3), keepdim=True))
case("layer_norm", [helper.make_node("LayerNormalization", ["x", "g"], ["y"], name="ln",
                                     axis=-1)],
     F.layer_norm(t, [4]).numpy(), [("g", np.ones(4, np.float32))], opset=17)
# ArgMax / ArgMin: a NaN is the extremum of both (torch.argmax / argmin).
for op, ref in (("ArgMax", torch.argmax), ("ArgMin", torch.argmin)):
    case(op.lower(), [helper.make_node(op, ["x"], ["y"], name=op.lower(), axis=3, keepdims=0)],
         ref(t, dim=3).numpy(), out_type=TensorProto.INT64)
# Clip: both bounds, only a lower bound (not a Relu: NaN stays NaN either way).
case("clip", [helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
     torch.clamp(t, -1.0, 1.0).numpy(), [("lo", -1.0), ("hi", 1.0)])
case("clip_min", [helper.make_node("Clip", ["x", "lo"], ["y"], name="clip_min")],
     torch.clamp(t, min=0.0).numpy(), [("lo", 0.0)])
# Elementwise Max / Min against a constant holding NaN and Inf elsewhere.
case("max", [helper.make_node("Max", ["x", "c"], ["y"], name="max")],
     torch.maximum(t, ty).numpy(), [("c", Y)])
case("min", [helper.make_node("Min", ["x", "c"], ["y"], name="min")],
     torch.minimum(t, ty).numpy(), [("c", Y)])
case("prelu", [helper.make_node("PRelu", ["x", "s"], ["y"], name="prelu")],
     F.prelu(t, torch.tensor([0.25, 0.5, 0.75])).numpy(),
     [("s", np.array([0.25, 0.5, 0.75], np.float32).reshape(3, 1, 1))])
# Activations the optimisation pipeline fuses into their producer (Conv, Add, MatMul).
wt = torch.from_numpy(W)
case("conv_relu", [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                   helper.make_node("Relu", ["c"], ["y"], name="relu")],
     torch.relu(F.conv2d(t, wt)).numpy(), [("w", W)])
case("conv_clip", [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                   helper.make_node("Clip", ["c", "lo", "hi"], ["y"], name="clip")],
     torch.clamp(F.conv2d(t, wt), 0.0, 6.0).numpy(), [("w", W), ("lo", 0.0), ("hi", 6.0)])
case("add_relu", [helper.make_node("Add", ["x", "c"], ["s"], name="add"),
                  helper.make_node("Relu", ["s"], ["y"], name="relu")],
     torch.relu(t + ty).numpy(), [("c", Y)])
M = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
case("matmul_relu", [helper.make_node("MatMul", ["x", "m"], ["p"], name="matmul"),
                     helper.make_node("Relu", ["p"], ["y"], name="relu")],
     torch.relu(t @ torch.from_numpy(M)).numpy(), [("m", M)])

with open(os.path.join(OUT, "cases.txt"), "w") as f:
    f.write("\n".join(cases) + "\n")
