"""ember-dse on Dask: figures for docs/dse.md (issue 44). Prints; never fails on time.

1. Scaling and overhead: 27- and 81-point sweeps over three small CNNs (16 x 16 inputs) with
   the process pool (--jobs 1, 2) and a local Dask cluster (1, 2 workers), each Dask run
   on an empty cache; the overhead of Dask against the pool at equal workers, whole
   sweeps and per point. A sweep's time is a fixed part (starting the driver, importing
   and quantizing the models, connecting) plus a part per run; the per-point figure is
   the marginal one, (T(81 points) - T(27 points)) / 162 runs for each path, so the fixed
   part of a sweep does not count as a cost per point; each sweep runs five times, the
   pool's and Dask's in turn (so both see the same load), and the medians are compared.
   Beside wall time, each sweep's CPU time: every process it used (the driver and its
   children, and the running scheduler and workers, nannies included), which other
   load on the machine disturbs far less than wall time.
2. Search vs grid: a 210-point grid (array x act SRAM x weight SRAM) over the three
   models, exhaustively, then `ember-dse search` (NSGA-II, seeded) with 25% of the
   evaluations on an empty cache; the hypervolume of both fronts (cycles, energy, SRAM
   bytes, normalised to the grid's ranges, reference point 1.1) and both wall times.

usage: dask_bench.py EMBER_DSE WORK_DIR [--search-only | --scaling-only]
"""

import csv
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

GRID27 = ["--axis", "array=4,8,16", "--axis", "queue_depth=4,8,32",
          "--axis", "dram_bytes_per_cycle=8,16,32"]
GRID81 = GRID27 + ["--axis", "/hardware/dma/latency_cycles=50,100,200"]
REPEAT = 5
GRID210 = ["--axis", "array=4,8,16,32,64", "--axis", "act_kib=4,8,16,32,64,128",
           "--axis", "weight_kib=4,8,16,32,64,128,256"]


def make_models(folder, size=16):
    rng = np.random.default_rng(7)
    os.makedirs(folder, exist_ok=True)

    def init(name, shape, scale):
        return numpy_helper.from_array(rng.uniform(-scale, scale, shape).astype(np.float32), name)
    paths = []
    for name, cin, mid in (("conv3", 16, 32), ("conv3wide", 32, 64), ("conv3x2", 16, 16)):
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1] * 4),
                 helper.make_node("Relu", ["c"], ["r"]),
                 helper.make_node("Conv", ["r", "w2", "b2"], ["c2"], pads=[1] * 4),
                 helper.make_node("Relu", ["c2"], ["r2"]),
                 helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
                 helper.make_node("Flatten", ["g"], ["f"]),
                 helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
        graph = helper.make_graph(
            nodes, name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, size, size])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
            [init("w", (mid, cin, 3, 3), 0.2), init("b", (mid,), 0.1),
             init("w2", (mid, mid, 3, 3), 0.1), init("b2", (mid,), 0.1),
             init("fw", (10, mid), 0.5), init("fb", (10,), 0.1)])
        path = os.path.join(folder, name + ".onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        paths.append(path)
    return paths


def cluster_cpu(procs):
    """CPU seconds (user + system) so far of `procs` and all their descendants."""
    import psutil
    total = 0.0
    for p in procs:
        try:
            top = psutil.Process(p.pid)
            for q in [top] + top.children(recursive=True):
                t = q.cpu_times()
                total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def children_cpu():
    """CPU seconds of this process's finished children (and theirs)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, cwd, cluster=()):
    """(wall seconds, output, CPU seconds of the command and of the `cluster` processes)."""
    os.makedirs(cwd, exist_ok=True)
    c0 = children_cpu() + cluster_cpu(cluster)
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout}")
    wall = time.monotonic() - t0
    return wall, r.stdout, children_cpu() + cluster_cpu(cluster) - c0


def objectives_of_grid(csv_file):
    by = {}
    with open(csv_file, newline="") as f:
        for row in csv.DictReader(f):
            by.setdefault(row["point"], []).append(row)
    out = []
    for rows in by.values():
        if all(r["status"] == "ok" for r in rows):
            sram = sum(int(v) for k, v in rows[0].items() if k.startswith("sram_")
                       and k.endswith("_bytes") and not k.endswith("peak_bytes"))
            out.append((sum(int(r["cycles"]) for r in rows),
                        sum(float(r["energy_uj"]) for r in rows), sram))
    return out


def objectives_of_search(csv_file):
    with open(csv_file, newline="") as f:
        return [(int(r["cycles"]), float(r["energy_uj"]), int(r["sram_bytes"]))
                for r in csv.DictReader(f) if r["source"] == "search" and r["status"] == "ok"]


def hypervolume(points, lo, hi):
    """Of the front of `points`, normalised to [lo, hi] per objective, reference 1.1."""
    from optuna._hypervolume import WFG
    from ember.dse_search import pareto
    front = [p for p, f in zip(points, pareto(points)) if f]
    norm = np.array([[(v - a) / ((b - a) or 1) for v, a, b in zip(p, lo, hi)] for p in front])
    return WFG().compute(norm, np.full(3, 1.1))


def warm_cluster(work, jobs, env=None):
    """A scheduler and `jobs` workers of one thread, with `env` added to their environment
    (default: ember.dse.SWEEP_ENV, Dask's housekeeping as a sweep's cluster sets it);
    returns (address, processes)."""
    import socket
    from ember.dse import SWEEP_ENV
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    addr = f"tcp://127.0.0.1:{port}"
    py, log = "/usr/bin/python3", open(os.path.join(work, f"cluster{jobs}.log"), "a")
    env = dict(os.environ, **(SWEEP_ENV if env is None else env))
    procs = [subprocess.Popen([py, "-m", "distributed.cli.dask_scheduler", "--host",
                               "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=log, stderr=log, env=env)]
    procs += [subprocess.Popen([py, "-m", "distributed.cli.dask_worker", addr, "--nthreads", "1",
                                "--no-dashboard", "--local-directory",
                                os.path.join(work, f"w{jobs}{i}")], stdout=log, stderr=log,
                               env=env)
              for i in range(jobs)]
    from distributed import Client
    with Client(addr, timeout=60) as c:
        c.wait_for_workers(jobs, timeout=60)
    return addr, procs


def sweep_time(base, grid, where, pool_jobs=None, addr=None, cluster=()):
    """(wall, CPU) seconds of one sweep on the pool (--jobs) or on a running cluster (a
    fresh cache folder, so every run is evaluated)."""
    shutil.rmtree(where, ignore_errors=True)
    if addr:
        w, _, c = timed(base + grid + ["--scheduler", addr, "--cache", where + "-cache"], where,
                        cluster)
    else:
        w, _, c = timed(base + grid + ["--jobs", str(pool_jobs)], where)
    return w, c


def stop(procs):
    for p in procs:
        p.kill()
        p.wait()


def idle_cost(work, seconds=10):
    """The CPU an idle scheduler and worker (its nanny included) spend per second, with
    Dask's default housekeeping and with a sweep's (ember.dse.SWEEP_ENV)."""
    print(f"0. an idle scheduler and one worker, CPU over {seconds} s:")
    for name, env in (("Dask's defaults", {}), ("ember.dse.SWEEP_ENV", None)):
        _, procs = warm_cluster(work, 1, env)
        try:
            time.sleep(2)
            c0 = cluster_cpu(procs)
            time.sleep(seconds)
            used = cluster_cpu(procs) - c0
        finally:
            stop(procs)
        print(f"   {name}: {100 * used / seconds:.1f}% of a core")


def scaling(dse, models, work):
    """Per worker count: the pool's and the running cluster's 27- and 81-point sweeps, run
    in turn REPEAT times so that both paths see the same load, medians compared, in wall
    time and in CPU time."""
    base = [dse] + models + ["--no-table", "--no-progress", "--out", "out"]
    runs = (81 - 27) * len(models)
    print(f"1. 27- and 81-point sweeps x {len(models)} models; per point: (T(81) - T(27)) / "
          f"{runs} runs, medians of {REPEAT} alternating repetitions; wall and CPU time")
    for jobs in (1, 2):
        cold = timed(base + GRID27 + ["--jobs", str(jobs), "--scheduler", "local", "--cache",
                                      os.path.join(work, f"cache-l{jobs}")],
                     os.path.join(work, f"local{jobs}"))[0]
        addr, procs = warm_cluster(work, jobs)
        t = {k: [] for k in ("pool27", "pool81", "dask27", "dask81")}
        try:  # the first sweep loads the models into the workers; the next ones are measured
            sweep_time(base, GRID27, os.path.join(work, f"warm{jobs}"), addr=addr, cluster=procs)
            for rep in range(REPEAT):
                for name, grid in (("27", GRID27), ("81", GRID81)):
                    where = os.path.join(work, f"{jobs}-{rep}-{name}")
                    t["pool" + name].append(sweep_time(base, grid, where + "p", pool_jobs=jobs))
                    t["dask" + name].append(sweep_time(base, grid, where + "d", addr=addr,
                                                       cluster=procs))
        finally:
            stop(procs)
        report_scaling(jobs, t, runs, len(models), cold)


def report_scaling(jobs, t, runs, n_models, cold):
    """Prints one worker count's medians: whole sweeps, per point (wall and CPU)."""
    wall = {k: float(np.median([w for w, _ in v])) for k, v in t.items()}
    cpu = {k: float(np.median([c for _, c in v])) for k, v in t.items()}
    spread = max(max(w for w, _ in v) - min(w for w, _ in v) for v in t.values())
    print(f"   {jobs} worker(s): 81 points: process pool {wall['pool81']:.2f} s; Dask, running "
          f"workers {wall['dask81']:.2f} s "
          f"({100 * (wall['dask81'] - wall['pool81']) / wall['pool81']:+.0f}% whole sweep); "
          f"Dask, a local cluster started by a 27-point sweep {cold:.1f} s")
    for what, m in (("wall", wall), ("CPU", cpu)):
        pool = (m["pool81"] - m["pool27"]) / runs
        dask = (m["dask81"] - m["dask27"]) / runs
        print(f"      per point, {what}: pool {pool * 1000:.2f} ms, Dask {dask * 1000:.2f} ms "
              f"({100 * (dask - pool) / pool:+.1f}%); fixed part of a sweep: pool "
              f"{m['pool27'] - 27 * n_models * pool:.2f} s, Dask "
              f"{m['dask27'] - 27 * n_models * dask:.2f} s")
    print(f"      largest wall spread of a repeated sweep {spread:.2f} s")


def main():
    dse, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    models = make_models(os.path.join(work, "models"))
    base = [dse] + models + ["--no-table", "--no-progress", "--out", "out"]
    if "--search-only" not in sys.argv:
        idle_cost(work)
        scaling(dse, models, work)
    if "--scaling-only" in sys.argv:
        return 0
    print("2. search vs grid: 210 points x 3 models")
    t_grid, _ = timed(base + GRID210 + ["--jobs", "2", "--scheduler", "local", "--cache",
                                        os.path.join(work, "cache-grid")],
                      os.path.join(work, "grid"))
    trials = 210 // 4
    t_search, out = timed([dse, "search"] + models + GRID210 +
                          ["--trials", str(trials), "--population", "13", "--seed", "1",
                           "--jobs", "2", "--no-progress", "--cache",
                           os.path.join(work, "cache-search"), "--grid",
                           os.path.join(work, "grid", "out"), "--out", "search"], work)
    grid = objectives_of_grid(os.path.join(work, "grid", "out", "dse.csv"))
    found = objectives_of_search(os.path.join(work, "search", "search.csv"))
    lo = [min(p[i] for p in grid) for i in range(3)]
    hi = [max(p[i] for p in grid) for i in range(3)]
    hv_grid, hv_search = hypervolume(grid, lo, hi), hypervolume(found, lo, hi)
    print(f"   grid: 210 points ({len(grid)} ran on every model), {t_grid:.1f} s; "
          f"hypervolume {hv_grid:.4f}")
    print(f"   search: {trials} trials ({100 * trials / 210:.0f}% of the grid, "
          f"{len(set(found))} distinct ok points), {t_search:.1f} s; hypervolume "
          f"{hv_search:.4f} ({100 * hv_search / hv_grid:.1f}% of the grid's)")
    print("   " + out.strip().splitlines()[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
