#!/usr/bin/env python3
"""Exports the torchvision models of docs/results/hand/bench_partition.md (section 8.1; not in
the zoo): random weights (torch.manual_seed(0)), opset 17, and one random input
(torch.randn, after the weights) as DIR/MODEL/input.npy, the float output as
DIR/MODEL/expected.npy. A classifier head that torchvision zero-initialises (vit_b_16's
heads.head: every output would be 0) is drawn from N(0, 0.02^2) after the other weights.
--class-token-std S draws a ViT's class token (torchvision: zeros) from N(0, S^2) and
writes MODEL-cls/ instead: with a zero class token the token's row is far below the
residual stream's int8 step in the first layer, which section 8.1 shows. Section 8.1's
figures are then

  emberc DIR/MODEL/model.onnx -o M.pkg --calibrate DIR/MODEL/input.npy --partition-report

  export_torchvision.py --out DIR [--class-token-std S] [MODEL...]
                                           (default: convnext_tiny swin_t vit_b_16)
"""
import argparse
import pathlib

import numpy as np
import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--class-token-std", type=float, default=0.0)
    ap.add_argument("models", nargs="*", default=["convnext_tiny", "swin_t", "vit_b_16"])
    a = ap.parse_args()
    for name in a.models:
        torch.manual_seed(0)
        m = getattr(torchvision.models, name)(weights=None).eval()
        for lin in m.modules():
            if isinstance(lin, torch.nn.Linear) and not lin.weight.any():
                torch.nn.init.normal_(lin.weight, std=0.02)
        x = torch.randn(1, 3, 224, 224)
        folder = name
        if a.class_token_std and hasattr(m, "class_token"):  # after x: the same input
            torch.nn.init.normal_(m.class_token, std=a.class_token_std)
            folder = name + "-cls"
        d = pathlib.Path(a.out) / folder
        d.mkdir(parents=True, exist_ok=True)
        # Traced with autograd on: under no_grad, nn.MultiheadAttention (ViT) takes torch's
        # fused fast path, which has no ONNX form.
        torch.onnx.export(m, x, str(d / "model.onnx"), input_names=["input"],
                          output_names=["output"], opset_version=17)
        with torch.no_grad():
            np.save(d / "expected.npy", m(x).numpy())
        np.save(d / "input.npy", x.numpy())
        print(d / "model.onnx")


if __name__ == "__main__":
    main()
