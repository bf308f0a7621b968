#!/usr/bin/python3
"""Reference tensors for Ember's NN operator tests, computed with PyTorch.

Usage: gen_nn_refs.py OUTDIR
Writes, for every case, NAME.in<i>.bin (inputs) and NAME.out<j>.bin (PyTorch's
results). Format of a .bin: int64 rank, int64 dims[rank], float32 data (C order,
little-endian). The C++ test (NNKernelsTest.cpp) builds the same node from the case
name and compares. Nothing here uses Ember.
"""
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(1234)
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)


def save(path, t):
    a = np.array(t.detach().numpy(), dtype=np.float32, order="C")
    with open(path, "wb") as f:
        f.write(struct.pack("<q", a.ndim))
        f.write(struct.pack("<%dq" % a.ndim, *a.shape))
        f.write(a.astype("<f4").tobytes())


def case(name, inputs, outputs):
    for i, t in enumerate(inputs):
        save(os.path.join(OUT, "%s.in%d.bin" % (name, i)), t)
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    for j, t in enumerate(outputs):
        save(os.path.join(OUT, "%s.out%d.bin" % (name, j)), t)


def r(*shape):
    return torch.randn(*shape)


# ---- Conv -----------------------------------------------------------------------
x, w, b = r(2, 3, 9, 8), r(4, 3, 3, 3), r(4)
case("conv_basic", [x, w, b], F.conv2d(x, w, b, padding=1))
# strides (2, 3), dilations (2, 1), asymmetric pads: begin (1, 0), end (2, 1)
x, w = r(1, 4, 11, 10), r(6, 4, 3, 2)
case("conv_stride_pad_dil", [x, w], F.conv2d(F.pad(x, (0, 1, 1, 2)), w, stride=(2, 3), dilation=(2, 1)))
x, w, b = r(1, 6, 7, 7), r(9, 2, 3, 3), r(9)
case("conv_group", [x, w, b], F.conv2d(x, w, b, padding=1, groups=3))
x, w, b = r(2, 8, 10, 10), r(8, 1, 3, 3), r(8)
case("conv_depthwise", [x, w, b], F.conv2d(x, w, b, stride=2, padding=1, groups=8))
x, w = r(1, 4, 6, 6), r(8, 1, 3, 3)
case("conv_depthwise_mult", [x, w], F.conv2d(x, w, padding=1, groups=4))
x, w, b = r(2, 16, 5, 5), r(20, 16, 1, 1), r(20)
case("conv_1x1", [x, w, b], F.conv2d(x, w, b))
x, w = r(1, 8, 7, 7), r(4, 8, 1, 1)
case("conv_1x1_stride2", [x, w], F.conv2d(x, w, stride=2))
x, w, b = r(2, 3, 20), r(5, 3, 4), r(5)
case("conv_1d", [x, w, b], F.conv1d(x, w, b, stride=2, padding=1))
x, w = r(1, 2, 5, 6, 7), r(3, 2, 2, 3, 2)
case("conv_3d", [x, w], F.conv3d(x, w, stride=(1, 2, 1), padding=1))
x, w, b = r(1, 32, 28, 28), r(64, 32, 3, 3), r(64)
case("conv_big", [x, w, b], F.conv2d(x, w, b, padding=1))

# ---- ConvTranspose ----------------------------------------------------------------
x, w, b = r(1, 4, 5, 5), r(4, 3, 3, 3), r(3)
case("convtranspose_basic", [x, w, b], F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1))
x, w = r(2, 4, 4, 5), r(4, 2, 3, 3)
case("convtranspose_group_dil", [x, w], F.conv_transpose2d(x, w, groups=2, dilation=2))
x, w = r(1, 2, 6), r(2, 3, 3)
case("convtranspose_1d", [x, w], F.conv_transpose1d(x, w, stride=3))

# ---- Pools ------------------------------------------------------------------------
x = r(1, 3, 9, 9)
case("maxpool_basic", [x], F.max_pool2d(x, 3, stride=2, padding=1))
x = r(1, 2, 10, 10)
case("maxpool_ceil", [x], F.max_pool2d(x, 3, stride=2, ceil_mode=True))
x = r(1, 2, 8, 8)
case("maxpool_dil", [x], F.max_pool2d(x, 2, stride=1, dilation=2))
x = r(2, 3, 12)
case("maxpool_1d", [x], F.max_pool1d(x, 3, stride=2, padding=1))
x = r(1, 2, 6, 6, 6)
case("maxpool_3d", [x], F.max_pool3d(x, 2, stride=2))
x = r(1, 3, 9, 9)
case("avgpool_exclude_pad", [x], F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False))
case("avgpool_include_pad", [x], F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=True))
x = r(1, 2, 10, 10)
case("avgpool_ceil_include_pad", [x], F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True))
case("avgpool_ceil", [x], F.avg_pool2d(x, 3, stride=2, ceil_mode=True, count_include_pad=False))
x = r(1, 2, 5, 6, 7)
case("avgpool_3d", [x], F.avg_pool3d(x, 2, stride=1))
x = r(2, 5, 7, 6)
case("globalavgpool", [x], F.adaptive_avg_pool2d(x, 1))
case("globalmaxpool", [x], F.adaptive_max_pool2d(x, 1))

# ---- Normalisations -----------------------------------------------------------------
x, s, b, m, v = r(2, 3, 4, 5), r(3), r(3), r(3), torch.rand(3) + 0.5
case("batchnorm", [x, s, b, m, v], F.batch_norm(x, m, v, s, b, training=False, eps=1e-3))
x, s, b = r(2, 3, 4, 5), r(3), r(3)
case("instancenorm", [x, s, b], F.instance_norm(x, weight=s, bias=b, eps=1e-5))


def layer_norm_case(name, x, axis, eps):
    shape = x.shape[axis:]
    s, b = r(*shape), r(*shape)
    dims = tuple(range(axis, x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    inv = 1.0 / torch.sqrt(x.var(dim=dims, unbiased=False, keepdim=True) + eps)
    case(name, [x, s, b], [F.layer_norm(x, shape, s, b, eps), mean, inv])


layer_norm_case("layernorm_last", r(2, 3, 8), 2, 1e-5)
layer_norm_case("layernorm_axis1", r(2, 3, 4, 5), 1, 1e-3)
x = r(2, 7, 4, 4)
case("lrn", [x], F.local_response_norm(x, 5, alpha=1e-3, beta=0.75, k=2.0))

# ---- MatMul / Gemm ------------------------------------------------------------------
a, b = r(3, 4), r(4, 5)
case("matmul_2d", [a, b], a @ b)
a, b = r(2, 1, 3, 4), r(5, 4, 6)
case("matmul_broadcast", [a, b], torch.matmul(a, b))
a, b = r(2, 3, 4), r(4, 6)
case("matmul_batch_2d", [a, b], torch.matmul(a, b))
a, b = r(4), r(2, 4, 3)
case("matmul_vec_left", [a, b], torch.matmul(a, b))
a, b = r(2, 3, 4), r(4)
case("matmul_vec_right", [a, b], torch.matmul(a, b))
a, b = r(7), r(7)
case("matmul_vec_vec", [a, b], torch.matmul(a, b))
a, b = r(300, 600), r(600, 2100)
case("matmul_big", [a, b], (a.double() @ b.double()).float())
a, b, c = r(3, 5), r(5, 4), r(4)
case("gemm_vector_c", [a, b, c], 0.5 * a @ b + 2.0 * c)
a, b, c = r(5, 3), r(4, 5), r(3, 1)
case("gemm_trans_ab", [a, b, c], a.t() @ b.t() + c)
a, b = r(6, 4), r(6, 2)
case("gemm_transa_no_c", [a, b], a.t() @ b)

# ---- Softmax family -------------------------------------------------------------------
x = r(3, 4, 5)
for axis in (0, 1, -1):
    tag = str(axis).replace("-", "m")
    case("softmax_axis" + tag, [x], torch.softmax(x, axis))
    case("logsoftmax_axis" + tag, [x], torch.log_softmax(x, axis))
    idx = torch.argmax(x, dim=axis, keepdim=True)
    case("hardmax_axis" + tag, [x], torch.zeros_like(x).scatter_(axis % 3, idx, 1.0))
x = torch.tensor([[1000.0, 1001.0, 1002.0, 1003.0]])
case("softmax_large", [x], torch.softmax(x, -1))

with open(os.path.join(OUT, "stamp"), "w") as f:
    f.write("ok\n")
