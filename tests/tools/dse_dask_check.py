"""ember-dse on a real Dask cluster (docs/dse.md): a scheduler and two workers on
127.0.0.1, a 27-point sweep over two tiny models, and the CSV compared with a local
ember-dse run's byte for byte (rows sorted; host_seconds, the wall time each run took on
the machine that ran it, blanked in both). Then the same sweep with one worker killed
mid-sweep (every row present once, the same CSV), a sweep interrupted after some points
and resumed with --resume (only the rest evaluated, counted from the cache),
ember.dse.sweep(client=...) from Python, and --area with each point's synthesis on a
worker (a stand-in for area.py: Yosys takes minutes per point). Every process it starts is killed at the end.

usage: dse_dask_check.py EMBER_DSE WORK_DIR
"""

import csv
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

AXES = ["--axis", "array=4,8,16", "--axis", "queue_depth=4,8,32",
        "--axis", "dma_latency=50,100,200"]
PY = "/usr/bin/python3"
STARTED = []


def make_models(folder):
    """Two tiny CNNs the NPU runs whole (milliseconds per simulation)."""
    rng = np.random.default_rng(44)
    os.makedirs(folder, exist_ok=True)

    def init(name, shape, scale):
        return numpy_helper.from_array(rng.uniform(-scale, scale, shape).astype(np.float32), name)

    paths = []
    for name, cin, k in (("convgap", 16, 3), ("pointwise", 8, 1)):
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[k // 2] * 4),
                 helper.make_node("Relu", ["c"], ["r"]),
                 helper.make_node("GlobalAveragePool", ["r"], ["g"]),
                 helper.make_node("Flatten", ["g"], ["f"]),
                 helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
        graph = helper.make_graph(
            nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, 8, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
            [init("w", (16, cin, k, k), 0.3), init("b", (16,), 0.1), init("fw", (10, 16), 0.5),
             init("fb", (10,), 0.1)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        path = os.path.join(folder, name + ".onnx")
        onnx.save(model, path)
        paths.append(path)
    return paths


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, log, **kw):
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **kw)
    STARTED.append(p)
    return p


def kill(p):
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()


def normalised(csv_file):
    """The CSV with host_seconds blanked and its rows sorted (the header first)."""
    with open(csv_file, newline="") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("host_seconds")
    for r in rows[1:]:
        r[col] = ""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([rows[0]] + sorted(rows[1:]))
    return out.getvalue()


def run_dse(dse, models, cwd, extra, log):
    os.makedirs(cwd, exist_ok=True)
    t0 = time.monotonic()
    r = subprocess.run([dse] + models + AXES + ["--out", "out", "--no-table", "--no-progress"] +
                       extra, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=240)
    log.write(r.stdout)
    if r.returncode != 0:
        sys.exit(f"FAIL: ember-dse {' '.join(extra)} exited {r.returncode}:\n{r.stdout}")
    return r.stdout, time.monotonic() - t0


def cached_rows(folder):
    n = 0
    for _, _, files in os.walk(folder):
        n += sum(f.endswith(".json") for f in files)
    return n


def check_same(want, got_file, what):
    got = normalised(got_file)
    if got != want:
        sys.exit(f"FAIL: {what}: the CSV differs from the local run's:\n--- local\n{want}"
                 f"--- {what}\n{got}")
    rows = got.splitlines()[1:]
    keys = [tuple(r.split(",")[i] for i in (0, 4)) for r in rows]  # point, model
    if len(rows) != 54 or len(set(keys)) != 54:
        sys.exit(f"FAIL: {what}: {len(rows)} rows, {len(set(keys))} distinct (want 54 once)")
    print(f"ok: {what}: 54 rows, the local run's CSV byte for byte")


def sweep_killing_a_worker(dse, models, work, scheduler, victim, log):
    """The sweep with `victim` (a worker) killed once a few rows are in the cache."""
    cache = os.path.join(work, "cache-kill")
    cwd = os.path.join(work, "kill")
    os.makedirs(cwd)
    p = subprocess.Popen([dse] + models + AXES + ["--out", "out", "--no-table", "--no-progress",
                                                  "--scheduler", scheduler, "--cache", cache],
                         cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    STARTED.append(p)
    deadline = time.monotonic() + 120
    while cached_rows(cache) < 6 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    at = cached_rows(cache)
    if p.poll() is not None:
        sys.exit(f"FAIL: the sweep ended before a worker could be killed ({at} rows cached)")
    kill(victim)
    print(f"killed a worker with {at} of 54 rows done")
    if p.wait(timeout=180) != 0:
        sys.exit("FAIL: the sweep with a killed worker failed (log above)")
    return os.path.join(cwd, "out", "dse.csv")


def interrupted_and_resumed(dse, models, work, scheduler, log):
    """A sweep stopped (its process group killed) after some rows, then --resume."""
    cache = os.path.join(work, "cache-resume")
    cwd = os.path.join(work, "resume")
    os.makedirs(cwd)
    p = subprocess.Popen([dse] + models + AXES + ["--out", "out", "--no-table", "--no-progress",
                                                  "--scheduler", scheduler, "--cache", cache],
                         cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    STARTED.append(p)
    deadline = time.monotonic() + 120
    while cached_rows(cache) < 20 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if p.poll() is not None:
        sys.exit("FAIL: the sweep to interrupt ended first")
    kill(p)
    time.sleep(0.5)  # a task a worker was running may still finish into the cache
    done = cached_rows(cache)
    out = subprocess.run([dse, "--resume", "out", "--scheduler", scheduler], cwd=cwd,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180)
    log.write(out.stdout)
    line = [l for l in out.stdout.splitlines() if l.startswith("dask:")]
    m = re.match(r"dask: 54 runs: (\d+) from the cache, (\d+) evaluated", line[0] if line else "")
    # Rows cached after the count (a task still running when the driver died) come from
    # the cache too: at least `done`, and every other row evaluated.
    if out.returncode != 0 or not m or not done <= int(m[1]) < 54 or \
            int(m[1]) + int(m[2]) != 54:
        sys.exit(f"FAIL: --resume after {done} cached rows: want 'dask: 54 runs: K from the "
                 f"cache, 54-K evaluated' with K >= {done}, got:\n{out.stdout}")
    print(f"ok: interrupted after {done} of 54 rows; --resume evaluated only the rest: "
          f"{line[0]}")
    return os.path.join(cwd, "out", "dse.csv")


def python_sweep(models, work, scheduler):
    """ember.dse.sweep(client=...) from Python, on the same cluster."""
    import ember.dse
    from distributed import Client
    cwd = os.path.join(work, "python")
    os.makedirs(cwd)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with Client(scheduler) as client:
            r = ember.dse.sweep(models, axes=[a for a in AXES if a != "--axis"], out="out",
                                client=client, cache=os.path.join(work, "cache-python"))
    finally:
        os.chdir(here)
    return os.path.join(cwd, r["csv"])


def search_on_the_cluster(dse, models, work, scheduler, log):
    """ember-dse search (NSGA-II, seeded) on the cluster, the grid's points beside it."""
    cmd = [dse, "search"] + models + AXES + ["--trials", "8", "--population", "4", "--seed", "5",
                                             "--scheduler", scheduler, "--cache",
                                             os.path.join(work, "cache"), "--grid",
                                             os.path.join(work, "dask", "out"), "--out",
                                             "search", "--no-progress"]
    runs = []
    for _ in range(2):  # seeded: the same trials twice
        r = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=180)
        log.write(r.stdout)
        if r.returncode != 0:
            sys.exit(f"FAIL: ember-dse search:\n{r.stdout}")
        with open(os.path.join(work, "search", "search.csv"), newline="") as f:
            runs.append(list(csv.DictReader(f)))
    rows = runs[0]
    trials = [r for r in rows if r["source"] == "search"]
    grid = [r for r in rows if r["source"] == "grid"]
    if runs[0] != runs[1] or len(trials) != 8 or len(grid) != 27:
        sys.exit(f"FAIL: search: {len(trials)} trials, {len(grid)} grid points, same twice: "
                 f"{runs[0] == runs[1]}")
    if not any(r["front"] == "1" for r in rows) or any(r["in_grid"] != "1" for r in trials):
        sys.exit("FAIL: search: no front marked, or a trial not marked as a grid point")
    print(f"ok: search: 8 trials (seeded, the same twice), front of "
          f"{sum(r['front'] == '1' for r in rows)} beside the 27 grid points")


AREA_STANDIN = """import json, os, sys
# A stand-in for rtl/cmake/area.py (area.py YOSYS OUT.json SPEC): figures from the
# description's text; the command line of the process that ran it goes to ../calls.txt.
yosys, out, spec = sys.argv[1:4]
text = open(spec.split("=", 1)[1].split(":", 1)[0]).read()
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "calls.txt"), "a") as log:
    log.write(open(f"/proc/{os.getppid()}/cmdline").read().replace(chr(0), " ") + chr(10))
json.dump({"p": {"sram_bits": {"act": 8 * len(text)},
                 "npu": {"cells": sum(map(ord, text)), "flip_flops": len(text) % 97,
                         "seconds": 0.25}}}, open(out, "w"))
"""


def standin_area_flow(work):
    """--rtl and --yosys of a stand-in flow (area.py above, a Yosys that only says its
    version): the Yosys synthesis itself takes minutes per point."""
    rtl = os.path.join(work, "rtl-standin")
    os.makedirs(os.path.join(rtl, "cmake"), exist_ok=True)
    os.makedirs(os.path.join(rtl, "src"), exist_ok=True)
    with open(os.path.join(rtl, "cmake", "area.py"), "w") as f:
        f.write(AREA_STANDIN)
    with open(os.path.join(rtl, "src", "sources.txt"), "w") as f:
        f.write("standin\n")
    with open(os.path.join(rtl, "src", "standin.sv"), "w") as f:
        f.write("module standin; endmodule\n")
    yosys = os.path.join(work, "yosys-standin")
    with open(yosys, "w") as f:
        f.write("#!/bin/sh\necho 'Yosys 0.0 (stand-in)'\n")
    os.chmod(yosys, 0o755)
    return rtl, yosys


def area_on_the_workers(dse, models, work, scheduler, log):
    """--area with --scheduler: each point's area is synthesized on a worker (the flow's
    parent process is a dask worker, not ember-dse), with the same CSV as a local --area
    sweep's and OUT/area/pN.json per point."""
    rtl, yosys = standin_area_flow(work)
    calls = os.path.join(rtl, "calls.txt")
    for name, extra, runner in (("area-local", ["--jobs", "2"], "ember-dse"),
                                ("area-dask", ["--scheduler", scheduler, "--cache",
                                               os.path.join(work, "cache")], "dask_worker")):
        if os.path.exists(calls):
            os.remove(calls)
        run_dse(dse, models, os.path.join(work, name),
                extra + ["--area", "--rtl", rtl, "--yosys", yosys, "--area-cache",
                         os.path.join(work, name + "-cache")], log)
        with open(calls) as f:
            who = f.read().splitlines()
        if len(who) != 27 or not all(runner in w for w in who):
            sys.exit(f"FAIL: {name}: the area flow ran {len(who)} times (want 27, each by "
                     f"{runner}):\n" + "\n".join(who[:5]))
    local = normalised(os.path.join(work, "area-local", "out", "dse.csv"))
    dask = normalised(os.path.join(work, "area-dask", "out", "dse.csv"))
    if "npu_cells" not in local.splitlines()[0]:
        sys.exit(f"FAIL: --area: no area column in the CSV:\n{local.splitlines()[0]}")
    if dask != local:
        sys.exit(f"FAIL: --area on Dask: the CSV differs from the local run's:\n--- local\n"
                 f"{local}--- Dask\n{dask}")
    n = len(os.listdir(os.path.join(work, "area-dask", "out", "area")))
    if n != 27:
        sys.exit(f"FAIL: --area on Dask: {n} area records in OUT/area, want 27")
    # A Yosys no machine has: the driver does not look for it, each point's area fails on
    # its worker naming it, and the rows are those of the sweep without --area.
    run_dse(dse, models, os.path.join(work, "area-missing"),
            ["--scheduler", scheduler, "--cache", os.path.join(work, "cache"), "--area",
             "--rtl", rtl, "--yosys", "/nonexistent/yosys", "--area-cache",
             os.path.join(work, "area-missing-cache")], log)
    with open(os.path.join(work, "area-missing", "out", "dse.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    bad = [r for r in rows if r["area_status"] != "failed" or
           "Yosys not found: /nonexistent/yosys" not in r["area_message"]]
    if len(rows) != 54 or bad:
        sys.exit(f"FAIL: --area on Dask without Yosys: {len(rows)} rows, {len(bad)} not a "
                 f"failed area naming the Yosys: {bad[:1]}")
    print("ok: --area on Dask: 27 syntheses, each by a dask worker; the local run's CSV "
          "(area columns included); 27 records in OUT/area; a Yosys no machine has: 54 rows, "
          "each area failed naming it")


def main():
    try:
        import distributed  # noqa: F401 (python3-distributed)
    except ImportError:
        print("skipped: python3-distributed is not installed (scripts/setup.sh installs it)")
        return 77
    dse, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    models = make_models(os.path.join(work, "models"))
    log = open(os.path.join(work, "log.txt"), "w")
    t_local = run_dse(dse, models, os.path.join(work, "local"), ["--jobs", "2"], log)[1]
    want = normalised(os.path.join(work, "local", "out", "dse.csv"))
    port = free_port()
    scheduler = f"tcp://127.0.0.1:{port}"
    scheduler_file = os.path.join(work, "scheduler.json")  # as Slurm jobs find it
    start([PY, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
           str(port), "--no-dashboard", "--scheduler-file", scheduler_file], log)
    workers = [start([PY, "-m", "distributed.cli.dask_worker", scheduler, "--nthreads", "1",
                      "--no-nanny", "--no-dashboard", "--name", f"w{i}", "--local-directory",
                      os.path.join(work, f"w{i}")], log) for i in range(2)]
    from distributed import Client
    with Client(scheduler, timeout=60) as c:
        c.wait_for_workers(2, timeout=60)
    out, t_dask = run_dse(dse, models, os.path.join(work, "dask"),
                          ["--scheduler", scheduler_file, "--cache", os.path.join(work, "cache")],
                          log)
    check_same(want, os.path.join(work, "dask", "out", "dse.csv"),
               "2 Dask workers, the scheduler named by its scheduler file")
    print(f"time: local --jobs 2 {t_local:.1f} s, Dask 2 workers {t_dask:.1f} s "
          "(each worker imports and quantizes the models once)")
    check_same(want, python_sweep(models, work, scheduler), "ember.dse.sweep(client=...)")
    search_on_the_cluster(dse, models, work, scheduler, log)
    area_on_the_workers(dse, models, work, scheduler, log)
    check_same(want, interrupted_and_resumed(dse, models, work, scheduler, log), "--resume")
    check_same(want, sweep_killing_a_worker(dse, models, work, scheduler, workers[0], log),
               "one worker killed mid-sweep")
    return 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        for proc in reversed(STARTED):
            kill(proc)
    sys.exit(code)
