#!/usr/bin/python3
"""The QDQ export of a zoo model for ONNX Runtime's int8 column of bench_cpu.py, made with
Debian's `onnx` package (ONNX Runtime's Python quantization tool is not available here;
onnxruntime-node has none). Calibration runs in ONNX Runtime itself (ort_bench.js
--ranges) on input.npy, the input Ember's int8 column is calibrated on.

  qdq_export.py augment MODEL.onnx FOLDED.onnx AUGMENTED.onnx
      weights' Transposes and BatchNormalization after a Conv folded (FOLDED), and a copy with every
      float intermediate value as a graph output (AUGMENTED, for the calibration run)
  qdq_export.py qdq FOLDED.onnx RANGES.json QDQ.onnx
      QuantizeLinear -> DequantizeLinear pairs from the ranges

The export follows ONNX Runtime's own static quantization defaults (quantize_static,
QuantFormat.QDQ, MinMax): activations uint8 with a zero point (ONNX Runtime's fast path
on x86: u8 x s8 dot products), weights int8 symmetric, per output channel for Conv and
per tensor for Gemm and MatMul, biases int32 with scale s_x * s_w. Quantized: the
activation inputs and the result of Conv, Gemm, MatMul with a constant B, Add of two
activations, GlobalAveragePool, AveragePool and MaxPool (MaxPool's result shares its
input's parameters). A result read only by a Relu or a Clip is not quantized itself;
the Relu's/Clip's result is (ONNX Runtime folds the activation into the QuantizeLinear's
clamp, as Ember folds it into its int8 node). Everything else (LayerNorm's pieces,
Softmax, the attention MatMuls with two run-time operands, Reshape, Transpose) stays
float between a DequantizeLinear and a QuantizeLinear, as in Ember's quantizer.
"""
import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

QUANTIZED = {"Conv", "Gemm", "MatMul", "Add", "GlobalAveragePool", "AveragePool", "MaxPool"}
FUSED_ACTIVATIONS = {"Relu", "Clip"}


def consumers(graph):
    out = {}
    for n in graph.node:
        for i in n.input:
            out.setdefault(i, []).append(n)
    return out


def fold_constants(model):
    """An Identity or a Transpose of a weight becomes a weight (the zoo transformer's
    exporter left nn.Linear's W^T as a Transpose in front of MatMul, and the second
    layer's weights as Identities of the first's equal ones), and Conv ->
    BatchNormalization (the Conv's result read only by it) becomes one Conv."""
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    for n in list(g.node):
        if n.op_type not in ("Identity", "Transpose") or n.input[0] not in inits:
            continue
        perm = next((list(a.ints) for a in n.attribute if a.name == "perm"), None)
        w = numpy_helper.to_array(inits[n.input[0]])
        if n.op_type == "Transpose":
            w = np.ascontiguousarray(np.transpose(w, perm))
        t = numpy_helper.from_array(w, n.output[0])
        g.initializer.append(t)
        inits[t.name] = t
        g.node.remove(n)
    uses = consumers(g)
    producer = {o: n for n in g.node for o in n.output}
    drop = []
    for bn in [n for n in g.node if n.op_type == "BatchNormalization"]:
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or len(uses[bn.input[0]]) != 1 or \
                any(i not in inits for i in list(conv.input[1:]) + list(bn.input[1:])):
            continue
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        scale, bias, mean, var = (numpy_helper.to_array(inits[i]) for i in bn.input[1:5])
        w = numpy_helper.to_array(inits[conv.input[1]])
        b = numpy_helper.to_array(inits[conv.input[2]]) if len(conv.input) > 2 else \
            np.zeros(w.shape[0], np.float32)
        k = scale / np.sqrt(var + eps)
        wname, bname = conv.output[0] + "_folded_w", conv.output[0] + "_folded_b"
        g.initializer.extend([
            numpy_helper.from_array((w * k.reshape(-1, 1, 1, 1)).astype(np.float32), wname),
            numpy_helper.from_array(((b - mean) * k + bias).astype(np.float32), bname)])
        del conv.input[1:]
        conv.input.extend([wname, bname])
        conv.output[0] = bn.output[0]
        drop.append(bn)
    for n in drop:
        g.node.remove(n)
    used = {i for n in g.node for i in n.input}
    for t in [t for t in g.initializer if t.name not in used]:
        g.initializer.remove(t)
    return model


def augment(model):
    """A copy whose outputs also include every float value a node makes."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inferred = shape_inference.infer_shapes(m)
    types = {v.name: v.type.tensor_type.elem_type for v in
             list(inferred.graph.value_info) + list(inferred.graph.output)}
    have = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in have and types.get(o) == TensorProto.FLOAT and n.op_type != "Constant":
                m.graph.output.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, None))
                have.add(o)
    return m


def uint8_params(lo, hi):
    lo, hi = min(0.0, lo), max(0.0, hi)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zp)


def qdq(model, ranges):
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    const = set(inits) | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    uses = consumers(g)
    producer = {o: n for n in g.node for o in n.output}
    graph_inputs = {i.name for i in g.input}

    def activation_inputs(n):
        if n.op_type == "Add":
            return list(n.input) if not any(i in const for i in n.input) else []
        if n.op_type == "MatMul":
            return [n.input[0]] if n.input[1] in const else []
        return [n.input[0]]

    # Values to quantize, and the value whose range (parameters) each one takes.
    wanted = {}
    for n in g.node:
        if n.op_type not in QUANTIZED:
            continue
        ins = activation_inputs(n)
        if not ins:
            continue
        for i in ins:
            wanted.setdefault(i, i)
        out = n.output[0]
        readers = uses.get(out, [])
        if readers and all(r.op_type in FUSED_ACTIVATIONS for r in readers):
            for r in readers:
                wanted.setdefault(r.output[0], r.output[0])
        else:
            wanted[out] = ins[0] if n.op_type == "MaxPool" else out
    # MaxPool's input may itself take another value's parameters: follow the chain.
    params = {}

    def param_of(v):
        while wanted.get(v, v) != v:
            v = wanted[v]
        if v not in params:
            if v not in ranges:
                raise SystemExit(f"qdq_export: no calibration range for {v}")
            params[v] = uint8_params(*ranges[v])
        return params[v]

    new_nodes, new_inits = [], []
    renamed_inputs = {}
    for v in wanted:
        s, zp = param_of(v)
        sname, zname = v + "_qscale", v + "_qzp"
        new_inits += [numpy_helper.from_array(np.array(s, np.float32), sname),
                      numpy_helper.from_array(np.array(zp, np.uint8), zname)]
        if v in graph_inputs:
            src, dst = v, v + "_dq"
            renamed_inputs[v] = dst
        else:
            src, dst = v + "_float", v
            for o_i, o in enumerate(producer[v].output):
                if o == v:
                    producer[v].output[o_i] = src
        new_nodes.append((v, [helper.make_node("QuantizeLinear", [src, sname, zname], [v + "_q"]),
                              helper.make_node("DequantizeLinear", [v + "_q", sname, zname],
                                               [dst])]))

    # Weights (int8 symmetric) and biases (int32, scale s_x * s_w) of Conv, Gemm, MatMul.
    dq_weights = {}
    for n in g.node:
        if n.op_type not in ("Conv", "Gemm", "MatMul") or not activation_inputs(n):
            continue
        wname = n.input[1]
        if wname not in inits:
            continue
        w = numpy_helper.to_array(inits[wname])
        trans_b = next((a.i for a in n.attribute if a.name == "transB"), 0)
        if n.op_type == "Conv":
            axis = 0
            sw = np.abs(w.reshape(w.shape[0], -1)).max(axis=1) / 127.0
        else:
            axis = None
            sw = np.array(np.abs(w).max() / 127.0)
        sw = np.where(sw > 0, sw, 1.0).astype(np.float32)
        if wname not in dq_weights:
            shape = (-1,) + (1,) * (w.ndim - 1) if axis == 0 else ()
            q = np.clip(np.round(w / sw.reshape(shape)), -127, 127).astype(np.int8)
            attrs = {"axis": axis} if axis is not None else {}
            new_inits += [numpy_helper.from_array(q, wname + "_q"),
                          numpy_helper.from_array(sw, wname + "_wscale"),
                          numpy_helper.from_array(np.zeros(sw.shape, np.int8), wname + "_wzp")]
            new_nodes.append((None, [helper.make_node(
                "DequantizeLinear", [wname + "_q", wname + "_wscale", wname + "_wzp"],
                [wname], **attrs)]))
            dq_weights[wname] = sw
            g.initializer.remove(inits[wname])
        bias_index = 2
        if len(n.input) > bias_index and n.input[bias_index] in inits and \
                (n.op_type == "Conv" or trans_b in (0, 1)):
            bname = n.input[bias_index]
            b = numpy_helper.to_array(inits[bname])
            sx, _ = param_of(n.input[0])
            sb = (np.float32(sx) * dq_weights[wname]).astype(np.float32)
            if b.ndim == 1 and (sb.ndim == 0 or sb.shape[0] == b.shape[0]):
                qb = np.round(b / sb).astype(np.int32)
                nb = bname + "_" + n.name + "_bq"
                new_inits += [numpy_helper.from_array(qb, nb),
                              numpy_helper.from_array(sb, nb + "_scale"),
                              numpy_helper.from_array(np.zeros(sb.shape, np.int32), nb + "_zp")]
                attrs = {"axis": 0} if sb.ndim == 1 else {}
                new_nodes.append((None, [helper.make_node(
                    "DequantizeLinear", [nb, nb + "_scale", nb + "_zp"], [nb + "_dq"], **attrs)]))
                n.input[bias_index] = nb + "_dq"

    for n in g.node:  # after the biases, which look up their input's parameters
        for k, i in enumerate(n.input):
            if i in renamed_inputs:
                n.input[k] = renamed_inputs[i]

    # Topological order: each Q/DQ pair right after its value's producer.
    after = {}
    head = []
    for v, nodes in new_nodes:
        if v is None or v in graph_inputs:
            head += nodes
        else:
            after.setdefault(v + "_float", []).extend(nodes)
    order = list(head)
    for n in g.node:
        order.append(n)
        for o in n.output:
            order += after.get(o, [])
    del g.node[:]
    g.node.extend(order)
    g.initializer.extend(new_inits)
    used = {i for n in g.node for i in n.input}
    for t in [t for t in g.initializer if t.name not in used]:
        g.initializer.remove(t)
    onnx.checker.check_model(model)
    return model, len(wanted)


def main(argv):
    if len(argv) == 4 and argv[0] == "augment":
        m = fold_constants(onnx.load(argv[1]))
        onnx.save(m, argv[2])
        onnx.save(augment(m), argv[3])
    elif len(argv) == 4 and argv[0] == "qdq":
        with open(argv[2]) as f:
            ranges = json.load(f)
        m, count = qdq(onnx.load(argv[1]), ranges)
        onnx.save(m, argv[3])
        print(f"qdq_export: {count} values quantized -> {argv[3]}")
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
