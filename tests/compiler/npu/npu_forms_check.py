#!/usr/bin/env python3
"""NPU forms of today's operators (issue 42 item 3), end to end through the tools: small
models built and exported by PyTorch here (random weights, fixed seed) into --out; emberc
--partition-report must place them with at most the segments and at least the share of
MACs on the NPU given per model, and ember-run --compare must find the NPU devices (sim,
and rtl where asked) bit-exact with the int8 interpreter and cpu, and the int8 result's
cosine against the float model at least 0.99.

  npu_forms_check.py --emberc E --ember-run R --out DIR [--devices interp,cpu,sim] MODEL...
"""
import argparse
import pathlib
import re
import subprocess
import sys

import numpy as np
import torch
from torch import nn

PLACEMENT = re.compile(r"placement: \d+ of \d+ nodes \([\d.]+%\) and ([\d.]+)% of MACs on the "
                       r"NPU, (\d+) segment\(s\)")


class UNet(nn.Module):
    """A tiny U-Net: two stride-2 encoder convolutions, a decoder of k = s = 2 transposed
    convolutions (16 output channels, a whole NCHWc block, and 8, not one) concatenated
    with the skips."""

    def __init__(self, c=8):
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU())
        self.e2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(2 * c, 4 * c, 3, stride=2, padding=1), nn.ReLU())
        self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.d2 = nn.Sequential(nn.Conv2d(4 * c, 2 * c, 3, padding=1), nn.ReLU())
        self.u1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.d1 = nn.Sequential(nn.Conv2d(2 * c, c, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(c, 3, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(a)
        y = self.d2(torch.cat([self.u2(self.e3(b)), b], 1))
        y = self.d1(torch.cat([self.u1(y), a], 1))
        return self.head(y)


class FpnNeck(nn.Module):
    """A detection neck (FPN top-down path): lateral 1x1 convolutions added to the nearest
    x2 upsampling of the coarser level, then a 3x3 output convolution."""

    def __init__(self, c=16):
        super().__init__()
        self.b1 = nn.Sequential(nn.Conv2d(3, c, 3, stride=2, padding=1), nn.ReLU())
        self.b2 = nn.Sequential(nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU())
        self.b3 = nn.Sequential(nn.Conv2d(2 * c, 4 * c, 3, stride=2, padding=1), nn.ReLU())
        self.l3 = nn.Conv2d(4 * c, c, 1)
        self.l2 = nn.Conv2d(2 * c, c, 1)
        self.l1 = nn.Conv2d(c, c, 1)
        self.out = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        a = self.b1(x)
        b = self.b2(a)
        p3 = self.l3(self.b3(b))
        p2 = self.l2(b) + nn.functional.interpolate(p3, scale_factor=2, mode="nearest")
        p1 = self.l1(a) + nn.functional.interpolate(p2, scale_factor=2, mode="nearest")
        return self.out(p1)


class Upsample(nn.Module):
    """Conv, one upsampling (nearest by `factor`, or a ConvTranspose with a bias from 5 to 7
    channels: kernel, stride, padding, output padding `ct`, k = s = 2 by default), Conv."""

    def __init__(self, factor=None, ct=(2, 2, 0, 0)):
        super().__init__()
        self.factor = factor
        self.c1 = nn.Conv2d(3, 5, 3, padding=1)
        k, s, p, op = ct
        self.up = None if factor else nn.ConvTranspose2d(5, 7, k, stride=s, padding=p,
                                                         output_padding=op)
        self.c2 = nn.Conv2d(5 if factor else 7, 3, 3, padding=1)

    def forward(self, x):
        y = self.c1(x)
        y = self.up(y) if self.up else nn.functional.interpolate(y, scale_factor=self.factor,
                                                                 mode="nearest")
        return self.c2(y)


class Window(nn.Module):
    """Conv to 20 channels (two NCHWc blocks), a constant spatial Slice `x[:, :, lines,
    columns]` (steps 1), Conv: the crop or window of a feature map that segmentation and
    detection exports take."""

    def __init__(self, lines, columns, c=20):
        super().__init__()
        self.lines, self.columns = lines, columns
        self.c1 = nn.Conv2d(3, c, 3, padding=1)
        self.c2 = nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x):
        return self.c2(self.c1(x)[:, :, self.lines, self.columns])


class SegHead(nn.Module):
    """A segmentation head as DeepLab / FCN end: two stride-2 convolutions, a 1 x 1
    classifier of 21 classes, bilinear upsampling by 4 back to the input's size
    (align_corners=False: ONNX's pytorch_half_pixel)."""

    def __init__(self, classes=21):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.classifier = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        y = self.classifier(self.body(x))
        return nn.functional.interpolate(y, scale_factor=4, mode="bilinear", align_corners=False)


class Bilinear(Upsample):
    """Conv, bilinear upsampling by `factor` (align_corners=False), Conv."""

    def forward(self, x):
        y = nn.functional.interpolate(self.c1(x), scale_factor=self.factor, mode="bilinear",
                                      align_corners=False)
        return self.c2(y)


class Conformer(nn.Module):
    """A Conformer convolution module on [B, T, C] (LayerNorm, pointwise Conv1d, GLU,
    depthwise Conv1d, BatchNorm, SiLU, pointwise Conv1d) with a residual and a Linear."""

    def __init__(self, c=32, k=7):
        super().__init__()
        self.ln = nn.LayerNorm(c)
        self.pw1 = nn.Conv1d(c, 2 * c, 1)
        self.dw = nn.Conv1d(c, c, k, padding=k // 2, groups=c)
        self.bn = nn.BatchNorm1d(c)
        self.pw2 = nn.Conv1d(c, c, 1)
        self.ff = nn.Linear(c, c)

    def forward(self, x):
        y = self.ln(x).transpose(1, 2)
        y = nn.functional.glu(self.pw1(y), dim=1)
        y = self.dw(y)
        y = self.bn(y)
        y = y * torch.sigmoid(y)
        y = self.pw2(y).transpose(1, 2)
        return self.ff(x + y)


class PReluCnn(nn.Module):
    """A small CNN with PReLU activations: per-channel slopes (some negative, 12 and 20
    channels, not multiples of the NCHWc block), a single shared slope, a residual and a
    classifier."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 12, 3, padding=1)
        self.a1 = nn.PReLU(12)
        self.c2 = nn.Conv2d(12, 20, 3, stride=2, padding=1)
        self.a2 = nn.PReLU(20)
        self.c3 = nn.Conv2d(20, 20, 3, padding=1)
        self.a3 = nn.PReLU()
        self.fc = nn.Linear(20, 10)
        with torch.no_grad():
            for a in (self.a1, self.a2):
                a.weight.uniform_(-0.5, 0.8)
            self.a3.weight.fill_(0.2)

    def forward(self, x):
        y = self.a2(self.c2(self.a1(self.c1(x))))
        y = self.a3(self.c3(y) + y)
        return self.fc(y.mean((2, 3)))


class ActivationsCnn(nn.Module):
    """Convolutions each followed by another function of one value (LeakyReLU, ELU,
    Hardswish, Hardsigmoid, SELU, CELU, GELU): on the NPU as Lut layers."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(3 if i == 0 else 12, 12, 3, padding=1)
                                   for i in range(7))
        self.acts = nn.ModuleList([nn.LeakyReLU(0.1), nn.ELU(), nn.Hardswish(), nn.Hardsigmoid(),
                                   nn.SELU(), nn.CELU(0.5), nn.GELU()])

    def forward(self, x):
        for conv, act in zip(self.convs, self.acts):
            x = act(conv(x))
        return x


class ConvNextBlocks(nn.Module):
    """A ConvNeXt stage as torchvision writes it: a 4x4 stride-4 stem and a LayerNorm2d
    (permute, LayerNorm over the channels, permute back), two blocks (depthwise 7x7 Conv,
    permute to channels-last, LayerNorm, Linear C -> 4C, GELU, Linear 4C -> C, layer
    scale, permute back, residual), then a LayerNorm2d and a 2x2 stride-2 downsampling
    Conv. After sink-permutation every LayerNorm is a channel LayerNorm on NCHW."""

    def __init__(self, c=40):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 4, stride=4)
        self.stem_ln = nn.LayerNorm(c, eps=1e-6)
        self.blocks = nn.ModuleList()
        for _ in range(2):
            self.blocks.append(nn.ModuleDict({
                "dw": nn.Conv2d(c, c, 7, padding=3, groups=c), "ln": nn.LayerNorm(c, eps=1e-6),
                "fc1": nn.Linear(c, 4 * c), "fc2": nn.Linear(4 * c, c)}))
        self.gamma = nn.Parameter(torch.rand(2, c) + 0.5)
        self.down_ln = nn.LayerNorm(c, eps=1e-6)
        self.down = nn.Conv2d(c, 2 * c, 2, stride=2)
        with torch.no_grad():  # LayerNorm's default scale 1 and bias 0 would hide mistakes
            for ln in [self.stem_ln, self.down_ln] + [b["ln"] for b in self.blocks]:
                ln.weight.uniform_(0.5, 1.5)
                ln.bias.uniform_(-0.5, 0.5)

    @staticmethod
    def norm2d(ln, x):
        return ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)

    def forward(self, x):
        x = self.norm2d(self.stem_ln, self.stem(x))
        for i, b in enumerate(self.blocks):
            y = b["ln"](b["dw"](x).permute(0, 2, 3, 1))
            y = b["fc2"](nn.functional.gelu(b["fc1"](y))) * self.gamma[i]
            x = x + y.permute(0, 3, 1, 2)
        return self.down(self.norm2d(self.down_ln, x))


def swin_tiny():
    """torchvision's SwinTransformer at a small size: 4x4 patches of a 32 x 32 image (8 x 8
    tokens of 32 channels), 4 x 4 windows, a plain and a shifted block (1 head of 32), patch
    merging, two blocks of 2 heads of 32 on 4 x 4 tokens (one window, no shift), the
    LayerNorm, pooling and a 10-class head. After collapse-batch-axes and moves-to-gather
    its window shuffles are Gathers of rows."""
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[1, 2],
                           window_size=[4, 4], num_classes=10)


# name: (module factory, input shape, most segments, least % of MACs on the NPU)
MODELS = {
    "unet": (UNet, (1, 3, 32, 32), 1, 99.9),
    "fpn_neck": (FpnNeck, (1, 3, 32, 32), 1, 99.9),
    "nearest_x2": (lambda: Upsample((2, 2)), (1, 3, 12, 10), 1, 99.9),
    "nearest_h2": (lambda: Upsample((2, 1)), (1, 3, 12, 10), 1, 99.9),
    "nearest_x3": (lambda: Upsample((3, 3)), (1, 3, 12, 10), 1, 99.9),
    "convtranspose_k2": (Upsample, (1, 3, 12, 10), 1, 99.9),
    # Kernel != stride (phase decomposition into one Conv + DepthToSpace, no crop): the
    # GAN / U-Net k = 4, s = 2, p = 1 and k = 3, s = 2, p = 1, output_padding = 1.
    "convtranspose_k4s2p1": (lambda: Upsample(ct=(4, 2, 1, 0)), (1, 3, 12, 10), 1, 99.9),
    "convtranspose_k3s2p1op1": (lambda: Upsample(ct=(3, 2, 1, 1)), (1, 3, 12, 10), 1, 99.9),
    # An output length not a multiple of the stride (k = 3, s = 2, p = 1: 2 H - 1 lines and
    # 2 W - 1 columns): the phase Conv, the DepthToSpace and a crop Slice, also of lines of
    # 599 pixels.
    "convtranspose_k3s2p1": (lambda: Upsample(ct=(3, 2, 1, 0)), (1, 3, 12, 10), 1, 99.9),
    "convtranspose_k3s2p1_wide": (lambda: Upsample(ct=(3, 2, 1, 0)), (1, 3, 2, 300), 1, 99.9),
    # Spatial Slices: a window of lines and columns (negative starts, two images), lines of
    # the whole width (two planes of 95 x 64 pixels, more rows than a stream tile of
    # ember-v1 holds), columns of every line.
    "slice_window": (lambda: Window(slice(-5, -1), slice(2, 7)), (2, 3, 8, 10), 1, 99.9),
    "slice_lines": (lambda: Window(slice(3, -2), slice(None)), (1, 3, 100, 64), 1, 99.9),
    "slice_columns": (lambda: Window(slice(None), slice(1, 6)), (1, 3, 6, 9), 1, 99.9),
    # Lines longer than a dma.st field (260 pixels), tiles of more lines than one (80 x 2).
    "nearest_wide": (lambda: Upsample((2, 2)), (1, 3, 3, 260), 1, 99.9),
    "nearest_tall": (lambda: Upsample((2, 2)), (1, 3, 80, 2), 1, 99.9),
    "convtranspose_wide": (Upsample, (1, 3, 2, 300), 1, 99.9),
    "seg_head": (SegHead, (1, 3, 32, 28), 1, 99.9),
    "bilinear_x2": (lambda: Bilinear((2, 2)), (1, 3, 11, 9), 1, 99.9),
    "bilinear_x3x2": (lambda: Bilinear((3, 2)), (1, 3, 7, 10), 1, 99.9),
    "conformer": (Conformer, (1, 64, 32), 1, 99.9),
    "prelu_cnn": (PReluCnn, (1, 3, 16, 16), 1, 99.9),
    "activations_cnn": (ActivationsCnn, (1, 3, 16, 16), 1, 99.9),
    "convnext_blocks": (ConvNextBlocks, (1, 3, 32, 28), 1, 99.9),
    "swin_tiny": (swin_tiny, (1, 3, 32, 32), 1, 99.9),
}

# Models whose float result on the cpu device (the default pass pipeline, where
# sink-permutation, collapse-batch-axes and moves-to-gather rewrite the graph) is also
# checked against PyTorch's.
FLOAT_CHECKED = {"convnext_blocks", "swin_tiny"}


# Models whose chains of Slices (PyTorch exports one per sliced axis) are merged into one
# Slice over all their axes before the test, so that one node crops lines and columns.
ONE_SLICE = {"slice_window"}


def merge_slices(path):
    """Rewrites the ONNX model at `path`: a Slice whose data is another Slice's result (used
    only there) becomes one Slice over both sets of axes (constant starts, ends, axes,
    steps, as PyTorch exports them in Constant nodes)."""
    import onnx
    from onnx import helper, numpy_helper
    m = onnx.load(path)
    g = m.graph
    const = {n.output[0]: numpy_helper.to_array(n.attribute[0].t)
             for n in g.node if n.op_type == "Constant"}
    by_output = {o: n for n in g.node for o in n.output}
    for n in list(g.node):
        first = by_output.get(n.input[0]) if n.op_type == "Slice" else None
        if first is None or first.op_type != "Slice":
            continue
        if sum(n.input[0] in x.input for x in g.node) != 1:
            continue
        parts = [np.concatenate([const[first.input[i]], const[n.input[i]]]) for i in range(1, 5)]
        names = []
        for i, p in enumerate(parts):
            names.append(f"{n.name}_merged_{i}")
            g.initializer.append(numpy_helper.from_array(p.astype(np.int64), names[-1]))
        merged = helper.make_node("Slice", [first.input[0]] + names, list(n.output),
                                  name=n.name)
        g.node.insert(list(g.node).index(n), merged)
        g.node.remove(n)
        g.node.remove(first)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def export(name, out):
    torch.manual_seed(0)
    make, shape, _, _ = MODELS[name]
    m = make().eval()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm1d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
    x = torch.randn(*shape)
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(m, x, str(d / "model.onnx"), input_names=["input"],
                      output_names=["output"], opset_version=17)
    if name in ONE_SLICE:
        merge_slices(str(d / "model.onnx"))
    np.save(d / "input.npy", x.numpy())
    np.save(d / "expected.npy", m(x).detach().numpy())
    return d


def float_check(ember_run, name, d):
    """The float model on the cpu device against PyTorch's output: within 1e-4 of the
    largest |value| (at least 1e-4)."""
    r = subprocess.run([ember_run, d / "model.onnx", "--device", "cpu", "--input",
                        f"input={d / 'input.npy'}", "--out", d / "float"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{name}: float run on cpu failed: {r.stderr.strip()}"]
    got, want = np.load(d / "float" / "output.npy"), np.load(d / "expected.npy")
    err = float(np.abs(got - want).max())
    tol = 1e-4 * max(1.0, float(np.abs(want).max()))
    print(f"{name}: float (cpu) vs PyTorch: max |difference| {err:.3g} (tolerance {tol:.3g})")
    return [] if err <= tol else [f"{name}: float result {err:.3g} from PyTorch's (> {tol:.3g})"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", default="interp,cpu,sim")
    ap.add_argument("--isa", help="the NPU description (default: emberc's and ember-run's)")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    failed = []
    for name in a.models:
        d = export(name, out)
        _, _, most_segments, least_macs = MODELS[name]
        isa = ["--isa", a.isa] if a.isa else []
        r = subprocess.run([a.emberc, d / "model.onnx", "-o", d / "out.bin", "--calibrate",
                            d / "input.npy", "--partition-report"] + isa,
                           capture_output=True, text=True)
        g = PLACEMENT.search(r.stdout)
        if r.returncode != 0 or not g:
            failed.append(f"{name}: emberc failed: {r.stderr.strip()}")
            continue
        macs, segments = float(g.group(1)), int(g.group(2))
        print(f"{name}: {segments} segment(s), {macs}% of MACs on the NPU")
        if segments > most_segments or macs < least_macs:
            failed.append(f"{name}: {segments} segments (at most {most_segments}), {macs}% of "
                          f"MACs on the NPU (at least {least_macs})")
        if name in FLOAT_CHECKED and "cpu" in a.devices.split(","):
            failed += float_check(a.ember_run, name, d)
        r = subprocess.run([a.ember_run, d / "model.onnx", "--input", f"input={d / 'input.npy'}",
                            "--compare", a.devices] + isa,
                           capture_output=True, text=True)
        print(r.stdout[-1500:])
        devices = [x for x in a.devices.split(",") if x != "interp"]
        for dev in devices:
            if not re.search(rf"^  output +{dev} +yes +0 ", r.stdout, re.M):
                failed.append(f"{name}: {dev} is not bit-exact with the int8 interpreter")
        g = re.search(r"^  output +interp +- +- +([\d.]+) ", r.stdout, re.M)
        if not g or float(g.group(1)) < 0.99:
            failed.append(f"{name}: int8 cosine vs float below 0.99 (or not printed)")
        if "rtl" in devices and "timing sim vs rtl: equal" not in r.stdout:
            failed.append(f"{name}: sim and rtl cycles differ")
        if r.returncode != 0:
            failed.append(f"{name}: ember-run failed: {r.stderr.strip()}")
    for f in failed:
        print("FAIL", f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
