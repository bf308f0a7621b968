#!/usr/bin/python3
"""Ember's model zoo: exports PyTorch models with fixed seeds and random weights to ONNX,
with an input and PyTorch's own output as .npy, so that Ember's results can be checked
against a reference nobody here wrote.

Run with Debian's Python (torch 1.13, torchvision 0.14, onnx, numpy):

    /usr/bin/python3 tests/models/gen_models.py --out BUILD/models [--only resnet18,...]

Layout of OUT/<model>/: model.onnx, input.npy (ONNX input "input"), expected.npy
(PyTorch's output for ONNX output "output"), info.json, and a stamp file. A model is
re-exported only when this script (or the torch version) changed since its stamp.

--resolution N exports the image models with an N x N input instead of 224 x 224 (same
architectures, same seeds; the others unchanged): the description sweep test
(tests/tools/dse, docs/extending-isa.md section 4) runs the CNNs at 32 x 32 to stay
inside CI time. Such exports go to their own folder, made at test time, never committed.
"""
import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision

IMAGE = (1, 3, 224, 224)


def _randomize_batchnorm(model, gen):
    """Non-trivial BN statistics so that BN folding is really exercised (fresh
    torchvision models have mean 0, var 1, gamma 1, beta 0)."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)


def vision(name, **kwargs):
    def build():
        model = getattr(torchvision.models, name)(weights=None, **kwargs)
        _randomize_batchnorm(model, torch.Generator().manual_seed(1234))
        return model
    return build


def transformer(d_model, nhead, dim_ff, layers, activation="relu", norm_first=False):
    def build():
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_ff, dropout=0.1,
                                           activation=activation, batch_first=True,
                                           norm_first=norm_first)
        encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        # LayerNorm affine parameters start at 1/0: make them non-trivial.
        gen = torch.Generator().manual_seed(4321)
        for m in encoder.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.data.copy_(torch.rand(m.normalized_shape, generator=gen) + 0.5)
                m.bias.data.copy_(torch.randn(m.normalized_shape, generator=gen) * 0.1)
        return encoder
    return build


class TokenClassifier(nn.Module):
    """Embedding (Gather on int64 tokens) + learned positions + encoder + mean + head."""

    def __init__(self, vocab=100, seq=16, d_model=128, nhead=8, dim_ff=256, classes=10):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.randn(1, seq, d_model) * 0.1)
        self.encoder = transformer(d_model, nhead, dim_ff, 2)()
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens) + self.pos).mean(dim=1))


class LeNet(nn.Module):
    """LeNet-5 on 28x28 images: a classifier head on a flattened 16x5x5 feature map (the
    pattern of LeNet and VGG heads: Flatten -> Linear)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def make_input(shape):
    """A float input of `shape` (standard normal), or ("int64", shape, high): tokens."""
    gen = torch.Generator().manual_seed(7)
    if shape and shape[0] == "int64":
        return torch.randint(0, shape[2], shape[1], generator=gen, dtype=torch.int64)
    return torch.randn(*shape, generator=gen)


# name -> (builder, input shape, opset, do_constant_folding, group)
# "core" models are the ones issue 2 names; "other" ones prove generality.
# KEEP_BN: exported with TrainingMode.PRESERVE so that torch does not fold BatchNorm
# into the convolutions (Ember's importer/passes must handle BatchNormalization).
KEEP_BN = {"resnet18"}
MODELS = {
    "resnet18": (vision("resnet18"), IMAGE, 13, False, "core"),
    "resnet50": (vision("resnet50"), IMAGE, 13, True, "core"),
    "mobilenet_v2": (vision("mobilenet_v2"), IMAGE, 13, True, "core"),
    "transformer": (transformer(64, 4, 128, 2), (2, 16, 64), 14, False, "core"),
    "squeezenet1_0": (vision("squeezenet1_0"), IMAGE, 13, True, "other"),
    "shufflenet_v2_x0_5": (vision("shufflenet_v2_x0_5"), IMAGE, 13, True, "other"),
    "googlenet": (vision("googlenet", aux_logits=False, init_weights=True), IMAGE, 13, True,
                  "other"),
    "densenet121": (vision("densenet121"), IMAGE, 13, True, "other"),
    "mobilenet_v3_small": (vision("mobilenet_v3_small"), IMAGE, 14, True, "other"),
    "efficientnet_b0": (vision("efficientnet_b0"), IMAGE, 13, True, "other"),
    "transformer_gelu": (transformer(96, 6, 256, 3, activation="gelu", norm_first=True),
                         (1, 12, 96), 17, True, "other"),
    "transformer_classifier": (TokenClassifier, ("int64", (1, 16), 100), 13, True, "other"),
    "regnet_x_400mf": (vision("regnet_x_400mf"), IMAGE, 13, True, "other"),
    "lenet": (LeNet, (1, 1, 28, 28), 13, True, "other"),
}


def script_hash():
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(torch.__version__.encode() + torchvision.__version__.encode())
    return h.hexdigest()


def export(name, out_dir, stamp_value, resolution=None):
    build, shape, opset, fold, group = MODELS[name]
    if resolution and shape == IMAGE:
        shape = (1, 3, resolution, resolution)
    folder = os.path.join(out_dir, name)
    stamp = os.path.join(folder, "stamp")
    files = ["model.onnx", "input.npy", "expected.npy", "info.json"]
    if (os.path.exists(stamp) and open(stamp).read() == stamp_value
            and all(os.path.exists(os.path.join(folder, f)) for f in files)):
        print(f"gen_models: {name}: up to date")
        return
    os.makedirs(folder, exist_ok=True)
    if os.path.exists(stamp):
        os.remove(stamp)
    start = time.time()
    torch.manual_seed(0)
    model = build().eval()
    x = make_input(shape)
    with torch.no_grad():
        expected = model(x).numpy()
    tmp = os.path.join(folder, "model.onnx.tmp")
    # Exported outside no_grad: torch's fused transformer fast path cannot be traced.
    mode = torch.onnx.TrainingMode.PRESERVE if name in KEEP_BN else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, x, tmp, opset_version=opset, do_constant_folding=fold,
                      training=mode, input_names=["input"], output_names=["output"])
    os.replace(tmp, os.path.join(folder, "model.onnx"))
    np.save(os.path.join(folder, "input.npy"), x.numpy())
    np.save(os.path.join(folder, "expected.npy"), expected.astype(np.float32))
    with open(os.path.join(folder, "info.json"), "w") as f:
        json.dump({"name": name, "group": group, "opset": opset, "constant_folding": fold,
                   "batchnorm_kept": name in KEEP_BN,
                   "input_shape": list(x.shape), "input_dtype": str(x.numpy().dtype), "output_shape": list(expected.shape),
                   "torch": torch.__version__, "torchvision": torchvision.__version__}, f,
                  indent=1)
    with open(stamp, "w") as f:
        f.write(stamp_value)
    print(f"gen_models: {name}: exported (opset {opset}, folding {fold}, "
          f"output {list(expected.shape)}) in {time.time() - start:.1f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output folder (one sub-folder per model)")
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--group", default="", help="only models of this group (core, other)")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--resolution", type=int, default=0,
                    help="input height and width of the image models (default 224)")
    args = ap.parse_args()
    if args.list:
        for n, spec in MODELS.items():
            print(n, spec[4])
        return 0
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"gen_models: unknown model(s) {unknown}; known: {list(MODELS)}", file=sys.stderr)
        return 1
    if args.group:
        names = [n for n in names if MODELS[n][4] == args.group]
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    stamp_value = script_hash() + (f" resolution {args.resolution}" if args.resolution else "")
    for n in names:
        export(n, args.out, stamp_value, args.resolution)
    return 0


if __name__ == "__main__":
    sys.exit(main())
