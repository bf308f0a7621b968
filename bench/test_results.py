#!/usr/bin/env python3
"""ctest bench.results_page: results.py makes the index and the pages from logs (no bench is
run)."""
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
    npu = open(os.path.join(build, "results", "bench_npu.md")).read()
    cpu = open(os.path.join(build, "results", "bench_cpu.md")).read()
    pages = sorted(os.listdir(os.path.join(build, "results")))
    checks = [
        ("the NPU page with its output", "resnet18  cycles 123456" in npu
         and npu.startswith("# 4 NPU: cycles, utilisation, roofline\n")),
        ("a page per target", len(pages) == 12 and "bench.md" in pages
         and "bench_ring.md" in pages),
        ("each page links to the index", "[Measured figures](../results.md)" in cpu),
        ("ninja's progress lines left out", "Building CXX" not in npu and "ninja:" not in npu),
        ("when it ran", "Ran 2026-11-26 10:00 UTC to 2026-11-26 10:05 UTC." in npu),
        ("the command", "Command: `ninja -C build bench_npu`" in npu),
        ("absent logs named",
         "*Not run for this page* (no `build/bench/logs/bench_cpu.log`)" in cpu),
        ("build paths made relative", "+ build/tools/ember-run/ember-run m.onnx" in npu),
        ("an index without figures", "## Contents" in text and "(`bench_sim`)" in text
         and "cycles 123456" not in text),
        ("the scoreboard first, then the interpreter bench",
         "1. [Issue 15 scoreboard](results/bench.md) (`bench`)" in text
         and "2. [Interpreter vs PyTorch (ResNet-50)](results/bench_interp.md)" in text),
    ]
    # A page whose bench has no log in this build (a run of some targets only) is kept as
    # it is, not rewritten as "not run"; a page with a log is rewritten.
    with open(os.path.join(build, "results", "bench_cpu.md"), "w") as f:
        f.write("figures of an earlier run\n")
    with open(os.path.join(build, "results", "bench_npu.md"), "w") as f:
        f.write("stale\n")
    subprocess.run([sys.executable, os.path.join(here, "results.py"), "--build", build,
                    "--out", out], check=True)
    checks.append(("a page without a log kept",
                   open(os.path.join(build, "results", "bench_cpu.md")).read()
                   == "figures of an earlier run\n"))
    checks.append(("a page with a log rewritten", "resnet18  cycles 123456" in
                   open(os.path.join(build, "results", "bench_npu.md")).read()))
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
