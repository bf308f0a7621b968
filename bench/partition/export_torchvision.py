#!/usr/bin/env python3
"""Exports the torchvision models of docs/results/bench_partition.md section 8.1 (not in
the zoo): random weights (torch.manual_seed(0)), opset 17, and one random input
(torch.randn, after the weights) as DIR/MODEL/input.npy, the float output as
DIR/MODEL/expected.npy. Section 8.1's figures are then

  emberc DIR/MODEL/model.onnx -o M.pkg --calibrate DIR/MODEL/input.npy --partition-report

  export_torchvision.py --out DIR [MODEL...]      (default: convnext_tiny swin_t)
"""
import argparse
import pathlib

import numpy as np
import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("models", nargs="*", default=["convnext_tiny", "swin_t"])
    a = ap.parse_args()
    for name in a.models:
        torch.manual_seed(0)
        m = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        d = pathlib.Path(a.out) / name
        d.mkdir(parents=True, exist_ok=True)
        with torch.no_grad():
            torch.onnx.export(m, x, str(d / "model.onnx"), input_names=["input"],
                              output_names=["output"], opset_version=17)
            np.save(d / "expected.npy", m(x).numpy())
        np.save(d / "input.npy", x.numpy())
        print(d / "model.onnx")


if __name__ == "__main__":
    main()
