#!/usr/bin/env python3
"""The RTL device's energy (issue 47 item 6): `ember-run BIN --device rtl --report` holds
the simulator's energy model applied to what the RTL retired, so its energy equals the
simulator's (it was 0.0 pJ), and `--compare sim,rtl` says it compared the energy.
Exit 77 (skipped) in a build without the RTL.

usage: run_energy_check.py DIR EMBER_RUN EMBER_AS PROGRAM.s
"""
import json
import os
import re
import subprocess
import sys


def main():
    out, ember_run, ember_as, source = sys.argv[1:5]
    os.makedirs(out, exist_ok=True)
    help_text = subprocess.run([ember_run, "--help"], capture_output=True, text=True).stdout
    if not re.search(r"^\s+rtl\s", help_text, re.M):
        print("no rtl device in this build")
        return 77
    elf = os.path.join(out, "p.elf")
    subprocess.run([ember_as, source, "-o", elf], check=True)
    energy = {}
    for dev in ["sim", "rtl"]:
        rep = os.path.join(out, dev + ".json")
        subprocess.run([ember_run, elf, "--device", dev, "--quiet", "--report", rep], check=True,
                       stdout=subprocess.DEVNULL)
        with open(rep) as f:
            energy[dev] = json.load(f)["energy"]
        print(dev, energy[dev])
    if not energy["sim"]["total_pj"] > 0:
        sys.exit("FAIL the simulator reports no energy")
    if set(energy["sim"]) != set(energy["rtl"]):
        sys.exit("FAIL the components differ")
    for k, v in energy["sim"].items():
        if abs(v - energy["rtl"][k]) > 1e-9 * max(1.0, abs(v)):
            sys.exit(f"FAIL energy {k}: sim {v}, rtl {energy['rtl'][k]}")
    p = subprocess.run([ember_run, elf, "--compare", "sim,rtl", "--quiet"], capture_output=True,
                       text=True)
    if p.returncode != 0 or "every counter and the energy" not in p.stdout:
        sys.exit("FAIL --compare sim,rtl: " + p.stdout + p.stderr)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
