#!/usr/bin/python3
"""Small ONNX models of the NN operators in older opsets and with import-time
features (auto_pad, output_shape, opset<13 softmax flattening, BatchNormalization
attributes of opsets 7-9), and models that must be rejected.

Usage: gen_nn_onnx.py OUTDIR
For each case writes NAME.onnx, NAME.in<i>.bin and, for accepted models,
NAME.out0.bin (computed with numpy / PyTorch; same .bin format as gen_nn_refs.py).
"""
import os
import struct
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(7)


def save(path, a):
    a = np.array(a, dtype=np.float32, order="C")
    with open(path, "wb") as f:
        f.write(struct.pack("<q", a.ndim))
        f.write(struct.pack("<%dq" % a.ndim, *a.shape))
        f.write(a.astype("<f4").tobytes())


def model(name, opset, node, inputs, out_shape, expected=None):
    """inputs: list of (name, array); the graph's outputs are node.output."""
    vin = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs]
    vout = [helper.make_tensor_value_info(o, TensorProto.FLOAT, out_shape)
            for o in node.output if o]
    g = helper.make_graph([node], name, vin, vout)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    for i, (_, a) in enumerate(inputs):
        save(os.path.join(OUT, "%s.in%d.bin" % (name, i)), a)
    if expected is not None:
        save(os.path.join(OUT, name + ".out0.bin"), expected)


def r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def softmax2d(x, axis, log=False):
    flat = x.reshape(int(np.prod(x.shape[:axis])), -1).astype(np.float64)
    e = np.exp(flat - flat.max(axis=1, keepdims=True))
    s = e / e.sum(axis=1, keepdims=True)
    return (np.log(s) if log else s).reshape(x.shape)


# Softmax family before opset 13: flattened to 2-D at axis (default 1).
x = r(2, 3, 4)
model("softmax_opset11_axis1", 11, helper.make_node("Softmax", ["x"], ["y"], axis=1, name="sm"),
      [("x", x)], x.shape, softmax2d(x, 1))
model("logsoftmax_opset11_default", 11, helper.make_node("LogSoftmax", ["x"], ["y"], name="lsm"),
      [("x", x)], x.shape, softmax2d(x, 1, log=True))
model("softmax_opset11_last", 11, helper.make_node("Softmax", ["x"], ["y"], axis=-1, name="sm"),
      [("x", x)], x.shape, softmax2d(x, 2))
flat = x.reshape(2, 12)
hm = np.zeros_like(flat)
hm[np.arange(2), flat.argmax(axis=1)] = 1
model("hardmax_opset11_axis1", 11, helper.make_node("Hardmax", ["x"], ["y"], axis=1, name="hm"),
      [("x", x)], x.shape, hm.reshape(x.shape))
model("softmax_opset13_axis1", 13, helper.make_node("Softmax", ["x"], ["y"], axis=1, name="sm"),
      [("x", x)], x.shape, torch.softmax(torch.tensor(x), 1).numpy())

# BatchNormalization in opsets 7 (spatial), 9 and 15.
x, s, b, mu = r(2, 3, 4, 5), r(3), r(3), r(3)
var = (rng.random(3) + 0.5).astype(np.float32)
ref = F.batch_norm(*[torch.tensor(t) for t in (x, mu, var, s, b)], training=False, eps=1e-5).numpy()
bn_in = [("x", x), ("s", s), ("b", b), ("mean", mu), ("var", var)]
for opset, attrs in ((7, {"spatial": 1}), (9, {}), (15, {})):
    model("batchnorm_opset%d" % opset, opset,
          helper.make_node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["y"],
                           name="bn", **attrs), bn_in, x.shape, ref)
# Training mode normalises with the batch's own statistics (PyTorch's training=True).
ref_train = F.batch_norm(*[torch.tensor(t) for t in (x, mu, var, s, b)], training=True,
                         eps=1e-5).numpy()
model("batchnorm_training", 15,
      helper.make_node("BatchNormalization", ["x", "s", "b", "mean", "var"], ["y"],
                       training_mode=1, name="bn_train"), bn_in, x.shape, ref_train)

# Conv with auto_pad SAME_UPPER / SAME_LOWER (stride 2 on an even input: asymmetric).
x, w = r(1, 2, 8, 8), r(3, 2, 3, 3)
xt, wt = torch.tensor(x), torch.tensor(w)
# out = 4, total pad = (4 - 1) * 2 + 3 - 8 = 1: UPPER pads the end, LOWER the beginning.
model("conv_same_upper", 11, helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER",
      strides=[2, 2], name="conv"), [("x", x), ("w", w)], (1, 3, 4, 4),
      F.conv2d(F.pad(xt, (0, 1, 0, 1)), wt, stride=2).numpy())
model("conv_same_lower", 11, helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER",
      strides=[2, 2], name="conv"), [("x", x), ("w", w)], (1, 3, 4, 4),
      F.conv2d(F.pad(xt, (1, 0, 1, 0)), wt, stride=2).numpy())
model("maxpool_valid", 8, helper.make_node("MaxPool", ["x"], ["y"], auto_pad="VALID",
      kernel_shape=[3, 3], strides=[2, 2], name="pool"), [("x", x)], (1, 2, 3, 3),
      F.max_pool2d(xt, 3, 2).numpy())

# Gemm in opset 9 (C required then) with both transposes.
a, bm, c = r(4, 3), r(5, 4), r(5)
model("gemm_opset9", 9, helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1,
      alpha=0.5, beta=2.0, name="fc"), [("a", a), ("b", bm), ("c", c)], (3, 5),
      0.5 * a.T @ bm.T + 2.0 * c)

# Rejected models.
x = r(1, 1, 5, 5)
model("maxpool_indices", 12, helper.make_node("MaxPool", ["x"], ["y", "idx"],
      kernel_shape=[2, 2], name="pool_idx"), [("x", x)], (1, 1, 4, 4))
model("conv_bad_channels", 11, helper.make_node("Conv", ["x", "w"], ["y"], name="conv_bad"),
      [("x", r(1, 3, 5, 5)), ("w", r(2, 4, 3, 3))], (1, 2, 3, 3))

with open(os.path.join(OUT, "stamp"), "w") as f:
    f.write("ok\n")
