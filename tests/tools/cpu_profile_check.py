#!/usr/bin/python3
"""ember-run --device cpu --profile: runs a model, then checks the printed table, the JSON
report and the Chrome trace against each other (same operations in the same order, times
that add up, shares that sum to one, slices back to back).

    cpu_profile_check.py EMBER_RUN MODEL.onnx OUTDIR
"""
import json
import os
import re
import subprocess
import sys


def fail(msg):
    print("cpu_profile_check: " + msg)
    sys.exit(1)


def main():
    ember_run, model, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    report, trace = os.path.join(out, "profile.json"), os.path.join(out, "trace.json")
    cmd = [ember_run, model, "--device", "cpu", "--random-input", "1", "--repeat", "3",
           "--warmup", "1", "--profile", "--report", report, "--trace", trace]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        fail("ember-run exited %d: %s" % (run.returncode, run.stderr))
    m = re.search(r"^profile \(cpu\): (\d+) operations, ([0-9.]+) ms in all, slowest first:$",
                  run.stdout, re.M)
    if not m:
        fail("no profile header in:\n" + run.stdout)
    count, total = int(m.group(1)), float(m.group(2))
    rows = re.findall(r"^ +(\d+)  .+? +([0-9.]+) +([0-9.]+)% +([0-9.]+)%$", run.stdout, re.M)
    if len(rows) != count:
        fail("%d table rows for %d operations" % (len(rows), count))
    times = [float(r[1]) for r in rows]
    if times != sorted(times, reverse=True):
        fail("the table is not slowest first")
    if abs(float(rows[-1][3]) - 100.0) > 0.15:
        fail("the cumulative share ends at %s%%" % rows[-1][3])
    if "per kind:" not in run.stdout or not re.search(r"^  Conv +\d+ op\(s\)", run.stdout, re.M):
        fail("no per-kind lines")
    data = json.load(open(report))
    ops = data["ops"]
    if len(ops) != count or [o["index"] for o in ops] != list(range(count)):
        fail("the JSON lists %d operations" % len(ops))
    if abs(sum(o["ms"] for o in ops) - data["total_ms"]) > 1e-3 or abs(data["total_ms"] - total) > 2e-3:
        fail("the JSON's times do not add up to its total %.4f (table %.3f)" % (data["total_ms"], total))
    if abs(sum(o["share"] for o in ops) - 1) > 1e-3:
        fail("the shares sum to %f" % sum(o["share"] for o in ops))
    if any(o["ms"] <= 0 for o in ops):
        fail("an operation took no time")
    events = [e for e in json.load(open(trace))["traceEvents"] if e["ph"] == "X"]
    if [e["name"] for e in events] != [o["name"] for o in ops]:
        fail("the trace's slices are not the JSON's operations")
    for a, b in zip(events, events[1:]):
        if abs(a["ts"] + a["dur"] - b["ts"]) > 0.01:
            fail("slices not back to back at " + b["name"])
    print("cpu_profile_check: %d operations, %.3f ms, table, JSON and trace agree" % (count, total))


if __name__ == "__main__":
    main()
