#!/usr/bin/python3
"""Small ONNX models for Ember's importer tests, built with onnx.helper.

Usage: gen_importer_models.py OUTDIR
Writes NAME.onnx for every model below, NAME.in<i>.npy / NAME.out<j>.npy where a test
needs values (computed here with numpy, never with Ember), and a stamp file.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(42)


def model(name, nodes, inputs, outputs, inits=(), opset=13, ir=8, extra_opsets=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="ember-tests")
    m.ir_version = ir
    onnx.save(m, os.path.join(OUT, name + ".onnx"))


def npy(name, arrays, kind):
    for i, a in enumerate(arrays):
        np.save(os.path.join(OUT, "%s.%s%d.npy" % (name, kind, i)), a)


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


# A small valid model (also the seed of truncation tests): y = relu(x + b).
b = rng.standard_normal((2, 3)).astype(np.float32)
x = rng.standard_normal((2, 3)).astype(np.float32)
model("valid", [helper.make_node("Add", ["x", "b"], ["s"], name="add"),
                helper.make_node("Relu", ["s"], ["y"], name="relu")],
      [vi("x", [2, 3])], [vi("y", [2, 3])], [numpy_helper.from_array(b, "b")])
npy("valid", [x], "in")
npy("valid", [np.maximum(x + b, 0)], "out")

# Operators Ember lacks, all in one graph: the import must list every one.
model("unsupported",
      [helper.make_node("Relu", ["x"], ["r"], name="relu_ok"),
       helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"], name="nms_1"),
       helper.make_node("MyCustomOp", ["r"], ["c"], name="custom_1", domain="com.example"),
       helper.make_node("StringNormalizer", ["strs"], ["strs2"]),  # unnamed -> index name
       helper.make_node("If", ["cond"], ["z"], name="if_1",
                        then_branch=helper.make_graph(
                            [helper.make_node("Identity", ["x"], ["t"])], "then", [],
                            [vi("t", [2, 3])]),
                        else_branch=helper.make_graph(
                            [helper.make_node("Identity", ["x"], ["e"])], "else", [],
                            [vi("e", [2, 3])]))],
      [vi("x", [2, 3]), vi("boxes", [1, 4, 4]), vi("scores", [1, 1, 4]),
       vi("strs", [2], TensorProto.STRING), vi("cond", [], TensorProto.BOOL)],
      [vi("sel", [1, 3], TensorProto.INT64), vi("c", [2, 3]), vi("strs2", [2], TensorProto.STRING),
       vi("z", [2, 3])],
      extra_opsets=[("com.example", 1)])

# Opset 6 (Relu-6 is still opset 7's Relu; Add-6 is older than opset 7's Add-7) and
# opset 18 (newer than Ember).
for opset in (6, 18):
    model("opset%d" % opset, [helper.make_node("Relu", ["x"], ["y"], name="relu")],
          [vi("x", [2, 3])], [vi("y", [2, 3])], opset=opset)
model("opset6_add", [helper.make_node("Add", ["x", "x"], ["s"], name="add"),
                     helper.make_node("Relu", ["s"], ["y"], name="relu")],
      [vi("x", [2, 3])], [vi("y", [2, 3])], opset=6)

# A symbolic batch dimension.
model("symbolic", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
      [vi("x", ["N", 3])], [vi("y", ["N", 3])])

# A float64 input (imported as float64) and a bfloat16 one (unsupported).
model("float64", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
      [vi("x", [2, 3], TensorProto.DOUBLE)], [vi("y", [2, 3], TensorProto.DOUBLE)])
model("bfloat16", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
      [vi("x", [2, 3], TensorProto.BFLOAT16)], [vi("y", [2, 3], TensorProto.BFLOAT16)])

# Shape -> Gather -> Concat -> Reshape: y = reshape(x, [x.shape[0], -1]).
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
model("shape_chain",
      [helper.make_node("Shape", ["x"], ["shp"], name="shape"),
       helper.make_node("Gather", ["shp", "idx"], ["n"], name="gather", axis=0),
       helper.make_node("Concat", ["n", "minus1"], ["newshape"], name="concat", axis=0),
       helper.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")],
      [vi("x", [2, 3, 4])], [vi("y", [2, 12])],
      [numpy_helper.from_array(np.array([0], np.int64), "idx"),
       numpy_helper.from_array(np.array([-1], np.int64), "minus1")])
npy("shape_chain", [x], "in")
npy("shape_chain", [x.reshape(2, 12)], "out")

# Identity and Dropout (inference) disappear: y = relu(x).
x = rng.standard_normal((2, 3)).astype(np.float32)
model("identity_dropout",
      [helper.make_node("Identity", ["x"], ["a"], name="ident"),
       helper.make_node("Relu", ["a"], ["r"], name="relu"),
       helper.make_node("Dropout", ["r"], ["y"], name="drop")],
      [vi("x", [2, 3])], [vi("y", [2, 3])])
npy("identity_dropout", [x], "in")
npy("identity_dropout", [np.maximum(x, 0)], "out")

# IR 3 style: the initializer W is also listed as a graph input. y = x + W.
x = rng.standard_normal((2, 3)).astype(np.float32)
w = rng.standard_normal((2, 3)).astype(np.float32)
model("init_as_input", [helper.make_node("Add", ["x", "W"], ["y"], name="add")],
      [vi("x", [2, 3]), vi("W", [2, 3])], [vi("y", [2, 3])],
      [numpy_helper.from_array(w, "W")], opset=7, ir=3)
npy("init_as_input", [x], "in")
npy("init_as_input", [x + w], "out")

# A node reading a value defined only later (not topologically sorted).
model("not_topological",
      [helper.make_node("Relu", ["t"], ["y"], name="relu_first"),
       helper.make_node("Neg", ["x"], ["t"], name="neg_second")],
      [vi("x", [2, 3])], [vi("y", [2, 3])])

# Incompatible shapes: the error names the node and op type.
model("bad_shapes", [helper.make_node("Add", ["x", "z"], ["y"], name="add_bad")],
      [vi("x", [2, 3]), vi("z", [4])], [vi("y", [2, 3])])

# A graph output that is a constant (and an unnamed Constant node).
c = np.arange(6, dtype=np.float32).reshape(2, 3)
model("const_output",
      [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c)),
       helper.make_node("Relu", ["x"], ["y"], name="relu")],
      [vi("x", [2, 3])], [vi("y", [2, 3]), vi("c", [2, 3])])
npy("const_output", [c], "out")

# An initializer whose data lives in an external file.
t = TensorProto()
t.name, t.data_type = "w", TensorProto.FLOAT
t.dims.extend([2, 3])
t.data_location = TensorProto.EXTERNAL
e = t.external_data.add()
e.key, e.value = "location", "weights.bin"
model("external", [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
      [vi("x", [2, 3])], [vi("y", [2, 3])], [t])

# Typed-field initializers of every supported kind, reached through a Cast-free chain:
# outputs are the constants themselves (int8 via int32_data, bool via int32_data).
i8 = helper.make_tensor("i8", TensorProto.INT8, [3], [-128, 0, 127])
bl = helper.make_tensor("bl", TensorProto.BOOL, [2], [True, False])
i32 = helper.make_tensor("i32", TensorProto.INT32, [2], [-7, 2147483647])
i64 = helper.make_tensor("i64", TensorProto.INT64, [2], [-(2 ** 40), 5])
raw = numpy_helper.from_array(np.array([1.5, -2.25], np.float32), "raw")
model("init_kinds", [helper.make_node("Identity", ["x"], ["y"], name="id")],
      [vi("x", [2])],
      [vi("y", [2]), vi("i8", [3], TensorProto.INT8), vi("bl", [2], TensorProto.BOOL),
       vi("i32", [2], TensorProto.INT32), vi("i64", [2], TensorProto.INT64), vi("raw", [2])],
      [i8, bl, i32, i64, raw])


# ---- strictness: attributes and declared types ------------------------------------
w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
x8 = vi("x", [1, 3, 8, 8])

# A typo in an attribute name (stirdes for strides): an error, never ignored.
model("attr_typo", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", stirdes=[2, 2])],
      [x8], [vi("y", [1, 4, 6, 6])], [w])

# Clip's min/max became operands at opset 11: at opset 13 an attribute min is unknown.
model("attr_clip13", [helper.make_node("Clip", ["x"], ["y"], name="clip", min=0.0)],
      [vi("x", [2, 3])], [vi("y", [2, 3])])

# An attribute ONNX defines that Ember's importer does not handle (the test registers an
# importer of LpNormalization that knows only axis), next to an unsupported operator:
# both are listed in one ember::Unsupported.
model("attr_unsupported",
      [helper.make_node("LpNormalization", ["x"], ["l"], name="lpnorm", axis=1, p=1),
       helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["sel"], name="nms")],
      [vi("x", [2, 3]), vi("boxes", [1, 4, 4]), vi("scores", [1, 1, 4])],
      [vi("l", [2, 3]), vi("sel", [1, 3], TensorProto.INT64)])

# Declared output shape [1, 4, 3, 3]; the convolution gives [1, 4, 6, 6].
model("declared_shape", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")],
      [x8], [vi("y", [1, 4, 3, 3])], [w])

# Declared element type int64 for a float result.
model("declared_kind", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
      [vi("x", [2, 3])], [vi("y", [2, 3], TensorProto.INT64)])

# Declared rank 3 for a rank-2 result.
model("declared_rank", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
      [vi("x", [2, 3])], [vi("y", [2, 3, 1])])

# value_info of an intermediate value that contradicts inference.
g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                       helper.make_node("Neg", ["r"], ["y"], name="neg")],
                      "declared_value_info", [vi("x", [2, 3])], [vi("y", [2, 3])],
                      value_info=[vi("r", [3, 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
onnx.save(m, os.path.join(OUT, "declared_value_info.onnx"))

# Symbolic and unknown declared dimensions match anything; no shape matches any shape.
y_unknown = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
model("declared_symbolic",
      [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1"),
       helper.make_node("Relu", ["y"], ["z"], name="relu")],
      [x8], [vi("z", ["N", 4, None, "W"]), y_unknown], [w])


# ---- absurd sizes from attributes and shape operands: errors naming the node --------
BIG = 2 ** 40
i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
model("huge_conv_pads",
      [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_pads", pads=[BIG] * 4)],
      [x8], [vi("y", None)], [w])
model("huge_conv_strides",
      [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_same", auto_pad="SAME_UPPER",
                        strides=[2 ** 62, 1], dilations=[2 ** 62, 1])],
      [x8], [vi("y", None)], [w])
model("huge_resize",
      [helper.make_node("Resize", ["x", "", "s"], ["y"], name="resize_big")],
      [x8], [vi("y", None)], [numpy_helper.from_array(np.array([1, 1, 1e30, 1e30], np.float32), "s")])
model("huge_tile", [helper.make_node("Tile", ["x", "r"], ["y"], name="tile_big")],
      [x8], [vi("y", None)], [i64("r", [1, 1, BIG, BIG])])
model("huge_expand", [helper.make_node("Expand", ["x", "s"], ["y"], name="expand_big")],
      [x8], [vi("y", None)], [i64("s", [BIG, 1, 1, 1])])
model("huge_constant_of_shape",
      [helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos_big"),
       helper.make_node("Add", ["x", "c"], ["y"], name="add")],
      [x8], [vi("y", None)], [i64("s", [BIG, BIG])])
model("huge_reshape", [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_big")],
      [x8], [vi("y", None)], [i64("s", [2 ** 62, 4, 0])])
model("huge_pad", [helper.make_node("Pad", ["x", "p"], ["y"], name="pad_big")],
      [x8], [vi("y", None)], [i64("p", [0, 0, 2 ** 62, 2 ** 62, 0, 0, 2 ** 62, 2 ** 62])])


# A Gather whose indices come at run time (an out-of-range index is a run-time error).
model("gather_runtime", [helper.make_node("Gather", ["d", "i"], ["y"], name="gather1", axis=0)],
      [vi("i", [2], TensorProto.INT64)], [vi("y", [2, 3])],
      [numpy_helper.from_array(np.ones((4, 3), np.float32), "d")])


# Recurrent layers (unrolled at import), references from the ONNX equations in numpy:
# a bidirectional LSTM with biases and initial state, and a reverse GRU with
# linear_before_reset; Y, Y_h (and Y_c) are all outputs.
def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def lstm_ref(X, W, R, B, H, C, reverse):
    hs = W.shape[0] // 4
    ys = [None] * X.shape[0]
    order = range(X.shape[0] - 1, -1, -1) if reverse else range(X.shape[0])
    for t in order:
        g = X[t] @ W.T + H @ R.T + B[:4 * hs] + B[4 * hs:]
        i, o, f, c = (g[:, k * hs:(k + 1) * hs] for k in range(4))
        C = sigmoid(f) * C + sigmoid(i) * np.tanh(c)
        H = sigmoid(o) * np.tanh(C)
        ys[t] = H
    return np.stack(ys), H, C


def gru_lbr_ref(X, W, R, B, H, reverse):
    hs = W.shape[0] // 3
    ys = [None] * X.shape[0]
    order = range(X.shape[0] - 1, -1, -1) if reverse else range(X.shape[0])
    for t in order:
        gx = X[t] @ W.T + B[:3 * hs]
        gh = H @ R.T + B[3 * hs:]
        z = sigmoid(gx[:, :hs] + gh[:, :hs])
        r = sigmoid(gx[:, hs:2 * hs] + gh[:, hs:2 * hs])
        hh = np.tanh(gx[:, 2 * hs:] + r * gh[:, 2 * hs:])
        H = (1 - z) * hh + z * H
        ys[t] = H
    return np.stack(ys), H


seq, batch, inp, hid = 3, 2, 4, 5
X = rng.standard_normal((seq, batch, inp)).astype(np.float32)
W = (0.5 * rng.standard_normal((2, 4 * hid, inp))).astype(np.float32)
R = (0.5 * rng.standard_normal((2, 4 * hid, hid))).astype(np.float32)
B = (0.5 * rng.standard_normal((2, 8 * hid))).astype(np.float32)
H0 = rng.standard_normal((2, batch, hid)).astype(np.float32)
C0 = rng.standard_normal((2, batch, hid)).astype(np.float32)
model("lstm_bidirectional",
      [helper.make_node("LSTM", ["x", "W", "R", "B", "", "H0", "C0"], ["y", "y_h", "y_c"],
                        name="lstm", hidden_size=hid, direction="bidirectional")],
      [vi("x", [seq, batch, inp])],
      [vi("y", [seq, 2, batch, hid]), vi("y_h", [2, batch, hid]), vi("y_c", [2, batch, hid])],
      [numpy_helper.from_array(a, n) for a, n in ((W, "W"), (R, "R"), (B, "B"), (H0, "H0"),
                                                  (C0, "C0"))], opset=14)
fw = lstm_ref(X, W[0], R[0], B[0], H0[0], C0[0], False)
bw = lstm_ref(X, W[1], R[1], B[1], H0[1], C0[1], True)
npy("lstm_bidirectional", [X], "in")
npy("lstm_bidirectional", [np.stack([fw[0], bw[0]], 1).astype(np.float32),
                           np.stack([fw[1], bw[1]]).astype(np.float32),
                           np.stack([fw[2], bw[2]]).astype(np.float32)], "out")

Wg = (0.5 * rng.standard_normal((1, 3 * hid, inp))).astype(np.float32)
Rg = (0.5 * rng.standard_normal((1, 3 * hid, hid))).astype(np.float32)
Bg = (0.5 * rng.standard_normal((1, 6 * hid))).astype(np.float32)
model("gru_reverse_lbr",
      [helper.make_node("GRU", ["x", "W", "R", "B"], ["y", "y_h"], name="gru", hidden_size=hid,
                        direction="reverse", linear_before_reset=1)],
      [vi("x", [seq, batch, inp])], [vi("y", [seq, 1, batch, hid]), vi("y_h", [1, batch, hid])],
      [numpy_helper.from_array(a, n) for a, n in ((Wg, "W"), (Rg, "R"), (Bg, "B"))], opset=14)
gy, gh = gru_lbr_ref(X, Wg[0], Rg[0], Bg[0], np.zeros((batch, hid), np.float32), True)
npy("gru_reverse_lbr", [X], "in")
npy("gru_reverse_lbr", [gy[:, None].astype(np.float32), gh[None].astype(np.float32)], "out")

# Sequences shorter than the input (sequence_lens) are unsupported.
model("rnn_short_sequence",
      [helper.make_node("RNN", ["x", "W", "R", "", "lens"], ["", "y_h"], name="rnn_short",
                        hidden_size=hid)],
      [vi("x", [seq, batch, inp])], [vi("y_h", [1, batch, hid])],
      [numpy_helper.from_array(W[:1, :hid], "W"), numpy_helper.from_array(R[:1, :hid], "R"),
       numpy_helper.from_array(np.array([3, 2], np.int32), "lens")], opset=14)

# Range's limit computed from the graph input n alone: the message names n.
model("range_limit_from_input",
      [helper.make_node("Add", ["n", "one"], ["lim"], name="add_one"),
       helper.make_node("Range", ["zero", "lim", "one"], ["y"], name="range")],
      [vi("n", [], TensorProto.INT64)], [vi("y", [None], TensorProto.INT64)],
      [numpy_helper.from_array(np.array(0, np.int64), "zero"),
       numpy_helper.from_array(np.array(1, np.int64), "one")])

open(os.path.join(OUT, "stamp"), "w").write("ok\n")
