#!/usr/bin/python3
"""Runs ember-run on a model and compares its outputs with reference .npy files using
NumPy (independent of Ember's own code):

  run_and_compare.py --ember-run BIN --model M.onnx --out DIR \\
      [--input NAME=FILE.npy ...] [--expected OUTPUT_FILE_STEM=REF.npy ...] \\
      [--device interp] [--rel 1e-4 | --exact | --min-cosine C] [--extra ARG ...]

Passes when ember-run exits 0 and, for every expected output, DIR/STEM.npy exists, has
the reference's dtype and shape, and max |out - ref| <= rel * max(1, max |ref|)
(--exact: bit-equal; --min-cosine: the cosine similarity of out and ref, both flattened,
is at least C, for an int8 run against the float reference).
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="interp")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--expected", action="append", default=[])
    ap.add_argument("--rel", type=float, default=1e-4)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--min-cosine", type=float, default=None,
                    help="compare by cosine similarity (at least this) instead of --rel")
    ap.add_argument("--extra", action="append", default=[], help="extra ember-run argument")
    args = ap.parse_args()

    cmd = [args.ember_run, args.model, "--device", args.device, "--out", args.out]
    for i in args.input:
        cmd += ["--input", i]
    cmd += args.extra
    print("+", " ".join(cmd), flush=True)
    start = time.time()
    r = subprocess.run(cmd)
    print(f"ember-run exited {r.returncode} after {time.time() - start:.2f} s", flush=True)
    if r.returncode != 0:
        print("FAIL: ember-run failed")
        return 1
    ok = True
    for e in args.expected:
        stem, ref_path = e.split("=", 1)
        ref = np.load(ref_path)
        path = os.path.join(args.out, stem + ".npy")
        if not os.path.exists(path):
            print(f"FAIL: {path} was not written")
            ok = False
            continue
        out = np.load(path)
        if out.dtype != ref.dtype or out.shape != ref.shape:
            print(f"FAIL: {stem}: got {out.dtype}{list(out.shape)}, "
                  f"expected {ref.dtype}{list(ref.shape)}")
            ok = False
            continue
        if args.exact:
            good = np.array_equal(out, ref)
            print(f"{stem}: exact comparison {'ok' if good else 'MISMATCH'}")
        elif args.min_cosine is not None:
            a, b = out.astype(np.float64).ravel(), ref.astype(np.float64).ravel()
            den = float(np.linalg.norm(a) * np.linalg.norm(b))
            cos = float(a @ b) / den if den > 0 else float("nan")
            good = bool(cos >= args.min_cosine)
            print(f"{stem}: cosine similarity {cos:.6f}, at least {args.min_cosine}: "
                  f"{'ok' if good else 'MISMATCH'}")
        else:
            err = float(np.max(np.abs(out.astype(np.float64) - ref))) if ref.size else 0.0
            if np.isnan(out).any() != np.isnan(ref).any():
                err = float("inf")
            tol = args.rel * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0)
            good = err <= tol
            print(f"{stem}: max abs error {err:.3g}, tolerance {tol:.3g} "
                  f"(max |ref| {float(np.max(np.abs(ref))) if ref.size else 0:.4g}): "
                  f"{'ok' if good else 'MISMATCH'}")
            if ref.ndim >= 1 and ref.size > 1 and ref.shape[0] == 1:
                top_ref = np.argsort(-ref.reshape(-1))[:5]
                top_out = np.argsort(-out.reshape(-1))[:5]
                print(f"  top-5 indices: ember {top_out.tolist()}, reference {top_ref.tolist()}")
        ok = ok and good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
