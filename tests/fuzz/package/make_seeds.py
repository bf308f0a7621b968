#!/usr/bin/env python3
"""Seeds of the package fuzz target: a small ONNX model the NPU cannot run whole
(Conv -> Transpose -> Conv -> Softmax), compiled by emberc into a package, plus every host
segment's graph bytes taken out of it (so the function reader gets seeds of its own).

  make_seeds.py --emberc EMBERC --out DIR
"""
import argparse
import pathlib
import struct
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(path):
    rng = np.random.default_rng(7)
    w1 = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.standard_normal((16, 16, 1, 1)).astype(np.float32), "w2")
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Transpose", ["c1"], ["t"], perm=[0, 1, 3, 2], name="transpose"),
        helper.make_node("Conv", ["t", "w2"], ["c2"], name="conv2"),
        helper.make_node("Softmax", ["c2"], ["y"], axis=1, name="softmax"),
    ]
    g = helper.make_graph(nodes, "seed",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])],
                          [w1, w2])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, path)


def entries(data):
    """(name, bytes) of every entry of a package (docs/package.md)."""
    count = struct.unpack_from("<I", data, 12)[0]
    for i in range(count):
        h = 56 + 80 * i
        name = data[h:h + 56].split(b"\0")[0].decode()
        off, size = struct.unpack_from("<QQ", data, h + 56)
        yield name, data[off:off + size]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    onnx_path = out.parent / "seed_model.onnx"
    model(onnx_path)
    pkg = out / "conv_transpose.pkg"
    subprocess.run([a.emberc, onnx_path, "-o", pkg, "--no-cost-model", "--calibrate",
                    "random:2", "-q"], check=True)
    data = pkg.read_bytes()
    for name, body in entries(data):
        if name.endswith(".graph"):
            (out / name).write_bytes(body)


if __name__ == "__main__":
    main()
