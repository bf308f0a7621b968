#!/usr/bin/env python3
"""ember-dse's rows say what their points are (issue 47, item 7).

  dse_rows_check.py --dse EMBER_DSE --model MODEL.onnx --out DIR [--python PYTHON]

1. An axis given twice (--axis array=8,16 --axis array=32) is refused, exit 2, naming the
   axis and both arguments: it used to run and label its rows 8 and 16 while every point
   had array=32. The same for two axes writing one field, and for `ember-dse search`.
2. A sweep in which some points fail (a 64 KiB DRAM window the model does not fit: a
   compile error) has one row per point, in order, each with its own settings: a failing
   point is a row with its status and reason, never a missing or shifted row. Checked for
   --jobs 1, --jobs 2 (child processes) and, with --python, the Dask sweep of the Python
   package (python3 -m ember.dse sweep).
"""

import argparse
import csv
import itertools
import os
import subprocess
import sys

ARRAY = ["8", "16"]
DRAM = ["4294967296", "65536", "1048576"]  # the 64 KiB window is too small for the model
FAILS = "65536"


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    return r.returncode, r.stdout, r.stderr


def refused(cmd, *wants, env=None):
    status, out, err = run(cmd, env)
    if status != 2:
        fail(f"{' '.join(cmd)}: exit {status}, expected 2 (a usage error)\n{out}{err}")
    for w in wants:
        if w not in err:
            fail(f"{' '.join(cmd)}: stderr lacks {w!r}:\n{err}")
    print(f"ok: refused: {err.strip().splitlines()[0]}")


def check_rows(out_dir, stdout, what):
    with open(os.path.join(out_dir, "dse.csv"), newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    points = list(itertools.product(ARRAY, DRAM))
    if header[:4] != ["point", "array", "/hardware/dram/size_bytes", "model"]:
        fail(f"{what}: header {header[:4]}")
    if len(body) != len(points):
        fail(f"{what}: {len(body)} rows for {len(points)} points")
    col = {name: i for i, name in enumerate(header)}
    cycles = {}
    for i, (row, (array, dram)) in enumerate(zip(body, points)):
        if len(row) != len(header):
            fail(f"{what}: row {i} has {len(row)} fields, the header {len(header)}")
        if row[:3] != [str(i), array, dram]:
            fail(f"{what}: row {i} is {row[:3]}, expected point {i} = {[array, dram]}")
        status, message = row[col["status"]], row[col["message"]]
        if dram == FAILS:
            if status != "compile-error" or "DRAM window" not in message:
                fail(f"{what}: point {i} should be a compile-error row naming the DRAM "
                     f"window, is {status!r}: {message!r}")
            if row[col["cycles"]] != "":
                fail(f"{what}: failed point {i} has cycles {row[col['cycles']]!r}")
            if f"point {i} " not in stdout or "compile-error" not in stdout:
                fail(f"{what}: the table does not name failed point {i}")
        else:
            if status != "ok" or message != "" or not row[col["cycles"]].isdigit():
                fail(f"{what}: point {i} should be ok with cycles, is {row}")
            cycles.setdefault(array, set()).add(int(row[col["cycles"]]))
    # The labels are the points' values: the DRAM size does not change the cycles, the
    # array does (with a repeated axis every row had the last value's cycles).
    if any(len(c) != 1 for c in cycles.values()) or cycles["8"] == cycles["16"]:
        fail(f"{what}: cycles per array label {cycles}")
    print(f"ok: {what}: {len(body)} rows in order, "
          f"{sum(d == FAILS for _, d in points)} failed points as rows with their reason")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dse", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--python", default="")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)

    refused([a.dse, a.model, "--axis", "array=8,16", "--axis", "array=32", "--out",
             os.path.join(a.out, "twice"), "--no-progress"],
            "--axis 'array=32'", "axis 'array' is given twice (also --axis 'array=8,16')",
            "--axis array=8,16,32")
    refused([a.dse, a.model, "--axis", "array=8,16", "--axis", "/hardware/mac_array/rows=32",
             "--out", os.path.join(a.out, "overlap"), "--no-progress"],
            "/hardware/mac_array/rows", "which --axis array sets too")
    for path in ("twice", "overlap"):
        if os.path.exists(os.path.join(a.out, path, "dse.csv")):
            fail(f"a refused sweep wrote {path}/dse.csv")

    axes = ["--axis", "array=" + ",".join(ARRAY),
            "--axis", "/hardware/dram/size_bytes=" + ",".join(DRAM)]
    for jobs in ("1", "2"):
        out = os.path.join(a.out, f"jobs{jobs}")
        status, stdout, err = run([a.dse, a.model, *axes, "--jobs", jobs, "--out", out,
                                   "--no-progress"])
        if status != 0:
            fail(f"--jobs {jobs}: exit {status}\n{stdout}{err}")
        check_rows(out, stdout, f"ember-dse --jobs {jobs}")

    if a.python:
        env = dict(os.environ)
        out = os.path.join(a.out, "python")
        status, stdout, err = run([a.python, "-m", "ember.dse", "sweep", a.model, *axes,
                                   "--out", out], env)
        if status != 0:
            fail(f"python3 -m ember.dse sweep: exit {status}\n{stdout}{err}")
        check_rows(out, stdout, "python3 -m ember.dse sweep (Dask)")
        refused([a.python, "-m", "ember.dse", "sweep", a.model, "--axis", "array=8,16",
                 "--axis", "array=32", "--out", os.path.join(a.out, "python_twice")],
                "axis 'array' is given twice", env=env)
        refused([a.python, "-m", "ember.dse", "search", a.model, "--axis", "array=8,16",
                 "--axis", "array=32", "--trials", "2", "--out",
                 os.path.join(a.out, "search_twice"), "--no-progress"],
                "axis 'array' is given twice", env=env)
    print("PASS")


if __name__ == "__main__":
    main()
