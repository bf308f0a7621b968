#!/usr/bin/env python3
"""A model the NPU cannot run whole, through a package (docs/package.md):

  emberc MODEL -o a.pkg (twice: the bytes must be equal), ember-objdump lists it,
  ember-run a.pkg gives exactly the int8 interpreter's outputs (ember-run MODEL
  --device interp --precision int8, same calibration), and a flipped byte or a package
  built for another description is refused with exit status 1 and a message saying why.
"""
import argparse
import pathlib
import subprocess
import sys

import numpy as np


def run(cmd, expect=0):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != expect:
        sys.exit(f"FAIL: {' '.join(map(str, cmd))}: exit {r.returncode}, expected {expect}\n"
                 f"{r.stdout}\n{r.stderr}")
    return r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--ember-objdump", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--other-isa", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    model = pathlib.Path(a.model_dir) / "model.onnx"
    inp = pathlib.Path(a.model_dir) / "input.npy"
    calib = ["--calibrate", str(inp)]
    pkgs = [out / "a.pkg", out / "b.pkg"]
    for p in pkgs:
        text = run([a.emberc, model, "-o", p, *calib, "--partition-report"])
    assert "placement:" in text and "reason" in text, text
    first, second = (p.read_bytes() for p in pkgs)
    if first != second:
        sys.exit("FAIL: two compiles of the same model gave different packages")
    if first[:8] != b"EMBERPKG":
        sys.exit("FAIL: emberc did not write a package for a model the NPU cannot run whole")
    listing = run([a.ember_objdump, pkgs[0]])
    for want in ("manifest.json", "seg0", "placement:"):
        if want not in listing:
            sys.exit(f"FAIL: ember-objdump's listing lacks '{want}'\n{listing}")
    run([a.ember_run, pkgs[0], "--input", f"input={inp}", "--out", out / "pkg", "--quiet"])
    run([a.ember_run, model, "--input", f"input={inp}", *calib, "--precision", "int8",
         "--device", "interp", "--out", out / "ref", "--quiet"])
    for ref in sorted((out / "ref").glob("*.npy")):
        got = np.load(out / "pkg" / ref.name)
        want = np.load(ref)
        if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
            sys.exit(f"FAIL: {ref.name}: the package's output differs from the int8 "
                     f"interpreter's (max diff {np.abs(got - want).max()})")
    bad = bytearray(first)
    bad[len(bad) // 2] ^= 0x20
    (out / "bad.pkg").write_bytes(bytes(bad))
    msg = run([a.ember_run, out / "bad.pkg", "--random-input", "1"], expect=1)
    if "CRC-32C" not in msg and "corrupt" not in msg:
        sys.exit(f"FAIL: a flipped byte was not reported as corruption:\n{msg}")
    run([a.emberc, model, "-o", out / "other.pkg", *calib, "--isa", a.other_isa, "-q"])
    msg = run([a.ember_run, out / "other.pkg", "--random-input", "1"], expect=1)
    if "another NPU description" not in msg:
        sys.exit(f"FAIL: a package for another description was not refused clearly:\n{msg}")
    print(f"ok: {model}: package of {len(first)} bytes, reproducible, bit-exact with the "
          "int8 interpreter, corruption and a foreign description refused")


if __name__ == "__main__":
    main()
