#!/usr/bin/env python3
"""Area table of the RTL, per description and module (docs/rtl/area.md section 8).

Yosys' generic synthesis (`synth`), then `stat`: cells (flip-flops excluded), flip-flops
(every $_*DFF* and $_*LATCH* cell), and the SRAM bits (SRAMs are macros: black boxes, not
synthesized logic).

usage: area.py YOSYS OUT.json [--no-npu] [--max-cells NAME=N]... SPEC [SPEC...]
  SPEC = NAME=ISA.json:TOP,TOP:FILE.sv,FILE.sv[:NPU.sv,NPU.sv:LIB.sv,LIB.sv]

The generated modules (TOP, TOP) are synthesized one by one, flat; an empty TOP list
(NAME=ISA.json::FILES:NPU:LIB) synthesizes the NPU alone (ember-dse --area). With the NPU part, the
hand-written NPU (top ember_npu) is synthesized keeping its hierarchy, the LIB files
(ember_sram) read as black boxes: one row per module (its own cells, once per instance)
and the NPU's total. --no-npu skips the NPU. Prints one Markdown table and writes the same
figures (and each synthesis' seconds, elapsed and CPU) as JSON. Exit 1 if Yosys fails, or if the NPU of
description NAME has more than N generic cells of logic (--max-cells: issue 11's goal).
"""
import json
import re
import resource
import subprocess
import sys
import tempfile
import time


def run_yosys(yosys, script, what):
    with tempfile.NamedTemporaryFile("r", suffix=".stat") as stat:
        start = time.monotonic()
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = subprocess.run([yosys, "-q", "-p", script.format(stat=stat.name)],
                             capture_output=True, text=True)
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = (time.monotonic() - start,
                   cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime)
        if run.returncode != 0:
            sys.exit(f"area.py: yosys failed on {what}:\n{run.stderr or run.stdout}")
        return stat.read(), seconds


def is_ff(kind):
    return "DFF" in kind or "LATCH" in kind


def parse_modules(text):
    """Per module of a `stat` report: {cell type: count} (module blocks only)."""
    modules, name = {}, None
    for line in text.splitlines():
        head = re.match(r"^=== (.+) ===$", line.strip())
        if head:
            name = head.group(1)
            if name == "design hierarchy":
                name = None
            else:
                modules[name] = {}
            continue
        m = re.match(r"^\s+(\S+)\s+(\d+)$", line)
        if name is not None and m and not line.strip().startswith("Number"):
            modules[name][m.group(1)] = int(m.group(2))
    return modules


def synth_flat(yosys, files, top):
    text, seconds = run_yosys(
        yosys, f"read_verilog -sv {' '.join(files)}; synth -top {top}; tee -q -o {{stat}} stat", top)
    mods = parse_modules(text)
    if top not in mods:
        sys.exit(f"area.py: no statistics from yosys for {top}")
    cells = sum(n for k, n in mods[top].items() if not is_ff(k))
    ffs = sum(n for k, n in mods[top].items() if is_ff(k))
    return cells, ffs, seconds


def short_name(name):
    """`$paramod\\ember_dma\\LOAD=1'1` -> `ember_dma (LOAD=1'1)`; hashes of long ones dropped."""
    if not name.startswith("$paramod"):
        return name.lstrip("\\")
    parts = name.split("\\")
    base = parts[1] if len(parts) > 1 else name
    params = [p for p in parts[2:] if p]
    return f"{base} ({', '.join(params)})" if params else base


def synth_npu(yosys, files, libs, top="ember_npu"):
    script = (f"read_verilog -sv {' '.join(files)}; read_verilog -sv -lib {' '.join(libs)}; "
              f"hierarchy -check -top {top}; synth -top {top}; tee -q -o {{stat}} stat -top {top}")
    text, seconds = run_yosys(yosys, script, top)
    mods = parse_modules(text)
    names = set(mods)
    blackboxes = set()
    for cells in mods.values():
        for kind in cells:
            if not kind.startswith("$_") and kind not in names:
                blackboxes.add(kind)
    # Instances of each module below the top (a module's cell list names its submodules).
    count = {n: 0 for n in names}

    def visit(name, k):
        count[name] += k
        for kind, n in mods[name].items():
            if kind in names:
                visit(kind, k * n)

    top_name = next((n for n in names if n.lstrip("\\") == top), None)
    if top_name is None:
        sys.exit(f"area.py: no statistics from yosys for {top}")
    visit(top_name, 1)
    rows, total_cells, total_ffs = [], 0, 0
    for name in sorted(names, key=lambda n: (n != top_name, short_name(n))):
        own = mods[name]
        cells = sum(n for k, n in own.items() if k.startswith("$_") and not is_ff(k))
        ffs = sum(n for k, n in own.items() if k.startswith("$_") and is_ff(k))
        rows.append({"module": short_name(name), "instances": count[name], "cells": cells,
                     "flip_flops": ffs})
        total_cells += count[name] * cells
        total_ffs += count[name] * ffs
    return rows, total_cells, total_ffs, seconds, sorted(short_name(b) for b in blackboxes)


def sram_bits(desc_json):
    with open(desc_json) as fh:
        d = json.load(fh)
    return {name: m["size_bytes"] * 8 for name, m in d["hardware"]["memories"].items()}


def main():
    args = sys.argv[1:]
    yosys, out = args[0], args[1]
    specs, limits, with_npu = [], {}, True
    rest = iter(args[2:])
    for a in rest:
        if a == "--no-npu":
            with_npu = False
        elif a == "--max-cells":
            name, n = next(rest).split("=")
            limits[name] = int(n)
        else:
            specs.append(a)
    rows, result = [], {}
    for spec in specs:
        name, rest = spec.split("=", 1)
        parts = rest.split(":")
        desc, tops, files = parts[0], parts[1], parts[2].split(",")
        result[name] = {"modules": {}, "sram_bits": sram_bits(desc)}
        for top in filter(None, tops.split(",")):
            cells, ffs, seconds = synth_flat(yosys, files, top)
            result[name]["modules"][top] = {"cells": cells, "flip_flops": ffs,
                                            "seconds": round(seconds[0], 1),
                                            "cpu_seconds": round(seconds[1], 1)}
            rows.append((name, top, 1, cells, ffs))
        if with_npu and len(parts) >= 5:
            npu_files, libs = parts[3].split(","), parts[4].split(",")
            mods, cells, ffs, seconds, bbs = synth_npu(yosys, npu_files, libs)
            result[name]["npu"] = {"modules": mods, "cells": cells, "flip_flops": ffs,
                                   "seconds": round(seconds[0], 1),
                                   "cpu_seconds": round(seconds[1], 1), "black_boxes": bbs}
            for m in mods[1:] + mods[:1]:
                rows.append((name, f"ember_npu / {m['module']}", m["instances"], m["cells"],
                             m["flip_flops"]))
            rows.append((name, "**ember_npu, total**", "", cells, ffs))
    print("| description | module | instances | generic cells (no flip-flops), each | "
          "flip-flops, each |")
    print("|---|---|---|---|---|")
    for name, top, n, cells, ffs in rows:
        print(f"| {name} | {top} | {n} | {cells:,} | {ffs:,} |")
    for name, r in result.items():
        srams = ", ".join(f"{m} {b // 8192:,} KiB" for m, b in r["sram_bits"].items())
        total = sum(r["sram_bits"].values())
        print(f"\n{name}: SRAM macros {total:,} bits ({srams}), not synthesized")
        if "npu" in r:
            npu = r["npu"]
            print(f"{name}: ember_npu {npu['cells']:,} generic cells of logic and "
                  f"{npu['flip_flops']:,} flip-flops (black boxes: {', '.join(npu['black_boxes'])}); "
                  f"Yosys took {npu['seconds']:.0f} s ({npu['cpu_seconds']:.0f} s of CPU)")
    with open(out, "w") as fh:
        json.dump(result, fh, indent=1)
    status = 0
    for name, limit in limits.items():
        cells = result.get(name, {}).get("npu", {}).get("cells")
        if cells is None:
            print(f"area.py: no NPU figure for {name}", file=sys.stderr)
            status = 1
        elif cells > limit:
            print(f"area.py: the NPU of {name} has {cells:,} generic cells, above {limit:,}",
                  file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
