#!/usr/bin/python3
"""Train a small CNN on Fashion-MNIST (package dataset-fashion-mnist) with PyTorch and
export what the NPU accuracy test needs into OUT (cached: re-run only if this script
changed):

  model.onnx          the trained float model (input [1, 1, 28, 28] "input", output
                      [1, 10] "logits"), its classifier a 7x7 convolution
  model_linear.onnx   the same features trained with a Flatten + Linear classifier
  calib.npy           256 training images [256, 1, 28, 28] float32, for calibration
  test_images.npy     the first N test images [N, 1, 28, 28] float32
  test_labels.npy     their labels [N] int64
  info.json           PyTorch's float accuracy on those N images, training figures

Fixed seeds; 20,000 training images, two epochs per model: about two minutes on two cores.
"""
import argparse
import gzip
import hashlib
import json
import os
import sys
import time

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(name):
    with gzip.open(os.path.join(DATA, name), "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(magic & 0xFF)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--test-images", type=int, default=2000)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--train-images", type=int, default=20000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(__file__, "rb") as f:
        settings = {k: v for k, v in vars(args).items() if k != "out"}
        stamp = hashlib.sha256(f.read() + repr(settings).encode()).hexdigest()
    stamp_file = os.path.join(args.out, "stamp")
    if os.path.exists(stamp_file) and open(stamp_file).read() == stamp:
        print("fashion_mnist: up to date")
        return 0

    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    mean, std = 0.2860, 0.3530
    norm = lambda a: ((a.astype(np.float32) / 255.0) - mean) / std
    xtr = norm(read_idx("train-images-idx3-ubyte.gz"))[:, None]
    ytr = read_idx("train-labels-idx1-ubyte.gz").astype(np.int64)
    xte = norm(read_idx("t10k-images-idx3-ubyte.gz"))[:, None]
    yte = read_idx("t10k-labels-idx1-ubyte.gz").astype(np.int64)

    def features():
        return [nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2)]

    # Two classifier heads over the 7x7x32 features: a 7x7 convolution, and the classic
    # Flatten + Linear (which Ember's flatten-gemm-to-conv pass turns into the same
    # convolution, so the NPU needs no flattening of the activations).
    heads = {"model.onnx": [nn.Conv2d(32, 10, 7), nn.Flatten()],
             "model_linear.onnx": [nn.Flatten(), nn.Linear(32 * 7 * 7, 10)]}
    n = args.test_images
    accuracy = {}
    for filename, head in heads.items():
        torch.manual_seed(0)
        model = nn.Sequential(*features(), *head)
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        loss_fn = nn.CrossEntropyLoss()
        gen = torch.Generator().manual_seed(0)
        xt = torch.from_numpy(xtr[:args.train_images])
        yt = torch.from_numpy(ytr[:args.train_images])
        t0 = time.time()
        for epoch in range(args.epochs):
            model.train()
            perm = torch.randperm(len(xt), generator=gen)
            for i in range(0, len(xt), 128):
                idx = perm[i:i + 128]
                opt.zero_grad()
                loss = loss_fn(model(xt[idx]), yt[idx])
                loss.backward()
                opt.step()
            print(f"fashion_mnist: {filename}: epoch {epoch + 1}/{args.epochs} loss "
                  f"{loss.item():.3f} ({time.time() - t0:.0f} s)", flush=True)
        model.eval()
        with torch.no_grad():
            logits = model(torch.from_numpy(xte[:n])).numpy()
        acc = float((logits.argmax(1) == yte[:n]).mean())
        accuracy[filename] = acc
        print(f"fashion_mnist: {filename}: PyTorch float accuracy on {n} test images: "
              f"{100 * acc:.2f}%")
        torch.onnx.export(model, torch.from_numpy(xte[:1]), os.path.join(args.out, filename),
                          input_names=["input"], output_names=["logits"], opset_version=13)
        if filename == "model.onnx":
            # PyTorch's float logits: the reference of the AOT bundle example (examples/bundle).
            np.save(os.path.join(args.out, "test_logits.npy"), logits.astype(np.float32))
    rng = np.random.default_rng(0)
    calib = xtr[rng.choice(len(xtr), 256, replace=False)]
    np.save(os.path.join(args.out, "calib.npy"), calib)
    np.save(os.path.join(args.out, "test_images.npy"), xte[:n])
    np.save(os.path.join(args.out, "test_labels.npy"), yte[:n])
    with open(os.path.join(args.out, "info.json"), "w") as f:
        json.dump({"torch_float_accuracy": accuracy["model.onnx"],
                   "torch_float_accuracy_by_model": accuracy, "test_images": n,
                   "epochs": args.epochs}, f, indent=1)
    with open(stamp_file, "w") as f:
        f.write(stamp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
