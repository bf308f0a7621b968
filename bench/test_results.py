#!/usr/bin/env python3
"""ctest bench.results_page: results.py makes a page from logs (no bench is run)."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as build:
    os.makedirs(os.path.join(build, "bench", "logs"))
    with open(os.path.join(build, "bench", "logs", "bench_npu.log"), "w") as f:
        f.write("# started 2026-11-26 10:00 UTC\n# ended 2026-11-26 10:05 UTC\n# status 0\n"
                "[1/2] Building CXX object x.o\nresnet18  cycles 123456\n"
                "+ %s/tools/ember-run/ember-run m.onnx\nninja: no work to do.\n" % build)
    out = os.path.join(build, "results.md")
    subprocess.run([sys.executable, os.path.join(here, "results.py"), "--build", build,
                    "--out", out], check=True)
    text = open(out).read()
    checks = [
        ("the NPU section with its output", "resnet18  cycles 123456" in text),
        ("ninja's progress lines left out", "Building CXX" not in text and "ninja:" not in text),
        ("when it ran", "Ran 2026-11-26 10:00 UTC to 2026-11-26 10:05 UTC." in text),
        ("the command", "Command: `ninja -C build bench_npu`" in text),
        ("absent logs named", "*Not run for this page* (no `build/bench/logs/bench_cpu.log`)" in text),
        ("build paths made relative", "+ build/tools/ember-run/ember-run m.onnx" in text),
        ("a contents list", "## Contents" in text and "(`bench_sim`)" in text),
        ("the scoreboard first, then the interpreter bench",
         "1. [Issue 15 scoreboard](#1-issue-15-scoreboard) (`bench`)" in text
         and "(`bench_interp`)" in text),
    ]
    bad = [what for what, ok in checks if not ok]
    r = subprocess.run([sys.executable, os.path.join(here, "results.py"), "--build", build,
                        "--run", "--only", "bench_nope", "--out", out], capture_output=True,
                       text=True)
    if r.returncode == 0 or "unknown bench target(s) bench_nope" not in r.stderr:
        bad.append("an unknown target refused (got %d: %s)" % (r.returncode, r.stderr))
    if bad:
        print(text)
        sys.exit("results page lacks: " + "; ".join(bad))
    print("results page: %d checks passed" % (len(checks) + 1))
