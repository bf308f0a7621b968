#!/usr/bin/python3
"""Writes small ONNX models for the operator import tests into OUT_DIR, with inputs and
expected outputs computed by numpy / PyTorch (never by Ember):
  NAME.onnx, NAME.in.<input name>.npy, NAME.out<i>.npy (graph outputs).
Models named bad_* only have the .onnx: the test expects an error naming the node."""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.RandomState(7)

NP2ONNX = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64,
           np.int8: TensorProto.INT8, np.int32: TensorProto.INT32, np.bool_: TensorProto.BOOL,
           np.uint8: TensorProto.UINT8}


def vi(name, arr_or_type, shape=None):
    if shape is None:
        return helper.make_tensor_value_info(name, NP2ONNX[arr_or_type.dtype.type],
                                             list(arr_or_type.shape))
    return helper.make_tensor_value_info(name, arr_or_type, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save(name, nodes, inputs, outputs, opset, inits=(), out_shapes=None):
    """inputs: list of (name, array); outputs: list of (name, expected array or None)."""
    ins = [vi(n, a) for n, a in inputs]
    outs = []
    for n, a in outputs:
        if a is None:
            outs.append(helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None))
        else:
            outs.append(vi(n, a))
    g = helper.make_graph(nodes, name, ins, outs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.save(m, os.path.join(OUT, name + ".onnx"))
    for n, a in inputs:
        np.save(os.path.join(OUT, "%s.in.%s.npy" % (name, n)), np.array(a, order="C"))
    for i, (_, a) in enumerate(outputs):
        if a is not None:
            np.save(os.path.join(OUT, "%s.out%d.npy" % (name, i)), np.array(a, order="C"))


def f32(*shape):
    return rng.randn(*shape).astype(np.float32)


N = helper.make_node

# Shape -> Gather -> Unsqueeze -> Concat -> Reshape: folds to one Reshape.
x = f32(2, 3, 4)
save("shape_chain",
     [N("Shape", ["x"], ["s"]), N("Gather", ["s", "zero"], ["d0"], axis=0),
      N("Unsqueeze", ["d0", "ax0"], ["d0v"]), N("Concat", ["d0v", "minus1"], ["shp"], axis=0),
      N("Reshape", ["x", "shp"], ["y"], name="reshape")],
     [("x", x)], [("y", x.reshape(2, -1))], 13,
     [const("zero", np.int64(0)), const("ax0", np.array([0], np.int64)),
      const("minus1", np.array([-1], np.int64))])

# int64 shape arithmetic: Mul, Div, Equal, Where, then Expand.
y = f32(1, 1)
s = np.array([2, 3], np.int64)
d = (s * np.array([3, 1])) // np.array([2, 2])  # [3, 1], exact division
w = np.where(d == np.array([3, 5]), d, np.array([1, 1]))
save("int64_arith",
     [N("Shape", ["x"], ["s"]), N("Mul", ["s", "k31"], ["m"]), N("Div", ["m", "k22"], ["d"]),
      N("Equal", ["d", "k35"], ["c"]), N("Where", ["c", "d", "k11"], ["w"]),
      N("Expand", ["y", "w"], ["out"])],
     [("x", f32(2, 3)), ("y", y)], [("out", np.broadcast_to(y, tuple(w)).copy())], 13,
     [const("k31", np.array([3, 1], np.int64)), const("k22", np.array([2, 2], np.int64)),
      const("k35", np.array([3, 5], np.int64)), const("k11", np.array([1, 1], np.int64))])

x = f32(4, 5)
save("slice_negative_step",
     [N("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [("x", x)],
     [("y", x[-1:-5:-1, 0:100:2])], 13,
     [const("st", np.array([-1, 0], np.int64)), const("en", np.array([-5, 100], np.int64)),
      const("ax", np.array([0, 1], np.int64)), const("sp", np.array([-1, 2], np.int64))])
save("slice_opset9", [N("Slice", ["x"], ["y"], starts=[1], ends=[1000], axes=[1])],
     [("x", x)], [("y", x[:, 1:])], 9)

x = f32(2, 5)
save("split_sizes_input", [N("Split", ["x", "sp"], ["a", "b"], axis=-1)], [("x", x)],
     [("a", x[:, :2]), ("b", x[:, 2:])], 13, [const("sp", np.array([2, 3], np.int64))])
x = f32(4, 2)
save("split_equal_opset11", [N("Split", ["x"], ["a", "b"], axis=0)], [("x", x)],
     [("a", x[:2]), ("b", x[2:])], 11)

x = f32(2, 3, 1)
save("squeeze_unsqueeze_opset11",
     [N("Squeeze", ["x"], ["s"], axes=[-1]), N("Unsqueeze", ["s"], ["y"], axes=[0, 3])],
     [("x", x)], [("y", x.reshape(1, 2, 3, 1))], 11)
save("squeeze_unsqueeze_opset13",
     [N("Squeeze", ["x", "a"], ["s"]), N("Unsqueeze", ["s", "b"], ["y"])],
     [("x", x)], [("y", x.reshape(2, 1, 3))], 13,
     [const("a", np.array([2], np.int64)), const("b", np.array([-2], np.int64))])
x = f32(2, 3, 4)
save("flatten_negative_axis", [N("Flatten", ["x"], ["y"], axis=-1)], [("x", x)],
     [("y", x.reshape(6, 4))], 13)

x = f32(2, 3)
save("pad_reflect", [N("Pad", ["x", "p"], ["y"], mode="reflect")], [("x", x)],
     [("y", np.pad(x, ((0, 0), (1, 2)), mode="reflect"))], 13,
     [const("p", np.array([0, 1, 0, 2], np.int64))])
save("pad_opset2_value", [N("Pad", ["x"], ["y"], pads=[1, 0, 0, 1], value=1.5)], [("x", x)],
     [("y", np.pad(x, ((1, 0), (0, 1)), constant_values=1.5))], 7)

x = f32(3, 4, 5)
save("reduce_mean_negative_axis", [N("ReduceMean", ["x"], ["y"], axes=[-1], keepdims=0)],
     [("x", x)], [("y", x.mean(axis=-1))], 13)
save("reduce_sum_axes_input", [N("ReduceSum", ["x", "a"], ["y"], keepdims=1)], [("x", x)],
     [("y", x.sum(axis=(0, 2), keepdims=True))], 13, [const("a", np.array([0, -1], np.int64))])
xa = np.array([[3, 1, 1], [0, 5, 0]], np.float32)
save("argmin_last", [N("ArgMin", ["x"], ["y"], axis=-1, keepdims=0, select_last_index=1)],
     [("x", xa)], [("y", np.array([2, 2], np.int64))], 13)

x = (f32(2, 3) * 4).astype(np.float32)
save("cast_chain",
     [N("Cast", ["x"], ["i"], to=TensorProto.INT64), N("Add", ["i", "three"], ["j"]),
      N("Cast", ["j"], ["y"], to=TensorProto.FLOAT)],
     [("x", x)], [("y", (x.astype(np.int64) + 3).astype(np.float32))], 13,
     [const("three", np.int64(3))])

x = f32(1, 1, 2, 3)
lin = torch.nn.functional.interpolate(torch.from_numpy(x), scale_factor=2, mode="bilinear",
                                      align_corners=False).numpy()
save("resize_linear_half_pixel", [N("Resize", ["x", "", "sc"], ["y"], mode="linear")],
     [("x", x)], [("y", lin)], 13,
     [const("sc", np.array([1, 1, 2, 2], np.float32))])
near = torch.nn.functional.interpolate(torch.from_numpy(x), size=(3, 5), mode="nearest").numpy()
save("resize_nearest_sizes",
     [N("Resize", ["x", "roi", "", "sz"], ["y"], mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
     [("x", x)], [("y", near)], 11,
     [const("roi", np.array([], np.float32)), const("sz", np.array([1, 1, 3, 5], np.int64))])
save("upsample_opset9", [N("Upsample", ["x", "sc"], ["y"], mode="nearest")], [("x", x)],
     [("y", x.repeat(2, axis=2).repeat(3, axis=3))], 9,
     [const("sc", np.array([1, 1, 2, 3], np.float32))])

x = f32(3, 4)
save("clip_opset11", [N("Clip", ["x", "lo", "hi"], ["y"])], [("x", x)],
     [("y", np.clip(x, -0.5, 0.5))], 11,
     [const("lo", np.float32(-0.5)), const("hi", np.float32(0.5))])
save("clip_opset10_attrs", [N("Clip", ["x"], ["y"], min=-0.25)], [("x", x)],
     [("y", np.maximum(x, -0.25))], 10)

x = (f32(2, 3) * 50).astype(np.float32)
sc = np.array([0.5, 1.0, 0.25], np.float32)
zp = np.array([0, -3, 5], np.int8)
q = np.clip(np.rint(x / sc) + zp, -128, 127).astype(np.int8)
dq = ((q.astype(np.int32) - zp) * sc).astype(np.float32)
save("quant_per_axis",
     [N("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
      N("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)],
     [("x", x)], [("q", q), ("y", dq)], 13, [const("s", sc), const("z", zp)])

# uint8 (evaluated in float by existing kinds): per axis, and per tensor without a zero
# point (QuantizeLinear's default is uint8 with zero point 0).
zpu = np.array([0, 128, 255], np.uint8)
qu = np.clip(np.rint(x / sc) + zpu.astype(np.float32), 0, 255).astype(np.uint8)
dqu = ((qu.astype(np.int32) - zpu.astype(np.int32)) * sc).astype(np.float32)
qd = np.clip(np.rint(x / np.float32(0.02)), 0, 255).astype(np.uint8)
save("quant_uint8",
     [N("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
      N("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1),
      N("QuantizeLinear", ["x", "s0"], ["qd"])],
     [("x", x)], [("q", qu), ("y", dqu), ("qd", qd)], 13,
     [const("s", sc), const("z", zpu), const("s0", np.float32(0.02))])

save("range_constant_of_shape",
     [N("Range", ["a", "b", "c"], ["r"]), N("Shape", ["r"], ["s"]),
      N("ConstantOfShape", ["s"], ["k"], value=helper.make_tensor("v", TensorProto.FLOAT, [1],
                                                                   [1.5])),
      N("Add", ["k", "x"], ["y"])],
     [("x", np.float32(2.0).reshape(()))],
     [("r", np.arange(0, 10, 3, dtype=np.int64)), ("y", np.full(4, 3.5, np.float32))], 13,
     [const("a", np.int64(0)), const("b", np.int64(10)), const("c", np.int64(3))])

a, b, c = f32(2, 3), f32(3), f32(1, 3)
save("variadic_mean_max",
     [N("Mean", ["a", "b", "c"], ["m"]), N("Max", ["a", "b", "c"], ["x"])],
     [("a", a), ("b", b), ("c", c)],
     [("m", ((a + b + c) / 3).astype(np.float32)), ("x", np.maximum(np.maximum(a, b), c))], 13)

x = f32(3, 4)
save("gather_negative_indices", [N("Gather", ["x", "i"], ["y"], axis=1)], [("x", x)],
     [("y", x[:, [-1, 0]])], 13, [const("i", np.array([-1, 0], np.int64))])

# Ill-formed or unsupported models.
save("bad_broadcast", [N("Add", ["a", "b"], ["y"], name="bad_add")],
     [("a", f32(2, 3)), ("b", f32(4))], [("y", None)], 13)
save("bad_reshape_count", [N("Reshape", ["x", "s"], ["y"], name="bad_reshape")],
     [("x", f32(2, 3))], [("y", None)], 13, [const("s", np.array([4], np.int64))])
save("bad_nonconstant_shape", [N("Reshape", ["x", "s"], ["y"], name="dyn_reshape")],
     [("x", f32(2, 3)), ("s", np.array([3, 2], np.int64))], [("y", None)], 13)
save("bad_cast_bfloat16", [N("Cast", ["x"], ["y"], name="to_bf16", to=TensorProto.BFLOAT16)],
     [("x", f32(2))], [("y", None)], 13)
save("bad_dropout_training", [N("Dropout", ["x", "r", "t"], ["y"], name="drop_train")],
     [("x", f32(2, 3))], [("y", None)], 13,
     [const("r", np.float32(0.5)), const("t", np.array(True))])
save("bad_quant_dynamic_scale", [N("QuantizeLinear", ["x", "s", "z"], ["y"], name="quant_dyn")],
     [("x", f32(2)), ("s", np.float32(0.1))], [("y", None)], 13, [const("z", np.int8(0))])

open(os.path.join(OUT, "stamp"), "w").write("ok\n")
