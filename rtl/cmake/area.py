#!/usr/bin/env python3
"""Area table of the RTL, per description and module: Yosys' generic synthesis (`synth`),
then `stat`: cells (flip-flops excluded), flip-flops (every $_*DFF* and $_*LATCH* cell),
and the SRAM bits the description asks for (SRAMs are macros, not synthesized logic).

usage: area.py YOSYS OUT.json DESC=ISA.json:TOP,TOP:FILE.sv,FILE.sv [DESC=...]...
Prints one Markdown table and writes the same figures as JSON. Exit 1 if Yosys fails.
"""
import json
import re
import subprocess
import sys
import tempfile


def synth_stat(yosys, files, top):
    with tempfile.NamedTemporaryFile("r", suffix=".stat") as stat:
        script = (f"read_verilog -sv {' '.join(files)}; synth -top {top}; "
                  f"tee -q -o {stat.name} stat")
        run = subprocess.run([yosys, "-q", "-p", script], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"area.py: yosys failed on {top}:\n{run.stderr or run.stdout}")
        text = stat.read()
    cells, ffs, seen = 0, 0, False
    for line in text.splitlines():
        if "Number of cells:" in line:
            seen = True
            continue
        m = re.match(r"\s+(\$\S+)\s+(\d+)$", line)
        if not seen or not m:
            continue
        kind, n = m.group(1), int(m.group(2))
        if "DFF" in kind or "LATCH" in kind:
            ffs += n
        else:
            cells += n
    if not seen:
        sys.exit(f"area.py: no statistics from yosys for {top}")
    return cells, ffs


def sram_bits(desc_json):
    with open(desc_json) as fh:
        d = json.load(fh)
    return {name: m["size_bytes"] * 8 for name, m in d["hardware"]["memories"].items()}


def main():
    yosys, out = sys.argv[1], sys.argv[2]
    rows, result = [], {}
    for spec in sys.argv[3:]:
        name, rest = spec.split("=", 1)
        desc, tops, files = rest.split(":", 2)
        files = files.split(",")
        result[name] = {"modules": {}, "sram_bits": sram_bits(desc)}
        for top in tops.split(","):
            cells, ffs = synth_stat(yosys, files, top)
            result[name]["modules"][top] = {"cells": cells, "flip_flops": ffs}
            rows.append((name, top, cells, ffs))
    print("| description | module | generic cells (no flip-flops) | flip-flops |")
    print("|---|---|---|---|")
    for name, top, cells, ffs in rows:
        print(f"| {name} | {top} | {cells:,} | {ffs:,} |")
    for name, r in result.items():
        srams = ", ".join(f"{m} {b // 8192:,} KiB" for m, b in r["sram_bits"].items())
        total = sum(r["sram_bits"].values())
        print(f"\n{name}: SRAM macros {total:,} bits ({srams}), not synthesized")
    with open(out, "w") as fh:
        json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
