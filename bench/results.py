#!/usr/bin/env python3
"""Builds docs/results.md and docs/results/*.md, Ember's measured figures, from bench output.

    results.py --build BUILD [--run] [--only T1,T2] [--out FILE]

--run runs each bench target (`cmake --build BUILD --target T`), showing its output on
the terminal and saving it to BUILD/bench/logs/T.log; without --run the page is made from
the logs already there. FILE (docs/results.md) is the index: the source commit, the
machine and every bench target in a fixed order; each target has a page of its own in the
folder beside FILE named after it without `.md` (docs/results/TARGET.md): what it measures,
the command that prints it, when it ran and the output as printed. A target without a log
is listed as not run, so a partial run says what it lacks. Figures are never edited by
hand: rerun the benches and this script (`ninja bench_results`).
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys

# (target, title, what it measures). Order = order on the page.
TARGETS = [
    ("bench", "Issue 15 scoreboard",
     "every figure of issue 15 (performance) measured in one run, beside its goal: ResNet-50 "
     "and MobileNetV2 MAC utilisation and ResNet-18/50 roofline efficiency on the NPU, the "
     "share of ResNet-18's NPU cycles in separate residual Add layers, the simulator's speed "
     "on ResNet-50, the CPU backend's float32 latency against ONNX Runtime at one thread and "
     "its JIT compile time on DenseNet-121 (bench/scoreboard/scoreboard.py)"),
    ("bench_interp", "Interpreter vs PyTorch (ResNet-50)",
     "import time and interpreter latency of ResNet-50 beside PyTorch eager, 1 and 2 threads"),
    ("bench_cpu", "CPU backend vs ONNX Runtime and PyTorch",
     "JIT compile time and latency of ResNet-18/50, MobileNetV2 and the transformer on the "
     "LLVM CPU backend, float32 and int8, 1 and 2 threads, beside ONNX Runtime 1.30 (its "
     "int8 on a QDQ export of the same model) and PyTorch eager, with the ratio Ember / "
     "ONNX Runtime and issue 15's goal"),
    ("bench_npu", "NPU: cycles, utilisation, roofline",
     "ResNet-18/50 and MobileNetV2 compiled for the NPU on both shipped descriptions and "
     "simulated: compile time, cycles, MAC utilisation, roofline efficiency, cost-model "
     "estimate"),
    ("bench_sim", "Simulator speed",
     "SystemC model throughput (simulated cycles per second) on generated programs and on "
     "ResNet-50 compiled by emberc (the engine alone), then compiled zoo models through "
     "ember-sim and ember-run --device sim, whole process beside the engine's own time "
     "(bench/sim/tool_bench.py)"),
    ("bench_rtl", "RTL model speed and agreement",
     "Verilated RTL throughput and its cycle counts beside the SystemC model, on generated "
     "programs and on SqueezeNet and MobileNetV3-Small compiled by emberc, run through "
     "ember-run --device rtl beside ember-sim (whole process, bench/sim/tool_bench.py)"),
    ("bench_lir", "Low-level IR: memory planning",
     "arena size of the static memory plan against the sum of buffers, per zoo model"),
    ("bench_partition", "Partitioning",
     "placement of the zoo between NPU and CPU: nodes, MACs on the NPU, transfers"),
    ("bench_dse", "Design-space sweep (27 points)",
     "ember-dse over ResNet-18, MobileNetV2 and SqueezeNet: MAC array x weight SRAM x DRAM "
     "bandwidth, 3 values each; cycles, energy, utilisation, Pareto front and wall time"),
    ("bench_dse_random", "Random descriptions, checked",
     "the zoo's CNNs at 224 x 224 on 12 seeded random descriptions, every run compared bit "
     "for bit with the int8 interpreter (ember-dse --random --check)"),
    ("bench_ring", "Runtime command ring",
     "host-device command ring throughput"),
    ("bench_serve", "Serving over several NPUs",
     "256 requests in simulated time: ResNet-50 pipelined over four ember-v1 NPUs against "
     "one at 1, 4, 16 and 64 outstanding (throughput, p50/p99 latency, every output "
     "bit-exact with the one-NPU binary), on private DRAMs and on one shared DRAM; ResNet-18 "
     "replicated over four (docs/systems.md section 4)"),
]

NINJA_PROGRESS = re.compile(r"^\[\d+/\d+\] ")


def log_path(build, target):
    return os.path.join(build, "bench", "logs", target + ".log")


def run_target(build, target):
    """Runs one bench target, teeing its output; returns the exit status."""
    path = log_path(build, target)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    cmd = ["cmake", "--build", build, "--target", target]
    print("== %s" % " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    status = proc.wait()
    ended = datetime.datetime.now(datetime.timezone.utc)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("# started %s\n# ended %s\n# status %d\n" %
                (started.strftime("%Y-%m-%d %H:%M UTC"), ended.strftime("%Y-%m-%d %H:%M UTC"),
                 status))
        f.writelines(lines)
    os.replace(tmp, path)
    return status


def read_log(build, target):
    """(header dict, output lines without ninja progress lines) or None."""
    path = log_path(build, target)
    if not os.path.exists(path):
        return None
    header, body = {}, []
    with open(path) as f:
        for line in f:
            m = re.match(r"^# (started|ended|status) (.*)$", line)
            if m and not body:
                header[m.group(1)] = m.group(2).strip()
                continue
            if NINJA_PROGRESS.match(line) or line.startswith("ninja: "):
                continue
            body.append(line.rstrip("\n"))
    while body and not body[-1].strip():
        body.pop()
    return header, body


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores, %s" % (cpu, os.cpu_count() or 0, platform.platform())


def commit(source):
    try:
        return subprocess.run(["git", "-C", source, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def pages(build, source, targets, folder):
    """{path relative to the index's folder: text}: the index ("") and one page per target
    in FOLDER (the index's name without .md)."""
    out = ["# Measured figures", "",
           "Generated by `bench/results.py` from the output of the bench targets "
           "(`ninja -C build bench_results` runs them all and rewrites these pages); do not "
           "edit by hand. Benches print figures and never fail on time. Each page gives "
           "the command that printed it and when it ran.", "",
           "- Source: commit `%s`" % commit(source),
           "- Machine: %s" % machine(), "", "## Contents", ""]
    result = {}
    for i, (t, title, _) in enumerate(targets, 1):
        out.append("%d. [%s](%s/%s.md) (`%s`)" % (i, title, folder, t, t))
    result[""] = "\n".join(out) + "\n"
    for i, (t, title, what) in enumerate(targets, 1):
        part = ["# %d %s" % (i, title), "",
                "Part of [Measured figures](../%s.md) (source commit and machine there), "
                "generated by `bench/results.py`; do not edit by hand." % folder, "",
                what[0].upper() + what[1:] + ".", "", "Command: `ninja -C build %s`" % t, ""]
        hand = os.path.join(folder, "hand", t + ".md")
        if os.path.exists(os.path.join(source, "docs", hand)):  # figures measured by hand
            part_end = ["", "Measured by hand beside this bench (not generated): "
                        "[hand/%s.md](hand/%s.md)." % (t, t)]
        else:
            part_end = []
        result[os.path.join(folder, t + ".md")] = "\n".join(
            part + section(build, source, t) + part_end) + "\n"
    return result


def section(build, source, t):
    """The lines of target T's run: when, and its output; or that it did not run."""
    log = read_log(build, t)
    if log is None:
        return ["*Not run for this page* (no `build/bench/logs/%s.log`)." % t]
    header, body = log
    # Paths as a reader's checkout has them: build/..., not this machine's folders.
    build_abs = os.path.abspath(build)
    source_abs = os.path.abspath(source)
    body = [l.replace(build_abs + "/", "build/").replace(source_abs + "/", "") for l in body]
    status = header.get("status", "?")
    out = ["Ran %s to %s%s." % (header.get("started", "?"), header.get("ended", "?"),
                               "" if status == "0" else ", exit status " + status)]
    return out + ["", "```"] + body + ["```"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build folder")
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--run", action="store_true", help="run the bench targets first")
    ap.add_argument("--only", default="", help="comma-separated targets to run (with --run)")
    ap.add_argument("--out", required=True,
                    help="the index to write (its pages go into the folder of its name "
                    "without .md)")
    a = ap.parse_args()
    known = [t for t, _, _ in TARGETS]
    only = [t for t in a.only.split(",") if t]
    unknown = [t for t in only if t not in known]
    if unknown:
        sys.exit("results.py: unknown bench target(s) %s (known: %s)" %
                 (", ".join(unknown), ", ".join(known)))
    if a.run:
        for t in only or known:
            status = run_target(a.build, t)
            if status != 0:
                print("results.py: %s exited with status %d (kept in its log)" % (t, status),
                      file=sys.stderr)
    if not a.out.endswith(".md"):
        sys.exit("results.py: --out %s: the index must be a .md file" % a.out)
    base = os.path.dirname(os.path.abspath(a.out))
    folder = os.path.basename(a.out)[:-len(".md")]
    os.makedirs(os.path.join(base, folder), exist_ok=True)
    written = pages(a.build, a.source, TARGETS, folder)
    kept = 0
    for rel, text in sorted(written.items()):
        path = os.path.join(base, rel) if rel else os.path.abspath(a.out)
        target = os.path.basename(rel)[:-len(".md")] if rel else None
        if target and read_log(a.build, target) is None and os.path.exists(path):
            kept += 1  # its bench did not run in this build: the page it has stays
            continue
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    # A page of a target no longer in TARGETS is stale: said, not deleted (the folder is
    # whatever --out names).
    for name in sorted(os.listdir(os.path.join(base, folder))):
        if name.endswith(".md") and os.path.join(folder, name) not in written:
            print("results.py: %s is no bench target's page: remove it if it is a stale one"
                  % os.path.join(os.path.dirname(a.out), folder, name), file=sys.stderr)
    print("results.py: wrote %s and %d pages in %s/%s" %
          (a.out, len(written) - 1 - kept, os.path.join(os.path.dirname(a.out), folder),
           " (kept %d whose bench has no log in this build)" % kept if kept else ""))


if __name__ == "__main__":
    main()
