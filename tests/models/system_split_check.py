"""A model too big for one device's DRAM runs split over two (issue 43; docs/systems.md
section 3): ResNet-18 (11 MiB of int8 weights) is refused on one ember-v1 with an 8 MiB
DRAM, naming the stage, its bytes and the device; over two such NPUs `emberc --system -o`
writes a two-stage package whose stages each fit, and `ember-run --requests` serves it
with every output bit-exact with the whole model compiled for one ember-v1 of the default
DRAM (--reference).

usage: system_split_check.py EMBERC EMBER_RUN MODEL.onnx ONE_8MIB.json TWO_8MIB.json WORK
"""

import os
import re
import shutil
import subprocess
import sys


def run(cmd, expect_ok=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=600)
    if (r.returncode == 0) != expect_ok:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}")
    return r.stdout


def main():
    emberc, ember_run, model, one, two, work = sys.argv[1:7]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    pkg, elf = os.path.join(work, "split.pkg"), os.path.join(work, "whole.elf")
    cal = ["--calibrate", "random:1"]
    out = run([emberc, model, *cal, "--system", one, "--partition-report"], expect_ok=False)
    m = re.search(r"stage 0 needs ([0-9.]+) MiB of DRAM, device npu0 has 8 MiB", out)
    if not m or float(m.group(1)) <= 8:
        sys.exit(f"FAIL: one 8 MiB device: expected a refusal naming stage 0's bytes:\n{out}")
    print(f"one 8 MiB device: refused, the model needs {m.group(1)} MiB")
    out = run([emberc, model, *cal, "--system", two, "--partition-report", "-o", pkg])
    stages = re.findall(r"^([01])\s+(npu[01])\s+\d+\s+.*?([0-9.]+) (MiB|KiB)\s+\S+ \.\. ", out,
                        re.M)
    if [s[:2] for s in stages] != [("0", "npu0"), ("1", "npu1")]:
        sys.exit(f"FAIL: two 8 MiB devices: expected stages 0 and 1 on npu0 and npu1:\n{out}")
    for k, dev, size, unit in stages:
        if unit == "MiB" and float(size) > 8:
            sys.exit(f"FAIL: stage {k} needs {size} MiB on an 8 MiB device:\n{out}")
    print("two 8 MiB devices: " + ", ".join(f"stage {k} on {d} {s} {u}" for k, d, s, u in stages))
    run([emberc, model, *cal, "-o", elf])
    out = run([ember_run, pkg, "--system", two, "--requests", "6", "--concurrency", "2",
               "--random-input", "1", "--distinct-inputs", "2", "--reference", elf])
    for want in ("are bit-exact with", "6 completed, 0 refused"):
        if want not in out:
            sys.exit(f"FAIL: serving the split package: no '{want}':\n{out}")
    print(next(line for line in out.splitlines() if line.startswith("throughput")))
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
