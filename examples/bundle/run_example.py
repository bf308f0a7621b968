#!/usr/bin/python3
"""Builds and runs the AOT bundle example (ctest examples.bundle.*).

The Fashion-MNIST CNN trained by tests/accuracy/fashion_mnist.py is compiled by
`emberc --backend cpu --emit-bundle` (float32, then int8), classify.c is compiled
against each bundle with the C compiler alone, and the program classifies the 2,000
test images. Checks, against references not produced by the code under test:
- float: every logit within 1e-4 * max(1, max|ref|) of PyTorch's (test_logits.npy),
  so the predicted classes and the accuracy are PyTorch's;
- int8: the logits of the first images bit for bit those of the int8 interpreter
  (ember-run --device interp --precision int8 with the same calibration), and accuracy
  within one point of PyTorch's float accuracy;
- a weights file of another bundle is refused with a message, exit status 1.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def build(args, precision, work):
    bundle = os.path.join(work, precision)
    shutil.rmtree(bundle, ignore_errors=True)
    cmd = [args.emberc, os.path.join(args.data, "model.onnx"), "--backend", "cpu",
           "--emit-bundle", bundle, "--bundle-name", "classifier", "--precision", precision]
    if precision == "int8":
        cmd += ["--calibrate", os.path.join(args.data, "calib.npy")]
    print(run(cmd).stdout, end="")
    exe = os.path.join(work, "classify_" + precision)
    run([args.cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", bundle, args.source,
         os.path.join(bundle, "classifier.o"), "-lm", "-o", exe])
    return bundle, exe


def classify(exe, bundle, data, logits_path):
    out = run([exe, os.path.join(bundle, "classifier.weights"),
               os.path.join(data, "test_images.npy"), "--labels",
               os.path.join(data, "test_labels.npy"), "--logits", logits_path, "--show", "3"])
    print(out.stdout, end="")
    line = [l for l in out.stdout.splitlines() if l.startswith("accuracy:")][0]
    return float(line.split("=")[1].strip().rstrip("%")) / 100


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--data", required=True, help="output folder of fashion_mnist.py")
    ap.add_argument("--work", required=True)
    ap.add_argument("--int8-images", type=int, default=4)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    images = np.load(os.path.join(args.data, "test_images.npy"))
    ref = np.load(os.path.join(args.data, "test_logits.npy"))
    torch_acc = json.load(open(os.path.join(args.data, "info.json")))["torch_float_accuracy"]
    failures = []

    bundle, exe = build(args, "float", args.work)
    acc = classify(exe, bundle, args.data, os.path.join(args.work, "float.f32"))
    got = np.fromfile(os.path.join(args.work, "float.f32"), dtype=np.float32).reshape(ref.shape)
    diff = float(np.abs(got - ref).max())
    bound = 1e-4 * max(1.0, float(np.abs(ref).max()))
    print(f"float bundle vs PyTorch: max |diff| {diff:.3g} (bound {bound:.3g}), accuracy "
          f"{100 * acc:.2f}% (PyTorch {100 * torch_acc:.2f}%)")
    if not diff <= bound:
        failures.append("float logits differ from PyTorch's")
    if not np.array_equal(got.argmax(1), ref.argmax(1)):
        failures.append("float predictions differ from PyTorch's")

    bundle8, exe8 = build(args, "int8", args.work)
    acc8 = classify(exe8, bundle8, args.data, os.path.join(args.work, "int8.f32"))
    got8 = np.fromfile(os.path.join(args.work, "int8.f32"), dtype=np.float32).reshape(ref.shape)
    print(f"int8 bundle: accuracy {100 * acc8:.2f}% (PyTorch float {100 * torch_acc:.2f}%)")
    if abs(acc8 - torch_acc) > 0.01:
        failures.append("int8 accuracy more than one point from float")
    for i in range(args.int8_images):
        img = os.path.join(args.work, f"image{i}.npy")
        np.save(img, images[i:i + 1])
        outdir = os.path.join(args.work, f"interp{i}")
        run([args.ember_run, os.path.join(args.data, "model.onnx"), "--device", "interp",
             "--precision", "int8", "--calibrate", os.path.join(args.data, "calib.npy"),
             "--input", "input=" + img, "--out", outdir, "--quiet"])
        want = np.load(os.path.join(outdir, "logits.npy")).reshape(-1)
        same = np.array_equal(want, got8[i])
        print(f"int8 image {i}: bundle == int8 interpreter: {'yes' if same else 'NO'}")
        if not same:
            failures.append(f"int8 image {i} differs from the interpreter")

    wrong = subprocess.run([exe, os.path.join(bundle8, "classifier.weights"),
                            os.path.join(args.data, "test_images.npy")],
                           text=True, capture_output=True)
    print("another bundle's weights:", wrong.returncode, wrong.stderr.strip())
    if wrong.returncode != 1 or "CLASSIFIER_CONSTANT_BYTES" not in wrong.stderr:
        failures.append("a wrong weights file was not refused with a message")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
