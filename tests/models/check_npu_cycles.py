#!/usr/bin/python3
"""Runs a zoo model on the simulated NPU beside the int8 interpreter and checks two things:

  check_npu_cycles.py --ember-run BIN --model M.onnx --input input=X.npy --isa D.json \\
      --key MODEL/DESC --cycles tests/models/npu_cycles.json --out DIR [--update]

1. ember-run --compare interp,sim --precision int8 exits 0 and reports the NPU's outputs
   equal to the interpreter's bit for bit (the "sim yes 0" row; with --devices
   interp,cpu,sim the cpu backend's too, and with --fallback none the NPU runs the whole
   model: ember-run refuses it otherwise);
2. the simulated cycles (the JSON report's "cycles") equal the figure checked in under
   KEY in the cycles file: a change of the compiler, the simulator or the timing model
   that moves any zoo model's cycles fails here, so refactorings show that they change
   nothing, and a deliberate change of cycles updates the file in the same commit
   (--update writes the measured figure into the file instead of checking it).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--isa", required=True)
    ap.add_argument("--key", required=True, help="MODEL/DESCRIPTION")
    ap.add_argument("--cycles", required=True, help="the checked-in cycles file (JSON)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--devices", default="interp,sim",
                    help="the devices compared (interp first, sim among them)")
    ap.add_argument("--fallback", help="ember-run's --fallback (none: the NPU runs all)")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    report = os.path.join(args.out, "report.json")
    cmd = [args.ember_run, args.model, "--input", args.input, "--compare", args.devices,
           "--precision", "int8", "--isa", args.isa, "--quiet", "--report", report]
    if args.fallback:
        cmd += ["--fallback", args.fallback]
    print("+", " ".join(cmd), flush=True)
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(run.stdout)
    if run.returncode != 0:
        sys.exit(f"FAIL: ember-run exited {run.returncode}")
    for dev in args.devices.split(",")[1:]:
        if not re.search(rf"\b{dev} +yes +0 ", run.stdout):
            sys.exit(f"FAIL: no '{dev} yes 0' row: its outputs differ from the int8 interpreter's")
    with open(report) as f:
        cycles = json.load(f)["cycles"]

    with open(args.cycles) as f:
        table = json.load(f)
    if args.update:
        table[args.key] = cycles
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(args.cycles)))
        with os.fdopen(fd, "w") as f:
            json.dump(dict(sorted(table.items())), f, indent=1)
            f.write("\n")
        os.replace(tmp, args.cycles)
        print(f"{args.key}: {cycles} cycles written to {args.cycles}")
        return
    want = table.get(args.key)
    if want is None:
        sys.exit(f"FAIL: {args.cycles} has no entry '{args.key}' (measured {cycles}; "
                 "run this script with --update to add it)")
    if cycles != want:
        sys.exit(f"FAIL: {args.key}: {cycles} cycles, {want} checked in ({cycles - want:+d}); "
                 "a deliberate change updates the file (--update)")
    print(f"{args.key}: {cycles} cycles, as checked in")


if __name__ == "__main__":
    main()
