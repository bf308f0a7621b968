#!/usr/bin/python3
"""Independent numpy implementation of the integer operators of docs/numerics.md
(sections 3 and 4), for random cases of every int8 operator.

Writes into OUT (the build folder): one .npy per tensor and cases.json describing each
case (operator, attributes, operands with their quantization parameters, the expected
int8 result). The C++ test (Int8KernelsTest.cpp) builds each node, runs the
interpreter's int8 kernel and compares bit for bit. Nothing here calls Ember.
"""
import argparse
import json
import math
import os

import numpy as np

RNG = np.random.default_rng(20261123)


def f32(x):
    """The double value of x rounded to float32 (scales are float32 in the IR)."""
    return float(np.float32(x))


def quantize_multiplier(m):
    """Section 3: (M, S) with m ~= M / 2^S, M = round(f * 2^31) (half up), S = 31 - e."""
    if m == 0:
        return 0, 62
    f, e = math.frexp(m)
    big_m = math.floor(f * 2**31 + 0.5)
    s = 31 - e
    if big_m == 2**31:
        big_m //= 2
        s -= 1
    if s > 62:
        return 0, 62
    assert s >= 1, m
    return big_m, s


def requant(acc, m, zp, lo=-128, hi=127):
    """y = clamp(((acc * M + 2^(S-1)) >> S) + zp, lo, hi), arithmetic shift, int64."""
    big_m, s = quantize_multiplier(m)
    acc = np.asarray(acc, dtype=np.int64)
    y = ((acc * big_m + (1 << (s - 1))) >> s) + zp
    return np.clip(y, lo, hi).astype(np.int8)


def wrap32(a):
    return ((np.asarray(a, dtype=np.int64) + 2**31) % 2**32 - 2**31).astype(np.int64)


def q_bound(v, s, zp):
    r = np.round(v / s) + zp  # numpy rounds half to even
    return int(np.clip(r, -128, 127))


def bounds(act, s, zp):
    """Section 4.9 from an activation description {kind, min, max}."""
    lo, hi = -128, 127
    if act is None:
        return lo, hi
    if act["kind"] == "relu":
        return max(lo, zp), hi
    return max(lo, q_bound(act["min"], s, zp)), min(hi, q_bound(act["max"], s, zp))


def act_attrs(act):
    if act is None:
        return {}
    if act["kind"] == "relu":
        return {"activation": "relu"}
    return {"activation": "clip", "activation_min": float(act["min"]),
            "activation_max": float(act["max"])}


def random_act():
    c = RNG.integers(0, 3)
    if c == 0:
        return None
    if c == 1:
        return {"kind": "relu"}
    # Bounds in units of the output scale (see scale_act): inside the int8 range.
    return {"kind": "clip", "min": float(RNG.uniform(-60.0, 0.0)), "max": float(RNG.uniform(20.0, 100.0))}


def scale_act(act, sy):
    """A random_act() with its clip bounds turned into real values for output scale sy."""
    if act is None or act["kind"] != "clip":
        return act
    return {"kind": "clip", "min": act["min"] * sy, "max": act["max"] * sy}


def random_zp():
    return int(RNG.choice([-128, -127, -120, -5, 0, 3, 90, 126, 127]))


def random_codes(shape):
    return RNG.integers(-128, 128, size=shape, dtype=np.int64).astype(np.int8)


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []
        self.skipped = 0

    def tensor(self, name, arr):
        path = os.path.join(self.out, name + ".npy")
        np.save(path, arr)
        return path

    def add(self, name, op, attrs, operands, expected, y_scale, y_zp):
        """operands: list of (role, array, params) with params {scale, zp} or
        {scales, zps, axis} or None (plain tensor); role 'input' or 'const'."""
        if len(np.unique(expected)) <= 2:
            self.skipped += 1  # saturated everywhere: would test nothing
            return
        ops = []
        for i, (role, arr, params) in enumerate(operands):
            entry = {"role": role, "file": self.tensor(f"{name}_in{i}", arr)}
            if params is not None:
                entry.update(params)
            ops.append(entry)
        self.cases.append({
            "name": name, "op": op, "attrs": attrs, "operands": ops,
            "expected": self.tensor(f"{name}_expected", expected),
            "scale": f32(y_scale), "zero_point": int(y_zp)})

    def save(self):
        with open(os.path.join(self.out, "cases.json"), "w") as f:
            json.dump(self.cases, f, indent=1)


def out_dim(n, k, s, pb, pe, d=1, ceil=False):
    span = n + pb + pe - ((k - 1) * d + 1)
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + pb:
        o -= 1
    return o


def conv_acc(x, zpx, w, b, group, strides, pads, dil, zpw=None):
    """acc[n, m, oh, ow] = b[m] + sum (x - zp_x) * (w - zp_w[m]) over taps and the group's
    channels (zp_w = 0 unless given: imported models may have weight zero points)."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.full((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), zpx, dtype=np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    xp -= zpx
    oh = out_dim(h, kh, strides[0], pads[0], pads[2], dil[0])
    ow = out_dim(wd, kw, strides[1], pads[1], pads[3], dil[1])
    acc = np.zeros((n, m, oh, ow), dtype=np.int64)
    mg = m // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dil[0], j * dil[1]
                xs = xp[:, g * cg:(g + 1) * cg,
                        r0:r0 + strides[0] * (oh - 1) + 1:strides[0],
                        c0:c0 + strides[1] * (ow - 1) + 1:strides[1]]
                wt = w[g * mg:(g + 1) * mg, :, i, j].astype(np.int64)
                if zpw is not None:
                    wt = wt - np.asarray(zpw, dtype=np.int64)[g * mg:(g + 1) * mg, None]
                acc[:, g * mg:(g + 1) * mg] += np.einsum("nchw,mc->nmhw", xs, wt)
    if b is not None:
        acc += b.astype(np.int64)[None, :, None, None]
    return wrap32(acc)


def choose_out_scale(real):
    """An output scale that spreads a real result over most of the int8 range."""
    return f32(max(float(np.std(real)), 1e-6) / 40.0)


def center_zp(real, sy):
    """An output zero point that maps the mean of a real result near the middle of the
    int8 range (plus a random offset), so that a case exercises more than saturation."""
    z = -float(np.mean(real)) / sy + int(RNG.integers(-30, 31))
    return int(np.clip(np.round(z), -128, 127))


def conv_cases(wr):
    configs = [
        # c, m, h, w, k, stride, pads, dil, group
        (3, 8, 9, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
        (4, 6, 10, 7, (3, 3), (2, 2), (1, 0, 2, 1), (1, 1), 1),
        (4, 4, 11, 11, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1),
        (6, 4, 8, 8, (3, 2), (2, 1), (0, 1, 1, 0), (1, 2), 2),
        (8, 8, 9, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 8),   # depthwise
        (8, 16, 9, 9, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 8),  # depthwise, multiplier 2
        (16, 12, 5, 5, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1), # 1x1 direct
        (5, 7, 6, 6, (1, 1), (2, 2), (1, 1, 0, 0), (1, 1), 1),   # 1x1 strided, padded
        (64, 40, 7, 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1), # K = 576 spans blocks
    ]
    for idx, (c, m, h, wd, k, st, pads, dil, group) in enumerate(configs):
        for variant in range(2):
            n = 1 + variant
            x = random_codes((n, c, h, wd))
            w = RNG.integers(-127, 128, size=(m, c // group, k[0], k[1])).astype(np.int8)
            use_bias = variant == 0 or idx % 2 == 0
            b = RNG.integers(-5000, 5000, size=(m,)).astype(np.int32) if use_bias else None
            sx, zpx = f32(RNG.uniform(0.01, 0.1)), random_zp()
            sw = [f32(v) for v in RNG.uniform(0.001, 0.02, size=m)]
            act = random_act()
            acc = conv_acc(x, zpx, w, b, group, st, pads, dil)
            real = acc * sx * np.array(sw)[None, :, None, None]
            sy = choose_out_scale(real)
            zpy = center_zp(real, sy)
            act = scale_act(act, sy)
            lo, hi = bounds(act, sy, zpy)
            y = np.zeros(acc.shape, dtype=np.int8)
            for mm in range(m):
                y[:, mm] = requant(acc[:, mm], f32(sx) * f32(sw[mm]) / f32(sy), zpy, lo, hi)
            attrs = {"kernel_shape": list(k), "strides": list(st), "dilations": list(dil),
                     "pads": [pads[0], pads[1], pads[2], pads[3]], "group": group}
            attrs.update(act_attrs(act))
            operands = [("input", x, {"scale": sx, "zero_point": zpx}),
                        ("const", w, {"scales": sw, "zero_points": [0] * m, "axis": 0})]
            if b is not None:
                operands.append(("const", b, {"scales": [f32(sx * s) for s in sw],
                                              "zero_points": [0] * m, "axis": 0}))
            wr.add(f"conv{idx}_{variant}", "Conv", attrs, operands, y, sy, zpy)


def asymmetric_weight_cases(wr):
    """Weight zero points != 0 (imported QLinearConv / QDQ models) and a batched b."""
    for idx, (c, m, k, pads, group) in enumerate([(3, 5, (3, 3), (1, 1, 1, 1), 1),
                                                  (4, 4, (3, 3), (0, 1, 1, 0), 4),
                                                  (6, 4, (1, 1), (0, 0, 0, 0), 2)]):
        x = random_codes((1, c, 7, 6))
        w = random_codes((m, c // group, k[0], k[1]))
        zpw = [int(v) for v in RNG.integers(-30, 31, size=m)]
        sx, zpx = f32(RNG.uniform(0.01, 0.1)), random_zp()
        sw = [f32(v) for v in RNG.uniform(0.001, 0.02, size=m)]
        acc = conv_acc(x, zpx, w, None, group, (1, 1), pads, (1, 1), zpw)
        real = acc * sx * np.array(sw)[None, :, None, None]
        sy = choose_out_scale(real)
        zpy = center_zp(real, sy)
        y = np.zeros(acc.shape, dtype=np.int8)
        for mm in range(m):
            y[:, mm] = requant(acc[:, mm], f32(sx) * f32(sw[mm]) / f32(sy), zpy)
        attrs = {"kernel_shape": list(k), "pads": list(pads), "group": group}
        wr.add(f"convzpw{idx}", "Conv", attrs,
               [("input", x, {"scale": sx, "zero_point": zpx}),
                ("const", w, {"scales": sw, "zero_points": zpw, "axis": 0})], y, sy, zpy)
    a = random_codes((2, 3, 5))
    b = random_codes((2, 5, 4))
    sa, zpa, sb, zpb = f32(0.05), random_zp(), f32(0.03), random_zp()
    acc = np.matmul(a.astype(np.int64) - zpa, b.astype(np.int64) - zpb)
    real = acc * sa * sb
    sy = choose_out_scale(real)
    zpy = center_zp(real, sy)
    y = requant(acc, f32(sa) * f32(sb) / f32(sy), zpy)
    wr.add("matmul_batched_b", "MatMul", {},
           [("input", a, {"scale": sa, "zero_point": zpa}),
            ("const", b, {"scale": sb, "zero_point": zpb})], y, sy, zpy)


def gemm_cases(wr):
    for idx, (m, k, n, trans_b, batch) in enumerate(
            [(4, 16, 8, 0, None), (3, 40, 5, 1, None), (7, 600, 9, 0, None), (1, 9, 3, 1, None),
             (5, 12, 6, 0, (2, 3)), (4, 20, 7, 0, (2,))]):
        op = "Gemm" if batch is None else "MatMul"
        shape_a = (m, k) if batch is None else tuple(batch) + (m, k)
        a = random_codes(shape_a)
        bkn = RNG.integers(-127, 128, size=(k, n)).astype(np.int8)
        sa, zpa = f32(RNG.uniform(0.01, 0.1)), random_zp()
        sw = [f32(v) for v in RNG.uniform(0.001, 0.02, size=n)]
        zpb = [0] * n
        per_tensor_b = op == "MatMul" and idx % 2 == 0
        if per_tensor_b:  # an activation-like b: one scale, a non-zero zero point
            sw = [sw[0]] * n
            zpb = [random_zp()] * n
            bkn = random_codes((k, n))
        bias = RNG.integers(-3000, 3000, size=(n,)).astype(np.int32) if op == "Gemm" else None
        acc = (a.astype(np.int64) - zpa) @ (bkn.astype(np.int64) - np.array(zpb))
        if bias is not None:
            acc = acc + bias
        acc = wrap32(acc)
        real = acc * sa * np.array(sw)
        sy = choose_out_scale(real)
        zpy = center_zp(real, sy)
        act = random_act()
        act = scale_act(act, sy)
        lo, hi = bounds(act, sy, zpy)
        y = np.zeros(acc.shape, dtype=np.int8)
        for j in range(n):
            y[..., j] = requant(acc[..., j], f32(sa) * f32(sw[j]) / f32(sy), zpy, lo, hi)
        attrs = act_attrs(act)
        b_arr, b_axis = bkn, 1
        if trans_b:
            b_arr, b_axis = np.ascontiguousarray(bkn.T), 0
            attrs["transB"] = 1
        b_params = ({"scale": sw[0], "zero_point": zpb[0]} if per_tensor_b else
                    {"scales": sw, "zero_points": zpb, "axis": b_axis})
        operands = [("input", a, {"scale": sa, "zero_point": zpa}), ("const", b_arr, b_params)]
        if bias is not None:
            operands.append(("const", bias, {"scales": [f32(sa * s) for s in sw],
                                             "zero_points": [0] * n, "axis": 0}))
        wr.add(f"{op.lower()}{idx}", op, attrs, operands, y, sy, zpy)


def add_mul_cases(wr):
    shapes = [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((1, 3, 1), (2, 1, 5)),
              ((2, 8, 3, 3), (1, 8, 1, 1)), ((5,), ())]
    for idx, (sa_shape, sb_shape) in enumerate(shapes):
        for op in ("Add", "Mul"):
            a, b = random_codes(sa_shape), random_codes(sb_shape)
            sa, sb = f32(RNG.uniform(0.005, 0.2)), f32(RNG.uniform(0.005, 0.2))
            zpa, zpb = random_zp(), random_zp()
            ai, bi = a.astype(np.int64) - zpa, b.astype(np.int64) - zpb
            act = random_act() if op == "Add" else None
            if op == "Add":
                real = ai * sa + bi * sb
                sy = f32(choose_out_scale(real) * 4)
                zpy = center_zp(real, sy)
                ra, rb = f32(sa) / f32(sy), f32(sb) / f32(sy)
                e = math.frexp(max(ra, rb))[1]
                s = min(31, max(1, 20 - e))
                ma, mb = math.floor(ra * 2**s + 0.5), math.floor(rb * 2**s + 0.5)
                t = ai * ma + bi * mb
                act = scale_act(act, sy)
                lo, hi = bounds(act, sy, zpy)
                y = np.clip(((t + (1 << (s - 1))) >> s) + zpy, lo, hi).astype(np.int8)
            else:
                acc = ai * bi
                sy = f32(choose_out_scale(acc * sa * sb) * 4)
                zpy = center_zp(acc * sa * sb, sy)
                y = requant(acc, f32(sa) * f32(sb) / f32(sy), zpy)
            wr.add(f"{op.lower()}{idx}", op, act_attrs(act),
                   [("input", a, {"scale": sa, "zero_point": zpa}),
                    ("input", b, {"scale": sb, "zero_point": zpb})], y, sy, zpy)


def pool_window_codes(x, k, st, pads, dil, ceil, fill):
    """Padded input (value fill, extended for ceil_mode) and the window slices."""
    n, c, h, w = x.shape
    oh = out_dim(h, k[0], st[0], pads[0], pads[2], dil[0], ceil)
    ow = out_dim(w, k[1], st[1], pads[1], pads[3], dil[1], ceil)
    need_h = (oh - 1) * st[0] + (k[0] - 1) * dil[0] + 1
    need_w = (ow - 1) * st[1] + (k[1] - 1) * dil[1] + 1
    big_h = max(need_h, h + pads[0] + pads[2])
    big_w = max(need_w, w + pads[1] + pads[3])
    xp = np.full((n, c, big_h, big_w), fill, dtype=np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    return xp, oh, ow


def pool_cases(wr):
    configs = [  # k, stride, pads, dilation, ceil
        ((3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 0),
        ((2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1),
        ((3, 2), (2, 1), (1, 0, 1, 1), (1, 1), 1),
        ((3, 3), (1, 1), (0, 0, 0, 0), (2, 2), 0),
        ((3, 3), (3, 3), (1, 1, 1, 1), (1, 1), 1),
    ]
    for idx, (k, st, pads, dil, ceil) in enumerate(configs):
        x = random_codes((2, 3, 10, 9))
        sx, zpx = f32(RNG.uniform(0.01, 0.1)), random_zp()
        xp, oh, ow = pool_window_codes(x, k, st, pads, dil, ceil, -128)
        y = np.full((2, 3, oh, ow), -128, dtype=np.int64)
        for i in range(oh):
            for j in range(ow):
                for a in range(k[0]):
                    for b in range(k[1]):
                        y[:, :, i, j] = np.maximum(
                            y[:, :, i, j], xp[:, :, i * st[0] + a * dil[0], j * st[1] + b * dil[1]])
        attrs = {"kernel_shape": list(k), "strides": list(st), "pads": list(pads),
                 "dilations": list(dil), "ceil_mode": ceil}
        wr.add(f"maxpool{idx}", "MaxPool", attrs, [("input", x, {"scale": sx, "zero_point": zpx})],
               y.astype(np.int8), sx, zpx)
        if dil != (1, 1):
            continue
        for include in (0, 1):
            h, w = x.shape[2:]
            acc = np.zeros((2, 3, oh, ow), dtype=np.int64)
            y = np.zeros((2, 3, oh, ow), dtype=np.int8)
            sy = f32(sx * RNG.uniform(0.5, 1.5))
            zpy = center_zp((x.astype(np.int64) - zpx) * sx, sy)
            for i in range(oh):
                for j in range(ow):
                    r0, c0 = i * st[0] - pads[0], j * st[1] - pads[1]
                    rows = [r for r in range(r0, r0 + k[0])]
                    cols = [cc for cc in range(c0, c0 + k[1])]
                    inside_r = [r for r in rows if 0 <= r < h]
                    inside_c = [cc for cc in cols if 0 <= cc < w]
                    pad_r = [r for r in rows if -pads[0] <= r < h + pads[2]]
                    pad_c = [cc for cc in cols if -pads[1] <= cc < w + pads[3]]
                    cnt = len(pad_r) * len(pad_c) if include else len(inside_r) * len(inside_c)
                    s = np.zeros((2, 3), dtype=np.int64)
                    for r in inside_r:
                        for cc in inside_c:
                            s += x[:, :, r, cc].astype(np.int64) - zpx
                    acc[:, :, i, j] = s
                    y[:, :, i, j] = requant(s, f32(sx) / (f32(sy) * cnt), zpy)
            attrs2 = {"kernel_shape": list(k), "strides": list(st), "pads": list(pads),
                      "ceil_mode": ceil, "count_include_pad": include}
            wr.add(f"avgpool{idx}_{include}", "AveragePool", attrs2,
                   [("input", x, {"scale": sx, "zero_point": zpx})], y, sy, zpy)
    for idx in range(2):
        x = random_codes((2, 5, 7, 6))
        sx, zpx = f32(RNG.uniform(0.01, 0.1)), random_zp()
        sy = f32(sx * RNG.uniform(0.2, 1.0))
        zpy = center_zp((x.astype(np.int64) - zpx) * sx, sy)
        acc = (x.astype(np.int64) - zpx).sum(axis=(2, 3), keepdims=True)
        y = requant(acc, f32(sx) / (f32(sy) * 42), zpy)
        wr.add(f"gap{idx}", "GlobalAveragePool", {}, [("input", x, {"scale": sx, "zero_point": zpx})],
               y, sy, zpy)
        ym = x.max(axis=(2, 3), keepdims=True)
        wr.add(f"gmp{idx}", "GlobalMaxPool", {}, [("input", x, {"scale": sx, "zero_point": zpx})],
               ym, sx, zpx)


def unary_cases(wr):
    for idx in range(3):
        x = random_codes((3, 17))
        sx, zpx = f32(RNG.uniform(0.01, 0.1)), random_zp()
        y = np.maximum(x.astype(np.int64), zpx).astype(np.int8)
        wr.add(f"relu{idx}", "Relu", {}, [("input", x, {"scale": sx, "zero_point": zpx})], y, sx, zpx)
        lo_v, hi_v = float(RNG.uniform(-3, 0)), float(RNG.uniform(0, 3))
        lo, hi = bounds({"kind": "clip", "min": lo_v, "max": hi_v}, sx, zpx)
        y = np.clip(x.astype(np.int64), lo, hi).astype(np.int8)
        wr.add(f"clip{idx}", "Clip", {"min": lo_v, "max": hi_v},
               [("input", x, {"scale": sx, "zero_point": zpx})], y, sx, zpx)
        sy = f32(sx * RNG.uniform(0.3, 3.0))
        zpy = center_zp((x.astype(np.int64) - zpx) * sx, sy)
        y = requant(x.astype(np.int64) - zpx, f32(sx) / f32(sy), zpy)
        wr.add(f"rescale{idx}", "Rescale", {}, [("input", x, {"scale": sx, "zero_point": zpx})],
               y, sy, zpy)
        # Pad with a real value quantized with the (shared) parameters.
        value = float(RNG.uniform(-1, 1))
        qv = q_bound(value, sx, zpx)
        y = np.full((3 + 1 + 2, 17 + 3), qv, dtype=np.int8)
        y[1:4, 0:17] = x
        wr.add(f"pad{idx}", "Pad", {"pads": [1, 0, 2, 3], "mode": "constant", "value": value},
               [("input", x, {"scale": sx, "zero_point": zpx})], y, sx, zpx)


def matmul_act_cases(wr):
    """MatMul of two activations: batched b, both per tensor with their own zero points."""
    for idx, (batch, m, k, n) in enumerate([((2, 3), 5, 12, 6), ((4,), 16, 16, 16), ((), 7, 33, 9)]):
        a = random_codes(tuple(batch) + (m, k))
        b = random_codes(tuple(batch) + (k, n))
        sa, zpa = f32(RNG.uniform(0.01, 0.1)), random_zp()
        sb, zpb = f32(RNG.uniform(0.01, 0.1)), random_zp()
        acc = wrap32(np.matmul(a.astype(np.int64) - zpa, b.astype(np.int64) - zpb))
        real = acc * sa * sb
        sy = choose_out_scale(real)
        zpy = center_zp(real, sy)
        y = requant(acc, f32(sa) * f32(sb) / f32(sy), zpy)
        wr.add(f"matmul_act{idx}", "MatMul", {}, [("input", a, {"scale": sa, "zero_point": zpa}),
                                                  ("input", b, {"scale": sb, "zero_point": zpb})],
               y, sy, zpy)


def softmax_cases(wr):
    """Section 4.10, in Python integers: exp table of the input scale, integer division."""
    for idx, (shape, axis) in enumerate([((3, 17), -1), ((2, 5, 9), 1), ((4, 64), -1),
                                         ((2, 3, 4, 33), 3)]):
        x = random_codes(shape)
        sx, zpx = f32(RNG.uniform(0.02, 0.3)), random_zp()
        table = [int(round(65536.0 * math.exp(-sx * d))) for d in range(256)]
        sy, zpy = f32(1.0 / 255.0), -128
        big_m, s = quantize_multiplier(1.0 / (sy * 65536.0))
        xm = np.moveaxis(x.astype(np.int64), axis, -1)
        y = np.zeros(xm.shape, dtype=np.int8)
        for line in np.ndindex(*xm.shape[:-1]):
            codes = [int(v) for v in xm[line]]
            mx = max(codes)
            total = sum(table[mx - v] for v in codes)
            for i, v in enumerate(codes):
                q = (table[mx - v] << 16) // total
                y[line + (i,)] = min(127, max(-128, ((q * big_m + (1 << (s - 1))) >> s) + zpy))
        wr.add(f"softmax{idx}", "Softmax", {"axis": axis},
               [("input", x, {"scale": sx, "zero_point": zpx})], np.moveaxis(y, -1, axis), sy, zpy)


def layernorm_cases(wr):
    """Section 4.11, in Python integers (math.isqrt for the square root)."""
    for idx, (shape, axis, eps) in enumerate([((4, 64), -1, 1e-5), ((2, 3, 40), 2, 1e-5),
                                              ((2, 6, 5), 1, 1e-5), ((3, 16), -1, 0.5)]):
        x = random_codes(shape)
        if idx == 3:
            x[0, :] = x[0, 0]  # a constant row: the variance is epsilon alone
        sx, zpx = f32(RNG.uniform(0.01, 0.1)), random_zp()
        ax = axis % len(shape)
        n = int(np.prod(shape[ax:]))
        gamma = RNG.uniform(-1.5, 1.5, size=n).astype(np.float32)
        beta = RNG.uniform(-0.5, 0.5, size=n).astype(np.float32)
        rows = (x.astype(np.int64) - zpx).reshape(-1, n) * sx
        mean = rows.mean(axis=1, keepdims=True)
        real = (rows - mean) / np.sqrt(rows.var(axis=1, keepdims=True) + eps) * gamma + beta
        sy = choose_out_scale(real)
        zpy = center_zp(real, sy)
        e = min(int(round(float(n) * float(n) * eps / (sx * sx))), 2**60)
        mult = []
        for g in gamma:
            big_m, s = quantize_multiplier(abs(float(g)) / (sy * 65536.0))
            mult.append((-big_m if g < 0 else big_m, s))
        offs = [int(min(2**31 - 1, max(-2**31, round(float(b) / sy)))) for b in beta]
        y = np.zeros((rows.shape[0], n), dtype=np.int8)
        for r, row in enumerate((x.astype(np.int64) - zpx).reshape(-1, n)):
            u = [int(v) for v in row]
            total = sum(u)
            c = [n * v - total for v in u]
            d = sum(v * v for v in c) // n + e
            bits = d.bit_length()
            k = (62 - bits) // 2 if bits < 62 else 0
            root = math.isqrt(d << (2 * k))
            for i, ci in enumerate(c):
                z = 0
                if root > 0:
                    z = ((abs(ci) << (k + 16)) + root // 2) // root
                    z = -z if ci < 0 else z
                big_m, s = mult[i]
                v = ((z * big_m + (1 << (s - 1))) >> s) + offs[i] + zpy
                y[r, i] = min(127, max(-128, v))
        inner = tuple(shape[ax:])
        wr.add(f"layernorm{idx}", "LayerNormalization", {"axis": axis, "epsilon": eps},
               [("input", x, {"scale": sx, "zero_point": zpx}),
                ("const", gamma.reshape(inner), None), ("const", beta.reshape(inner), None)],
               y.reshape(shape), sy, zpy)


def reducemean_cases(wr):
    """Section 4.5 over the axes of ReduceMean: the sum of (x - zp_x), requantized by
    s_x / (s_y * n), n the elements reduced into one output."""
    for idx, (shape, axes, keep) in enumerate([((2, 6, 8), [1], 0), ((3, 4, 5), [0, 2], 1),
                                               ((2, 3, 4, 5), [-1, -2], 1)]):
        x = random_codes(shape)
        sx, zpx = f32(RNG.uniform(0.01, 0.1)), random_zp()
        acc = np.sum(x.astype(np.int64) - zpx, axis=tuple(axes), keepdims=bool(keep))
        n = x.size // acc.size
        real = acc * sx / n
        # Averages cluster around the codes' mean: a scale from the largest magnitude and a
        # zero point near 0 keep every output inside the int8 range.
        sy = f32(max(float(np.max(np.abs(real))), 1e-6) / 100.0)
        zpy = int(RNG.integers(-20, 21))
        y = requant(wrap32(acc), f32(sx) / (f32(sy) * n), zpy)
        wr.add(f"reducemean{idx}", "ReduceMean", {"axes": axes, "keepdims": keep},
               [("input", x, {"scale": sx, "zero_point": zpx})], y, sy, zpy)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    wr = Writer(args.out)
    conv_cases(wr)
    gemm_cases(wr)
    asymmetric_weight_cases(wr)
    add_mul_cases(wr)
    pool_cases(wr)
    unary_cases(wr)
    matmul_act_cases(wr)
    softmax_cases(wr)
    layernorm_cases(wr)
    reducemean_cases(wr)
    wr.save()
    print(f"{len(wr.cases)} int8 reference cases in {args.out} ({wr.skipped} degenerate skipped)")


if __name__ == "__main__":
    main()
