#!/usr/bin/python3
"""emberc --input-shape on a model with a dynamic batch axis, checked with NumPy:

  dynamic_batch_check.py --emberc BIN --ember-run BIN --objdump BIN --model M.onnx
                         --input X.npy --out DIR

compiles M for the batch of X (emberc --input-shape input=<X's shape>), runs the binary
on the simulated NPU with X, runs M itself on ember-run's sim device with X (its batch
taken from the file), and passes when both exit 0 and give the same output for the
batch: the binary's int8 codes, dequantized with its I/O table's scale and zero point,
equal the model run's floats (the same calibration, the same compile).
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np


def run(cmd):
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd)
    if r.returncode != 0:
        print(f"FAIL: exit status {r.returncode}")
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--objdump", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    x = np.load(args.input)
    shape = "x".join(str(d) for d in x.shape)
    binary = os.path.join(args.out, "model.elf")
    run([args.emberc, args.model, "-o", binary, "--input-shape", f"input={shape}"])
    run([args.ember_run, binary, "--input", f"input={args.input}", "--out",
         os.path.join(args.out, "binary")])
    run([args.ember_run, args.model, "--device", "sim", "--input", f"input={args.input}",
         "--out", os.path.join(args.out, "model")])
    a = np.load(os.path.join(args.out, "binary", "output.npy"))
    b = np.load(os.path.join(args.out, "model", "output.npy"))
    print(f"binary: {a.dtype}{list(a.shape)}, model on sim: {b.dtype}{list(b.shape)}")
    if a.shape[0] != x.shape[0] or b.shape[0] != x.shape[0]:
        print(f"FAIL: the outputs' batch is not the input's ({x.shape[0]})")
        return 1
    # The binary writes the output's int8 codes (shape N x C x 1 x 1, its layout's); the
    # model's run dequantizes them as its DequantizeLinear does: scale * (code - zp), with
    # the scale and zero point of the binary's I/O table (ember-objdump).
    table = subprocess.run([args.objdump, binary], capture_output=True, text=True, check=True)
    m = re.search(r'^\.io output "output" dtype=int8 .*scale=(\S+) zp=(-?\d+)', table.stdout, re.M)
    if not m:
        print("FAIL: no int8 output in the binary's I/O table")
        return 1
    scale, zp = np.float32(float(m.group(1))), int(m.group(2))
    codes = a.reshape(b.shape).astype(np.int32)
    dequantized = (scale * (codes - zp).astype(np.float32)).astype(np.float32)
    diff = np.max(np.abs(dequantized.astype(np.float64) - b.astype(np.float64)))
    print(f"output scale {scale}, zero point {zp}: max |dequantized binary - model| = {diff}")
    if diff > 1e-6 * max(1.0, float(np.max(np.abs(b)))):
        print("FAIL: the binary's codes are not the model run's")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
