#!/usr/bin/python3
"""Inputs for ember-run's command-line tests (good and bad), made with onnx and numpy
(not with Ember): run with /usr/bin/python3 gen_cli_inputs.py OUT_DIR."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def save_model(graph, path, opset=17, extra_opsets=()):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] +
                              [helper.make_opsetid(d, 1) for d in extra_opsets])
    onnx.save(model, path)


def npy_raw(path, header, data):
    """A .npy file with a hand-written header dict (v1.0, padded to 64 bytes)."""
    h = header.encode()
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data)


def main(out):
    os.makedirs(out, exist_ok=True)
    p = lambda n: os.path.join(out, n)
    # relu.onnx: y = Relu(x); the output name needs sanitising into a file name.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y:0/out", TensorProto.FLOAT, [2, 3])
    save_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y:0/out"], name="relu")],
                                 "relu", [x], [y]), p("relu.onnx"))
    xs = np.array([[-1.5, 0.0, 2.0], [3.25, -0.5, 1.0]], dtype=np.float32)
    np.save(p("x.npy"), xs)
    # shape_of_x.onnx: s = Shape(x). The importer folds it to a constant, so no output
    # depends on x, which ember-run must still accept (checked, then unused).
    s = helper.make_tensor_value_info("s", TensorProto.INT64, [2])
    save_model(helper.make_graph([helper.make_node("Shape", ["x"], ["s"], name="shape")],
                                 "shape_of_x", [x], [s]), p("shape_of_x.onnx"))
    np.save(p("shape_of_x_expected.npy"), np.array(xs.shape, dtype=np.int64))
    np.save(p("x_expected_relu.npy"), np.maximum(xs, 0))
    np.save(p("x_wrong_shape.npy"), xs.reshape(3, 2))
    np.save(p("x_wrong_kind.npy"), xs.astype(np.int32))
    nan = xs.copy()
    nan[1, 2] = np.nan
    np.save(p("x_nan.npy"), nan)
    np.save(p("x_f8.npy"), xs.astype(np.float64))
    np.save(p("x_big_endian.npy"), xs.astype(">f4"))
    np.save(p("x_fortran.npy"), np.asfortranarray(xs))
    full = open(p("x.npy"), "rb").read()
    open(p("x_truncated.npy"), "wb").write(full[:-5])
    open(p("x_bad_magic.npy"), "wb").write(b"\x93NUMPX" + full[6:])
    npy_raw(p("x_bad_dict.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)",
            xs.tobytes())
    npy_raw(p("x_size_mismatch.npy"), "{'descr': '<f4', 'fortran_order': False, "
            "'shape': (2, 2), }", xs.tobytes())

    # unsupported.onnx: two operators Ember lacks (Det, and one of a custom domain).
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3, 3])
    d = helper.make_tensor_value_info("det", TensorProto.FLOAT, [2])
    f = helper.make_tensor_value_info("frob", TensorProto.FLOAT, [2, 3, 3])
    nodes = [helper.make_node("Relu", ["a"], ["r"], name="relu0"),
             helper.make_node("Det", ["r"], ["det"], name="the_det"),
             helper.make_node("Frobnicate", ["r"], ["frob"], name="the_frob",
                              domain="com.example")]
    save_model(helper.make_graph(nodes, "unsupported", [a], [d, f]), p("unsupported.onnx"),
               extra_opsets=["com.example"])

    # truncated.onnx: a Gemm model with a large weight, cut in the middle of it.
    w = helper.make_tensor("w", TensorProto.FLOAT, [64, 64],
                           np.random.default_rng(0).standard_normal(4096).astype(np.float32)
                           .tobytes(), raw=True)
    gi = helper.make_tensor_value_info("g", TensorProto.FLOAT, [1, 64])
    go = helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 64])
    save_model(helper.make_graph([helper.make_node("Gemm", ["g", "w"], ["o"], name="gemm")],
                                 "gemm", [gi], [go], initializer=[w]), p("gemm.onnx"))
    data = open(p("gemm.onnx"), "rb").read()
    open(p("truncated.onnx"), "wb").write(data[: len(data) // 2])
    open(p("not_onnx.onnx"), "wb").write(b"\xff\xfe\xfd this is not a protobuf \x00\x01")
    open(p("text.onnx"), "w").write("ir_version: 8\nthis is a text file, not ONNX\n")
    open(p("empty.onnx"), "wb").close()


if __name__ == "__main__":
    main(sys.argv[1])
