#!/usr/bin/python3
"""The one report of a partitioned run (issue 42, item 5): tiny_cnn.onnx with its MaxPool
forced to the host runs on sim through ember-run, from the ONNX model and from the package
emberc writes, with --report and --trace. Checks, with figures computed here from the
description's JSON (never from Ember's code):
- exactly the two named files are written (no per-segment files);
- the report has one entry per segment of the placement, the NPU segments' simulation
  reports inside, and totals equal to the sums over them;
- each NPU segment's host-link time is its transfers at the description's host link:
  latency + ceil(bytes / bytes_per_cycle) cycles each, at the clock (the transfer count
  and bytes are the report's; the time is bounded from both sides by the closed form);
- the end-to-end time is the sum of its terms and of the segments' estimates, and its
  NPU term is the simulated cycles at the clock;
- the trace puts the segments one after another on one timeline;
- ember-run's table prints the end-to-end line, emberc --partition-report too.

  plan_report_check.py --ember-run R --emberc C --make-models make_tiny_models.py
                       --isa ISA.json --work DIR
"""
import argparse
import json
import math
import pathlib
import shutil
import subprocess
import sys


def fail(msg):
    sys.exit("plan_report_check: " + msg)


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def close(a, b, what, rel=1e-9):
    if not math.isclose(a, b, rel_tol=rel, abs_tol=1e-15):
        fail(f"{what}: {a} != {b}")


def check(report, trace, isa, stdout, label):
    hw = isa["hardware"]
    clock = hw["clock_hz"]
    link = hw["host_link"]
    if "end to end (estimated):" not in stdout:
        fail(f"{label}: no end-to-end line in ember-run's output:\n{stdout}")
    r = json.loads(report.read_text())
    if r["format"] != "ember-partitioned-run":
        fail(f"{label}: format {r['format']}")
    segs = r["segments"]
    if len(segs) != r["placement"]["segments"] or r["placement"]["npu_segments"] < 2:
        fail(f"{label}: {len(segs)} segments, placement says {r['placement']}")
    e = r["estimate"]
    npu_cycles = 0
    sums = {"npu_seconds": 0, "host_seconds": 0, "host_link_seconds": 0, "npu_launch_seconds": 0}
    for s in segs:
        se = s["estimate"]
        for k in sums:
            sums[k] += se[k]
        close(se["seconds"], sum(se[k] for k in sums), f"{label}: segment {s['index']} total")
        if s["backend"] == "npu":
            cycles = s["npu"]["cycles"]
            npu_cycles += cycles
            close(se["npu_seconds"], cycles / clock, f"{label}: segment {s['index']} NPU time")
            # Transfers of this segment: its I/O entries; bounded by the closed form.
            n = round((se["host_link_seconds"] * clock - se["host_link_bytes"] /
                       link["bytes_per_cycle"]) / link["latency_cycles"])
            lo = n * link["latency_cycles"] + se["host_link_bytes"] / link["bytes_per_cycle"]
            got = se["host_link_seconds"] * clock
            if not (n >= 2 and lo - 1e-6 <= got <= lo + n):
                fail(f"{label}: segment {s['index']}: {got} link cycles for "
                     f"{se['host_link_bytes']} bytes is not {n} transfers at the host link")
        elif "npu" in s:
            fail(f"{label}: host segment {s['index']} has an NPU report")
    for k in sums:
        close(e[k], sums[k], f"{label}: estimate {k}")
    close(e["end_to_end_seconds"], sum(sums.values()), f"{label}: end to end")
    close(e["host_share"], e["host_seconds"] / e["end_to_end_seconds"], f"{label}: host share")
    if r["totals"]["npu_cycles"] != npu_cycles:
        fail(f"{label}: totals {r['totals']['npu_cycles']} != {npu_cycles}")
    ev = json.loads(trace.read_text())["traceEvents"]
    spans = {}
    for x in ev:
        if x.get("ph") == "X":
            a, b = spans.get(x["pid"], (math.inf, -math.inf))
            spans[x["pid"]] = (min(a, x["ts"]), max(b, x["ts"] + x["dur"]))
    if sorted(spans) != list(range(1, len(segs) + 1)):
        fail(f"{label}: trace processes {sorted(spans)} for {len(segs)} segments")
    for p in range(1, len(segs)):
        if spans[p][1] > spans[p + 1][0] + 1e-6:
            fail(f"{label}: segment {p - 1} ends at {spans[p][1]} us after segment {p} "
                 f"starts ({spans[p + 1][0]} us)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--make-models", required=True)
    ap.add_argument("--isa", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    isa = json.loads(pathlib.Path(a.isa).read_text())
    work = pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run([sys.executable, a.make_models, "--out", work])
    model = work / "tiny_cnn.onnx"
    common = ["--isa", a.isa, "--random-input", "3"]
    # From the ONNX model.
    d = work / "onnx_run"
    d.mkdir()
    out = run([a.ember_run, model, "--device", "sim", "--precision", "int8", "--host-kind",
               "MaxPool", "--report", d / "r.json", "--trace", d / "t.json", *common])
    if sorted(p.name for p in d.iterdir()) != ["r.json", "t.json"]:
        fail(f"files written: {sorted(p.name for p in d.iterdir())}")
    check(d / "r.json", d / "t.json", isa, out, "onnx")
    # From the package emberc writes.
    d = work / "package_run"
    d.mkdir()
    rep = run([a.emberc, model, "-o", work / "tiny.pkg", "--host-kind", "MaxPool",
               "--partition-report", "--isa", a.isa])
    if "end to end (estimated):" not in rep:
        fail(f"emberc --partition-report has no end-to-end line:\n{rep}")
    out = run([a.ember_run, work / "tiny.pkg", "--report", d / "r.json", "--trace",
               d / "t.json", *common])
    if sorted(p.name for p in d.iterdir()) != ["r.json", "t.json"]:
        fail(f"files written: {sorted(p.name for p in d.iterdir())}")
    check(d / "r.json", d / "t.json", isa, out, "package")
    print("plan_report_check: ok")


if __name__ == "__main__":
    main()
