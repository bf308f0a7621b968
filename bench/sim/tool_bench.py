#!/usr/bin/env python3
"""The user's path: compiled models simulated through the tools, whole process.

    tool_bench.py [--sim EMBER_SIM] [--run EMBER_RUN [--devices sim,rtl]] [--repeat R]
                  [--rtl-repeat R] [--isa FILE] [--goal NAME] NAME=BIN.elf ...

For each binary, runs `ember-sim BIN.elf --no-table --no-progress --report R.json` and,
with --run, `ember-run BIN.elf --device D --quiet --report R.json` for each device of
--devices (default sim), R times (default 5; --rtl-repeat, default 1, for the RTL), and
prints the median wall time of the whole process and its CPU time (user + sys, the
median; on a shared machine the CPU time is the steadier figure) beside the engine's own
time, the report's host_seconds (the simulation alone, what sim_bench --elf measures),
the time and share of the process spent outside the engine (each run's, the median:
starting the tool, reading and checking the binary, the runtime, the job ring, the
firmware's checks and copies, I/O and the report) and the simulated cycles per second,
end to end and of the engine; first the host's load average. For the binary named by
--goal (ResNet-50), also the goal of issue 46 item 4: ember-sim's whole process at most 0.5 s
and at most 25 % of it outside the engine, and ember-run --device sim's at most 25 %
outside the engine. Prints figures; never fails on time (exit 1 only when a tool fails or
writes no report).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_SECONDS = 0.5
GOAL_OUTSIDE = 0.25


def run_once(cmd, report):
    """Wall and CPU (user + sys) seconds of one run of `cmd`, and its report's host_seconds
    and cycles."""
    if os.path.exists(report):
        os.remove(report)
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                    err.read().decode(errors="replace").strip()))
    with open(report) as f:
        r = json.load(f)
    return wall, usage.ru_utime + usage.ru_stime, float(r["host_seconds"]), int(r["cycles"])


def measure(cmd, report, repeat):
    """Medians of `repeat` runs: wall seconds, CPU seconds, engine seconds, the seconds
    outside the engine and its share of the wall time (each run's own, then the median:
    on a loaded host the engine's time moves with the whole's); and the cycles."""
    runs = [run_once(cmd, report) for _ in range(repeat)]
    cycles = {r[3] for r in runs}
    if len(cycles) != 1:
        raise RuntimeError("%s: cycles differ between runs: %s" % (" ".join(cmd), sorted(cycles)))
    medians = tuple(statistics.median(r[i] for r in runs) for i in range(3))
    outside = statistics.median(max(0.0, r[0] - r[2]) for r in runs)
    share = statistics.median(max(0.0, r[0] - r[2]) / r[0] if r[0] > 0 else 0.0 for r in runs)
    return medians + (outside, share, cycles.pop())


def speed(cycles, seconds):
    """Simulated cycles per second as text (M or k)."""
    v = cycles / seconds if seconds > 0 else 0.0
    return "%.1f M" % (v / 1e6) if v >= 1e6 else "%.0f k" % (v / 1e3)


def line(name, tool, figures, repeat):
    wall, cpu, engine, outside, share, cycles = figures
    print("%-18s %-23s whole process %.3f s (median of %d; CPU %.3f s), engine %.3f s, outside "
          "the engine %.3f s = %4.1f %%, %d cycles, %s simulated cycles/s end to end (engine %s)"
          % (name, tool, wall, repeat, cpu, engine, outside, 100 * share, cycles,
             speed(cycles, wall), speed(cycles, engine)))
    return share


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", help="ember-sim")
    ap.add_argument("--run", help="ember-run (also time `ember-run BIN --device D`)")
    ap.add_argument("--devices", default="sim", help="ember-run's devices (sim, rtl)")
    ap.add_argument("--isa", help="the description (--isa of the tools)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rtl-repeat", type=int, default=1)
    ap.add_argument("--goal", help="NAME of the binary the goal applies to")
    ap.add_argument("binaries", nargs="+", metavar="NAME=BIN.elf")
    a = ap.parse_args()
    if not a.sim and not a.run:
        ap.error("give --sim, --run or both")
    isa = ["--isa", a.isa] if a.isa else []
    status = 0
    print("host load average: %.2f %.2f %.2f (1, 5, 15 min) on %d CPUs"
          % (os.getloadavg() + (os.cpu_count() or 1,)))
    with tempfile.TemporaryDirectory(prefix="tool_bench_") as tmp:
        report = os.path.join(tmp, "report.json")
        for spec in a.binaries:
            name, _, elf = spec.partition("=")
            if not elf:
                ap.error("expected NAME=BIN.elf, got %r" % spec)
            tools = []
            if a.sim:
                tools.append(("ember-sim", [a.sim, elf] + isa +
                              ["--no-table", "--no-progress", "--report", report], a.repeat))
            for dev in a.devices.split(",") if a.run else []:
                tools.append(("ember-run --device " + dev,
                              [a.run, elf, "--device", dev] + isa + ["--quiet", "--report", report],
                              a.rtl_repeat if dev == "rtl" else a.repeat))
            for tool, cmd, repeat in tools:
                try:
                    figures = measure(cmd, report, max(1, repeat))
                except (RuntimeError, OSError, ValueError, KeyError) as e:
                    print("%-18s %-23s failed: %s" % (name, tool, e))
                    status = 1
                    continue
                outside = line(name, tool, figures, max(1, repeat))
                wall = figures[0]
                if name == a.goal and tool == "ember-sim":
                    met = wall <= GOAL_SECONDS and outside <= GOAL_OUTSIDE
                    print("%-18s goal (issue 46): whole process <= %.1f s and <= %d %% outside "
                          "the engine: %s" % (name, GOAL_SECONDS, 100 * GOAL_OUTSIDE,
                                              "met" if met else "not met"))
                elif name == a.goal and tool == "ember-run --device sim":
                    print("%-18s goal (issue 46): ember-run --device sim <= %d %% outside the "
                          "engine: %s" % (name, 100 * GOAL_OUTSIDE,
                                          "met" if outside <= GOAL_OUTSIDE else "not met"))
    return status


if __name__ == "__main__":
    sys.exit(main())
