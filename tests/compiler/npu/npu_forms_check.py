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


# name: (module factory, input shape, most segments, least % of MACs on the NPU)
MODELS = {
    "conformer": (Conformer, (1, 64, 32), 1, 99.9),
    "prelu_cnn": (PReluCnn, (1, 3, 16, 16), 1, 99.9),
    "activations_cnn": (ActivationsCnn, (1, 3, 16, 16), 1, 99.9),
}


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
    np.save(d / "input.npy", x.numpy())
    np.save(d / "expected.npy", m(x).detach().numpy())
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", default="interp,cpu,sim")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    failed = []
    for name in a.models:
        d = export(name, out)
        _, _, most_segments, least_macs = MODELS[name]
        r = subprocess.run([a.emberc, d / "model.onnx", "-o", d / "out.bin", "--calibrate",
                            d / "input.npy", "--partition-report"], capture_output=True, text=True)
        g = PLACEMENT.search(r.stdout)
        if r.returncode != 0 or not g:
            failed.append(f"{name}: emberc failed: {r.stderr.strip()}")
            continue
        macs, segments = float(g.group(1)), int(g.group(2))
        print(f"{name}: {segments} segment(s), {macs}% of MACs on the NPU")
        if segments > most_segments or macs < least_macs:
            failed.append(f"{name}: {segments} segments (at most {most_segments}), {macs}% of "
                          f"MACs on the NPU (at least {least_macs})")
        r = subprocess.run([a.ember_run, d / "model.onnx", "--input", f"input={d / 'input.npy'}",
                            "--compare", a.devices],
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
