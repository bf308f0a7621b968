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


def _randomize_norms(model, gen):
    """Non-trivial statistics and affine parameters for every BatchNorm (1-D and 2-D) and
    LayerNorm (fresh ones are the identity: mistakes in their folding would not show)."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(c, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(c, generator=gen) * 0.1)
        elif isinstance(m, nn.LayerNorm):
            m.weight.data.copy_(torch.rand(m.normalized_shape, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(m.normalized_shape, generator=gen) * 0.1)


# --- Small versions of today's models (issue 42 item 6): 32 x 32 images, a few channels, so
# that interp, cpu and sim run each in seconds (models.npu.*: bit-exact, cycles checked in).

def convnext_mini():
    """torchvision's ConvNeXt with three small stages (24, 48, 96 channels, two blocks
    each): patchify stem, depthwise 7x7, channels-last LayerNorm and Linear layers, layer
    scale (drawn, not torchvision's 1e-6, which would hide the blocks), LayerNorm2d
    downsampling."""
    from torchvision.models.convnext import CNBlock, CNBlockConfig, ConvNeXt
    model = ConvNeXt([CNBlockConfig(24, 48, 2), CNBlockConfig(48, 96, 2),
                      CNBlockConfig(96, None, 2)], num_classes=10)
    gen = torch.Generator().manual_seed(4242)
    for m in model.modules():
        if isinstance(m, CNBlock):
            m.layer_scale.data.copy_(torch.rand(m.layer_scale.shape, generator=gen) * 0.9 + 0.1)
    _randomize_norms(model, gen)
    return model


def vit_mini():
    """torchvision's VisionTransformer on 32 x 32 images: 8 x 8 patches (16 tokens and the
    class token), 2 layers of width 64, 2 heads, MLP 128. torchvision zero-initialises the
    classification head (every output would be 0): it is drawn here."""
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                                                 num_heads=2, hidden_dim=64, mlp_dim=128,
                                                 num_classes=10)
    nn.init.normal_(model.heads.head.weight, std=0.05)
    nn.init.normal_(model.heads.head.bias, std=0.05)
    _randomize_norms(model, torch.Generator().manual_seed(4243))
    return model


def swin_mini():
    """torchvision's SwinTransformer on 32 x 32 images: 4 x 4 patches (8 x 8 tokens), two
    stages of two blocks (width 64 and 128, 2 and 4 heads of 32 channels, whole lane blocks
    on both descriptions), 4 x 4 windows: a shifted window block (cyclic shift, window
    mask) in the first stage, patch merging between them."""
    model = torchvision.models.SwinTransformer(patch_size=[4, 4], embed_dim=64, depths=[2, 2],
                                               num_heads=[2, 4], window_size=[4, 4],
                                               num_classes=10)
    _randomize_norms(model, torch.Generator().manual_seed(4245))
    return model


def _cbr(cin, cout, stride=1, dilation=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=dilation,
                                   dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


def _cbr1(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class DeepLabMini(nn.Module):
    """A DeepLabV3+-style segmentation net: a stride-8 encoder, an ASPP of a 1x1 and a
    dilated 3x3 branch, bilinear x2 upsampling to the stride-4 features, a decoder
    convolution, a 21-class 1x1 classifier and bilinear upsampling to the input's size
    (align_corners=False, by the size of the input as torchvision's heads do)."""

    def __init__(self, classes=21):
        super().__init__()
        self.stem, self.low, self.high = _cbr(3, 16, 2), _cbr(16, 24, 2), _cbr(24, 48, 2)
        self.aspp1, self.aspp2 = _cbr1(48, 32), _cbr(48, 32, dilation=2)
        self.project, self.low_proj = _cbr1(64, 32), _cbr1(24, 16)
        self.fuse = _cbr(48, 32)
        self.classifier = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        low = self.low(self.stem(x))
        high = self.high(low)
        a = self.project(torch.cat([self.aspp1(high), self.aspp2(high)], 1))
        a = nn.functional.interpolate(a, scale_factor=2, mode="bilinear", align_corners=False)
        y = self.classifier(self.fuse(torch.cat([a, self.low_proj(low)], 1)))
        return nn.functional.interpolate(y, size=x.shape[-2:], mode="bilinear",
                                         align_corners=False)


class UNetMini(nn.Module):
    """A U-Net of three levels: stride-2 encoder convolutions, a decoder of k = s = 2
    transposed convolutions concatenated with the skips, a 2-class 1x1 head."""

    def __init__(self, c=16):
        super().__init__()
        self.e1, self.e2, self.e3 = _cbr(3, c), _cbr(c, 2 * c, 2), _cbr(2 * c, 4 * c, 2)
        self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.d2 = _cbr(4 * c, 2 * c)
        self.u1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.d1 = _cbr(2 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(a)
        y = self.d2(torch.cat([self.u2(self.e3(b)), b], 1))
        return self.head(self.d1(torch.cat([self.u1(y), a], 1)))


class FpnMini(nn.Module):
    """A detection neck: a three-level backbone (strides 2, 4, 8) into torchvision's
    FeaturePyramidNetwork (lateral 1x1 convolutions, nearest upsampling of the coarser
    level to the finer one's size, 3x3 output convolutions) and a 3x3 head on the finest
    level."""

    def __init__(self, c=16):
        super().__init__()
        from torchvision.ops import FeaturePyramidNetwork
        self.b1, self.b2, self.b3 = _cbr(3, c, 2), _cbr(c, 2 * c, 2), _cbr(2 * c, 4 * c, 2)
        self.fpn = FeaturePyramidNetwork([c, 2 * c, 4 * c], 16)
        self.head = nn.Conv2d(16, 9, 3, padding=1)

    def forward(self, x):
        a = self.b1(x)
        b = self.b2(a)
        feats = self.fpn({"p1": a, "p2": b, "p3": self.b3(b)})
        return self.head(feats["p1"])


class ConformerMini(nn.Module):
    """A Conformer block on one sequence [1, T, C]: half-step feed-forward (LayerNorm,
    Linear, SiLU, Linear), multi-head self-attention (2 heads of 32 channels, whole lane
    blocks on both descriptions), the convolution module (LayerNorm,
    pointwise Conv1d, GLU, depthwise Conv1d, BatchNorm, SiLU, pointwise Conv1d), a second
    half-step feed-forward and a final LayerNorm."""

    def __init__(self, d=64, heads=2, k=7):
        super().__init__()

        def ff():
            return nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.SiLU(),
                                 nn.Linear(2 * d, d))

        self.ff1, self.ff2 = ff(), ff()
        self.ln_att = nn.LayerNorm(d)
        self.att = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln_conv = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.ln_out = nn.LayerNorm(d)
        _randomize_norms(self, torch.Generator().manual_seed(4244))

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        y = self.ln_att(x)
        x = x + self.att(y, y, y, need_weights=False)[0]
        y = nn.functional.glu(self.pw1(self.ln_conv(x).transpose(1, 2)), dim=1)
        y = nn.functional.silu(self.bn(self.dw(y)))
        x = x + self.pw2(y).transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.ln_out(x)


class InceptionMini(nn.Module):
    """An Inception-style net with asymmetric kernels, of torchvision's BasicConv2d
    (Conv, BatchNorm eps 1e-3, ReLU): an InceptionC-like block (1x7 and 7x1 factorised
    branches, a 3x3 average-pool branch), a stride-2 reduction, an InceptionE-like block
    (1x3 and 3x1 side by side on one branch), global pooling and a classifier. Branches
    of 24 channels: concatenations that start inside channel blocks."""

    def __init__(self, classes=10):
        super().__init__()
        from torchvision.models.inception import BasicConv2d as B
        self.stem = B(3, 32, kernel_size=3, stride=2, padding=1)
        self.c1 = B(32, 24, kernel_size=1)
        self.c7 = nn.Sequential(B(32, 16, kernel_size=1),
                                B(16, 16, kernel_size=(1, 7), padding=(0, 3)),
                                B(16, 24, kernel_size=(7, 1), padding=(3, 0)))
        self.c7dbl = nn.Sequential(B(32, 16, kernel_size=1),
                                   B(16, 16, kernel_size=(7, 1), padding=(3, 0)),
                                   B(16, 16, kernel_size=(1, 7), padding=(0, 3)),
                                   B(16, 16, kernel_size=(7, 1), padding=(3, 0)),
                                   B(16, 24, kernel_size=(1, 7), padding=(0, 3)))
        self.cpool = B(32, 24, kernel_size=1)
        self.reduce = B(96, 64, kernel_size=3, stride=2, padding=1)
        self.e1 = B(64, 24, kernel_size=1)
        self.e3 = B(64, 24, kernel_size=1)
        self.e3a = B(24, 24, kernel_size=(1, 3), padding=(0, 1))
        self.e3b = B(24, 24, kernel_size=(3, 1), padding=(1, 0))
        self.epool = B(64, 24, kernel_size=1)
        self.fc = nn.Linear(96, classes)

    def forward(self, x):
        x = self.stem(x)
        pool = nn.functional.avg_pool2d(x, 3, stride=1, padding=1)
        x = torch.cat([self.c1(x), self.c7(x), self.c7dbl(x), self.cpool(pool)], 1)
        x = self.reduce(x)
        y = self.e3(x)
        pool = nn.functional.avg_pool2d(x, 3, stride=1, padding=1)
        x = torch.cat([self.e1(x), self.e3a(y), self.e3b(y), self.epool(pool)], 1)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def randomized(cls):
    def build():
        model = cls()
        _randomize_norms(model, torch.Generator().manual_seed(1234))
        return model
    return build


def make_input(shape):
    """A float input of `shape` (standard normal), or ("int64", shape, high): tokens."""
    gen = torch.Generator().manual_seed(7)
    if shape and shape[0] == "int64":
        return torch.randint(0, shape[2], shape[1], generator=gen, dtype=torch.int64)
    return torch.randn(*shape, generator=gen)


# name -> (builder, input shape, opset, do_constant_folding, group)
# "core" models are the ones issue 2 names; "other" ones prove generality; "mini" ones are
# small versions of today's architectures (issue 42 item 6), checked on the NPU in seconds.
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
    "convnext_mini": (convnext_mini, (1, 3, 32, 32), 17, True, "mini"),
    "vit_mini": (vit_mini, (1, 3, 32, 32), 17, True, "mini"),
    "swin_mini": (swin_mini, (1, 3, 32, 32), 17, True, "mini"),
    "deeplab_mini": (randomized(DeepLabMini), (1, 3, 32, 32), 17, True, "mini"),
    "unet_mini": (randomized(UNetMini), (1, 3, 32, 32), 17, True, "mini"),
    "fpn_mini": (randomized(FpnMini), (1, 3, 32, 32), 17, True, "mini"),
    "conformer_mini": (ConformerMini, (1, 32, 64), 17, True, "mini"),
    "inception_mini": (randomized(InceptionMini), (1, 3, 32, 32), 17, True, "mini"),
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
    ap.add_argument("--group", default="", help="only models of this group (core, other, mini)")
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
