#!/usr/bin/python3
"""Trains a small CNN on scikit-learn's digits (8x8 images, 10 classes) with a fixed
seed, exports it to ONNX and writes the train/test split as .npy into OUT:

  digits.onnx        input "image" float32 [1, 1, 8, 8], output "logits" [1, 10]
  train_x.npy        float32 [N, 1, 8, 8] (pixels / 16)     train_y.npy  int64 [N]
  test_x.npy         float32 [M, 1, 8, 8]                    test_y.npy   int64 [M]
  float_accuracy.txt PyTorch's own test accuracy (for the report)

Used by DigitsAccuracyTest.cpp, which calibrates, quantizes and measures top-1 accuracy
of the float and int8 functions on the test images.
"""
import argparse
import os

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Linear(32, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    gen = torch.Generator().manual_seed(0)
    for _ in range(25):
        model.train()
        perm = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), 64):
            idx = perm[i:i + 64]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(torch.from_numpy(x_te)).argmax(1).numpy() == y_te).mean()
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), os.path.join(args.out, "digits.onnx"),
                      input_names=["image"], output_names=["logits"], opset_version=13)
    for name, arr in [("train_x", x_tr), ("train_y", y_tr), ("test_x", x_te), ("test_y", y_te)]:
        np.save(os.path.join(args.out, name + ".npy"), arr)
    with open(os.path.join(args.out, "float_accuracy.txt"), "w") as f:
        f.write(f"{acc:.4f}\n")
    print(f"digits: {len(x_tr)} train / {len(x_te)} test images, PyTorch test accuracy {acc:.4f}")


if __name__ == "__main__":
    main()
