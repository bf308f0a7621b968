#!/usr/bin/python3
"""Pre-quantized ONNX models for the fold-qdq pass and the QLinear importers, written
into OUT:

  conformance_<case>/   ONNX's own node tests test_qlinearconv, test_qlinearmatmul_2D
                        and _3D converted to int8 (Ember has no uint8): codes and zero
                        points minus 128, which leaves (q - zp) and so every real value
                        unchanged; weights, scales and zero points become initializers.
                        model.onnx, input.npy (int8), expected.npy (ONNX's output - 128).
  qdq_conv/, qdq_mixed/, qdq_attention/, qdq_layernorm/, qdq_prelu/
                        QDQ models as torch FX / onnxruntime export them, built with
                        onnx.helper: model.onnx and input.npy (float).
"""
import argparse
import glob
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
RNG = np.random.default_rng(5)


def to_int8(a):
    """uint8 codes -> int8 codes of the same real values (zero points shift alike)."""
    return (a.astype(np.int16) - 128).astype(np.int8) if a.dtype == np.uint8 else a


def convert_conformance(name, out):
    src = os.path.join(NODE_TESTS, name)
    if not os.path.isdir(src):
        return False
    model = onnx.load(os.path.join(src, "model.onnx"))
    data_dir = sorted(glob.glob(os.path.join(src, "test_data_set_*")))[0]
    arrays = []
    for i in range(len(model.graph.input)):
        t = TensorProto()
        with open(os.path.join(data_dir, f"input_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        arrays.append(to_int8(numpy_helper.to_array(t)))
    t = TensorProto()
    with open(os.path.join(data_dir, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    expected = to_int8(numpy_helper.to_array(t))
    node = model.graph.node[0]
    inputs = [model.graph.input[0].name]
    inits = [numpy_helper.from_array(a, inp.name)
             for a, inp in zip(arrays[1:], model.graph.input[1:])]
    x = model.graph.input[0]
    dims = [d.dim_value for d in x.type.tensor_type.shape.dim]
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(inputs[0], TensorProto.INT8, dims)],
        [helper.make_tensor_value_info(model.graph.output[0].name, TensorProto.INT8,
                                       list(expected.shape))],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    d = os.path.join(out, "conformance_" + name)
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "input.npy"), arrays[0])
    np.save(os.path.join(d, "expected.npy"), expected)
    return True


class Builder:
    """Accumulates nodes and initializers of a QDQ graph."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, arr, base):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(arr, n))
        return n

    def node(self, op, inputs, base, **attrs):
        out = self.name(base)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def q(self, x, scale, zp):
        return self.node("QuantizeLinear", [x, self.const(np.float32(scale), "s"),
                                            self.const(np.int8(zp), "zp")], "q")

    def dq(self, x, scale, zp, axis=None):
        s = np.asarray(scale, dtype=np.float32)
        z = np.asarray(zp, dtype=np.int8 if np.asarray(zp).dtype != np.int32 else np.int32)
        attrs = {} if axis is None else {"axis": axis}
        return self.node("DequantizeLinear", [x, self.const(s, "s"), self.const(z, "zp")], "dq",
                         **attrs)

    def qdq(self, x, scale, zp):
        return self.dq(self.q(x, scale, zp), scale, zp)

    def weight(self, w, axis):
        """Per-channel symmetric int8 weights along axis, as a DQ of an int8 constant."""
        other = tuple(i for i in range(w.ndim) if i != axis)
        s = (np.abs(w).max(axis=other) / 127).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8)
        return self.dq(self.const(q, "w"), s, np.zeros(s.shape, np.int8), axis), s

    def bias(self, b, s_x, s_w):
        s = (np.float32(s_x) * s_w).astype(np.float32)
        q = np.round(b / s).astype(np.int32)
        return self.dq(self.const(q, "b"), s, np.zeros(s.shape, np.int32), 0)

    def save(self, d, inputs, outputs, x, opset=13):
        os.makedirs(d, exist_ok=True)
        g = helper.make_graph(self.nodes, os.path.basename(d), inputs, outputs, self.inits)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]),
                  os.path.join(d, "model.onnx"))
        np.save(os.path.join(d, "input.npy"), x)


def qdq_conv(out):
    b = Builder()
    x = RNG.normal(size=(1, 3, 8, 8)).astype(np.float32)
    sx, zpx = 0.025, -3
    xin = b.qdq("x", sx, zpx)
    w, sw = b.weight(RNG.normal(scale=0.3, size=(4, 3, 3, 3)).astype(np.float32), 0)
    bias = b.bias(RNG.normal(scale=0.1, size=4).astype(np.float32), sx, sw)
    c = b.node("Conv", [xin, w, bias], "conv", pads=[1, 1, 1, 1])
    r = b.node("Relu", [c], "relu")
    y = b.dq(b.q(r, 0.02, -128), 0.02, -128)
    b.save(os.path.join(out, "qdq_conv"),
           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], x)


def qdq_mixed(out):
    b = Builder()
    x = RNG.normal(size=(2, 16)).astype(np.float32)
    sx, zpx = 0.03, 5
    xin = b.qdq("x", sx, zpx)
    w, _ = b.weight(RNG.normal(scale=0.25, size=(16, 8)).astype(np.float32), 1)
    m = b.qdq(b.node("MatMul", [xin, w], "matmul"), 0.04, -2)
    s = b.qdq(b.node("Sigmoid", [m], "sigmoid"), 1 / 256, -128)
    a = b.dq(b.q(b.node("Add", [m, s], "add"), 0.05, 0), 0.05, 0)
    wg, swg = b.weight(RNG.normal(scale=0.25, size=(8, 16)).astype(np.float32), 0)
    bias = b.bias(RNG.normal(scale=0.1, size=8).astype(np.float32), sx, swg)
    g = b.dq(b.q(b.node("Gemm", [xin, wg, bias], "gemm", transB=1), 0.06, 1), 0.06, 1)
    b.save(os.path.join(out, "qdq_mixed"),
           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
           [helper.make_tensor_value_info(a, TensorProto.FLOAT, None),
            helper.make_tensor_value_info(g, TensorProto.FLOAT, None)], x)


def qdq_attention(out):
    """mean over tokens of Softmax(x x^T) x, every value between a Q and a DQ: MatMuls of
    two activations, a Softmax whose output parameters are ONNX Runtime's (1/256, -128)
    and a ReduceMean."""
    b = Builder()
    x = RNG.normal(size=(2, 5, 8)).astype(np.float32)
    sx, zpx = 0.03, 4
    xin = b.qdq("x", sx, zpx)
    xt = b.qdq(b.node("Transpose", [xin], "transpose", perm=[0, 2, 1]), sx, zpx)
    s = b.qdq(b.node("MatMul", [xin, xt], "scores"), 0.06, -10)
    p = b.qdq(b.node("Softmax", [s], "softmax", axis=-1), 1 / 256, -128)
    c = b.qdq(b.node("MatMul", [p, xin], "context"), 0.02, 3)
    y = b.dq(b.q(b.node("ReduceMean", [c], "pool", axes=[1], keepdims=0), 0.01, -2), 0.01, -2)
    b.save(os.path.join(out, "qdq_attention"),
           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 8])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], x)


def qdq_layernorm(out):
    """LayerNormalization (opset 17) between a DQ and a Q, as ONNX Runtime's quantizer
    writes a transformer's normalisation: float scale and bias, one output."""
    b = Builder()
    x = RNG.normal(size=(2, 5, 12)).astype(np.float32)
    xin = b.qdq("x", 0.03, -6)
    gamma = b.const(RNG.uniform(0.5, 1.5, size=12).astype(np.float32), "gamma")
    beta = b.const(RNG.normal(scale=0.2, size=12).astype(np.float32), "beta")
    n = b.node("LayerNormalization", [xin, gamma, beta], "layernorm", axis=-1, epsilon=1e-5)
    y = b.dq(b.q(n, 0.025, 2), 0.025, 2)
    b.save(os.path.join(out, "qdq_layernorm"),
           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 12])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], x, opset=17)


def qdq_prelu(out):
    """PRelu between a DQ and a Q, twice: a slope per channel ([C, 1, 1], negative and
    positive, as a DQ of int8 codes the way ONNX Runtime's quantizer writes it) and one
    shared slope."""
    b = Builder()
    x = RNG.normal(size=(2, 6, 5, 5)).astype(np.float32)
    xin = b.qdq("x", 0.02, 3)
    slope, s_a = b.weight(RNG.uniform(-0.6, 0.9, size=(6, 1, 1)).astype(np.float32), 0)
    n = b.node("PRelu", [xin, slope], "prelu")
    m = b.node("PRelu", [b.qdq(n, 0.015, -10), b.const(np.float32([0.25]), "shared")], "shared")
    y = b.dq(b.q(m, 0.015, -10), 0.015, -10)
    b.save(os.path.join(out, "qdq_prelu"),
           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 5, 5])],
           [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], x)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    done = [n for n in ("test_qlinearconv", "test_qlinearmatmul_2D", "test_qlinearmatmul_3D")
            if convert_conformance(n, args.out)]
    qdq_conv(args.out)
    qdq_mixed(args.out)
    qdq_attention(args.out)
    qdq_layernorm(args.out)
    qdq_prelu(args.out)
    print(f"qdq models in {args.out}; converted conformance cases: {done}")


if __name__ == "__main__":
    main()
