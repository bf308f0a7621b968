"""Design-space sweeps and searches of NPU descriptions on Dask distributed (docs/dse.md).

A point of a sweep is a pure task: (description, model, options) -> one row, computed by
ember-dse's own C++ (`_ember.dse_evaluate`: compile with fallback none, simulate, with
`check` compare with the int8 interpreter), cached in a folder every worker shares under
a SHA-256 of the description, the model file, the options and this build of Ember. The
rows go to the CSV, page and table of ember-dse (`_ember.dse_report`), so a sweep on any
number of workers writes what a local `ember-dse` run writes.

    import ember.dse
    from distributed import Client
    ember.dse.sweep(["a.onnx", "b.onnx"], axes=["array=4,8,16"], out="sweep",
                    client=Client("tcp://scheduler:8786"))
    ember.dse.search(["a.onnx"], axes=["array=4,8,16", "act_kib=16,64,256"], trials=40)

`python3 -m ember.dse` is the engine behind `ember-dse --scheduler` and `ember-dse search`.
"""

import argparse
import hashlib
import json
import os
import sys
import time

from . import _ember

__all__ = ["sweep", "search", "run_points", "evaluate_point", "point_key", "default_cache"]

_CANON = {"sort_keys": True, "separators": (",", ":")}


def default_cache():
    """$XDG_CACHE_HOME/ember/dse, else ~/.cache/ember/dse (as ember-dse's --cache)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember", "dse")


_BUILD_ID = None


def build_id():
    """Ember's version and a SHA-256 of this process's extension module: any change to the
    C++ that computes rows makes new cache keys."""
    global _BUILD_ID
    if _BUILD_ID is None:
        h = hashlib.sha256()
        with open(_ember.__file__, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _BUILD_ID = "ember-0.1.0+" + h.hexdigest()[:16]
    return _BUILD_ID


_FILE_SHA = {}


def file_sha256(path):
    """SHA-256 of a file's bytes (remembered per path, size and modification time)."""
    st = os.stat(path)
    k = (path, st.st_size, st.st_mtime_ns)
    if k not in _FILE_SHA:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _FILE_SHA[k] = h.hexdigest()
    return _FILE_SHA[k]


def point_key(description, model_sha, options):
    """The cache key of one row: description (canonical JSON), model bytes, options
    (calibrate, check, input_shapes) and build_id()."""
    return _key(_sha256(json.dumps(description, **_CANON)), model_sha, options)


def _sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def _key(description_sha, model_sha, options):
    """point_key from the description's SHA-256 (of its canonical JSON), which a sweep
    computes once per point rather than once per model."""
    blob = json.dumps({"description": description_sha, "model": model_sha,
                       "options": options, "ember": build_id()}, **_CANON)
    return hashlib.sha256(blob.encode()).hexdigest()


def _point_text(p, description_text):
    """The JSON text of a valid point as `_ember.dse_evaluate` reads it, built once per
    point and sent to the workers as text (no per-run serialisation)."""
    head = json.dumps({"index": p["index"], "settings": [], "file": p["file"],
                       "invalid": ""}, **_CANON)
    return head[:-1] + ',"description":' + description_text + "}"


class Cache:
    """One JSON file per key, DIR/ab/abcd....json, written atomically (any number of
    workers on any number of hosts may share DIR)."""

    def __init__(self, folder):
        self.folder = os.path.abspath(folder)

    def _file(self, key):
        return os.path.join(self.folder, key[:2], key + ".json")

    def get(self, key):
        try:
            with open(self._file(key)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def put(self, key, row):
        """Stores `row`: a dict, or the JSON text of one (as `_ember.dse_evaluate` gives
        it, stored as it is)."""
        path = self._file(key)
        folder = os.path.dirname(path)
        if folder not in _MADE:  # one mkdir per folder and process, not one per row
            os.makedirs(folder, exist_ok=True)
            _MADE.add(folder)
        try:
            _write_json(path, row)
        except FileNotFoundError:  # the folder went away while this process lived
            os.makedirs(folder, exist_ok=True)
            _write_json(path, row)


_MADE = set()


def _write_json(path, value):
    """`value` as canonical JSON (or, given a str, that JSON text) in `path`, atomically (a
    temporary file of this process, then a rename: any number of writers may race on one
    path)."""
    tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    with open(tmp, "w") as f:
        if isinstance(value, str):
            f.write(value)
        else:
            json.dump(value, f, **_CANON)
    os.replace(tmp, path)


_MODELS = {}


def _worker_model(model, options):
    """The model imported and quantized once per worker process (as ember-dse does once
    per sweep), on one thread as ember-dse's (EMBER_NUM_THREADS=1)."""
    os.environ["EMBER_NUM_THREADS"] = "1"
    if file_sha256(model["path"]) != model["sha256"]:
        raise _ember.Error(f"{model['path']}: differs on this worker from the driver's file "
                           "(the workers must see the same model files)")
    k = (model["path"], model["sha256"], json.dumps(options, **_CANON))
    if k not in _MODELS:
        _MODELS[k] = _ember.dse_load_model(model["path"], options["calibrate"],
                                           options["check"], options["input_shapes"])
    return _MODELS[k]


def evaluate_point(point, model, options, cache_folder, key):
    """The task: the row of `model` on `point` (a valid point's dict, or its JSON text),
    from the cache or computed and cached. Pure: the same arguments give the same row."""
    row, cached = _evaluate_text(point, model, options, cache_folder, key)
    return (json.loads(row) if isinstance(row, str) else row), cached


def _evaluate_text(point, model, options, cache_folder, key):
    """evaluate_point's (row, cached), a computed row as the JSON text the library wrote
    (cached as it is and sent as text: no decoding and encoding again per run)."""
    cache = Cache(cache_folder)
    row = cache.get(key)
    if row is not None:
        return row, True
    m = _worker_model(model, options)
    text = point if isinstance(point, str) else json.dumps(point)
    row = _ember.dse_evaluate(text, m, options["check"])
    cache.put(key, row)
    return row, False


def evaluate_area(point_text, area):
    """The task of ember-dse --area on Dask: the area record of one valid point (what
    OUT/area/pN.json holds), read from the area cache or synthesized by Yosys on this
    worker. Yosys and Ember's RTL sources are found on the worker's machine (`area`:
    yosys, rtl, cache as --yosys, --rtl and --area-cache give them)."""
    return json.loads(_ember.dse_area(point_text, json.dumps(area)))


def _failed_area(exc):
    kind = getattr(exc, "kind", type(exc).__name__)
    return {"key": "", "state": "failed", "cells": 0, "flip_flops": 0, "sram_bits": 0,
            "seconds": 0.0, "cached": False, "area": {},
            "message": f"the worker synthesizing it raised {kind}: {exc}"}


def _submit_areas(client, points, area, retries):
    """One area task per valid point (the area is the description's, not a model's),
    submitted before the rows: a synthesis takes minutes, a row milliseconds."""
    request = {k: area.get(k, "") for k in ("yosys", "rtl", "cache")}
    return {client.submit(evaluate_area, p["text"], request, retries=retries, pure=False,
                          key=f"ember-dse-area-{p['index']}-{p['sha'][:16]}"): p["index"]
            for p in points}


def _collect_areas(futures):
    from distributed import as_completed
    out = {}
    for f in as_completed(list(futures)):
        try:
            out[futures[f]] = f.result()
        except Exception as e:  # lost again and again, or the tools missing on a worker
            out[futures[f]] = _failed_area(e)
    return out


def _blank_row(point, model, status, message):
    return {"point": point, "model": model, "status": status, "message": message,
            "cycles": 0, "npu_seconds": 0.0, "energy_uj": 0.0, "mac_utilization": 0.0,
            "sram": [], "host_seconds": 0.0}


# Dask's housekeeping, set for a sweep's cluster: its defaults (the worker's statistical
# profiler every 10 ms, an event-loop check every 20 ms, the nanny's memory check every
# 100 ms, a system monitor every 500 ms) cost an idle scheduler and worker about 10% of a
# core; with these about 1.3% (docs/dse.md section 6). The same settings as environment
# variables, for `dask-scheduler` and `dask-worker` started by hand: SWEEP_ENV.
SWEEP_CONFIG = {"distributed.worker.profile.enabled": False,
                "distributed.admin.tick.interval": "1s",
                "distributed.worker.memory.monitor-interval": "1s",
                "distributed.admin.system-monitor.interval": "2s"}
SWEEP_ENV = {"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v)
             for k, v in SWEEP_CONFIG.items()}


def _local_client(jobs):
    import dask
    from distributed import Client, LocalCluster
    with dask.config.set(SWEEP_CONFIG):  # the nannies pass it on to their workers
        cluster = LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=True,
                               dashboard_address=None)
    return Client(cluster)


def _client(scheduler, jobs):
    """A Client of `scheduler`: an address (tcp://HOST:PORT), or the path of a scheduler
    file (`dask-scheduler --scheduler-file F`, as batch systems start it); with none, a
    local cluster of `jobs` workers."""
    if not scheduler:
        return _local_client(jobs)
    from distributed import Client
    if "://" not in scheduler:
        if os.path.isfile(scheduler):
            return Client(scheduler_file=scheduler)
        host, _, port = scheduler.rpartition(":")
        if not (host and port.isdigit()):  # not HOST:PORT either
            raise _ember.UsageError(
                f"--scheduler {scheduler}: no such scheduler file (has the scheduler written "
                "it yet?) and not an address (tcp://HOST:PORT)")
    return Client(scheduler)


def _quiet_dask():
    import logging
    for name in ("distributed", "distributed.worker", "distributed.scheduler",
                 "distributed.nanny", "distributed.core", "distributed.client"):
        logging.getLogger(name).setLevel(logging.ERROR)


class _Progress:
    def __init__(self, enabled, total, cached, client):
        self.enabled, self.total, self.cached, self.client = enabled, total, cached, client
        self.t0, self.done = time.monotonic(), cached

    def step(self, n=1):
        self.done += n
        if not self.enabled:
            return
        try:
            workers = len(self.client.scheduler_info().get("workers", {}))
        except Exception:  # the scheduler's answer is only for the line
            workers = 0
        sys.stderr.write(f"\r[dse] {self.done}/{self.total} runs done ({self.cached} from the "
                         f"cache), {workers} workers, {time.monotonic() - self.t0:.0f} s")
        if self.done == self.total:
            sys.stderr.write("\r" + " " * 78 + "\r")
        sys.stderr.flush()


def _failure_row(index, name, exc):
    kind = getattr(exc, "kind", type(exc).__name__)
    if kind == "KilledWorker":
        why = ("the workers evaluating it were lost again and again (Dask's KilledWorker: a "
               "crash of the point, or of the cluster): " + str(exc))
    else:
        why = f"the worker evaluating it raised {kind}: {exc}"
    return _blank_row(index, name, "crash", why)


def run_points(points, models, *, client=None, scheduler="", jobs=1, cache=None,
               check=False, calibrate="random:8", input_shapes=None, retries=2,
               progress=False, stats=None, area=None, areas=None):
    """Rows of every (point, model): invalid points give `invalid` rows, rows in the cache
    are read, the rest are Dask tasks (one per distinct key: equal points run once) on
    `client` (else a Client of `scheduler`, else a local cluster of `jobs` workers), tried
    `retries` more times when a worker is lost. `points` are dicts (index, file,
    invalid, description), `models` dicts (path, name). Returns the rows in point, then
    model order; `stats` (a dict) receives total, cached, evaluated, workers. With
    `area` (yosys, rtl, cache), `areas` (a dict) receives each valid point's area
    record by point index, synthesized on the workers (evaluate_area)."""
    if area and areas is None:
        raise ValueError("run_points: area= needs areas= (a dict that receives the records)")
    cache_folder = os.path.abspath(cache or default_cache())
    store = Cache(cache_folder)
    options = {"calibrate": calibrate, "check": bool(check),
               "input_shapes": {k: list(v) for k, v in (input_shapes or {}).items()}}
    models = [dict(m, path=os.path.abspath(m["path"]), sha256=file_sha256(m["path"]))
              for m in models]
    rows, todo, valid = {}, {}, []
    for p in points:
        if not p.get("invalid"):
            canon = json.dumps(p["description"], **_CANON)
            sha = _sha256(canon)
            p = dict(p, text=_point_text(p, canon), sha=sha)
            valid.append(p)
        for m in models:
            slot = (p["index"], m["name"])
            if p.get("invalid"):
                rows[slot] = _blank_row(p["index"], m["name"], "invalid", p["invalid"])
                continue
            key = _key(sha, m["sha256"], options)
            hit = store.get(key)
            if hit is not None:
                rows[slot] = hit
            else:
                todo.setdefault(key, (p, m, []))[2].append(slot)
    cached = sum(1 for s, r in rows.items() if r["status"] != "invalid")
    total = sum(1 for p in points if not p.get("invalid")) * len(models)
    workers = 0
    if todo or (area and valid):
        own = None
        if client is None:
            _quiet_dask()
            own = client = _client(scheduler, jobs)
        try:
            workers = len(client.scheduler_info().get("workers", {}))
            pending = _submit_areas(client, valid, area, retries) if area else {}
            if todo:
                rows.update(_run_tasks(client, todo, options, cache_folder, retries,
                                       _Progress(progress, total, cached, client)))
            if pending:
                areas.update(_collect_areas(pending))
        finally:
            if own is not None:
                cluster = getattr(own, "cluster", None)
                own.close()
                if cluster is not None and not scheduler:
                    cluster.close()
    if stats is not None:
        stats.update(total=total, cached=cached, evaluated=len(todo), workers=workers)
    out = []
    for p in points:
        for m in models:
            r = dict(rows[(p["index"], m["name"])])
            r["point"], r["model"] = p["index"], m["name"]
            out.append(r)
    return out


def evaluate_batch(tasks, options, cache_folder):
    """Several tasks in one Dask task (one scheduling round trip for all of them): a list
    of ("row", row: a dict or its JSON text) or ("error", type name, message) in the order
    of `tasks`, each a (point, model, key) as evaluate_point takes. A point's failure is
    its own entry; a lost worker loses the batch, which Dask runs again elsewhere (cached
    rows return at once)."""
    out = []
    for point, model, key in tasks:
        try:
            out.append(("row", _evaluate_text(point, model, options, cache_folder, key)[0]))
        except Exception as e:  # a point's failure is its row, not the batch's
            out.append(("error", type(e).__name__, str(e)))
    return out


class _Raised(Exception):
    """A worker's exception, by name, for _failure_row."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _batches(keys, workers):
    """The keys in batches: about four per worker, so that a slow point does not hold up
    a worker while others idle, and at most 16 runs per batch."""
    n = max(1, min(16, -(-len(keys) // (4 * max(1, workers)))))
    return [keys[i:i + n] for i in range(0, len(keys), n)]


def _run_tasks(client, todo, options, cache_folder, retries, progress):
    """Submits the keys in batches (evaluate_batch) and collects their rows as they
    finish."""
    from distributed import as_completed
    workers = len(client.scheduler_info().get("workers", {}))
    futures = {}
    for batch in _batches(list(todo), workers):
        tasks = []
        for key in batch:
            p, m, _ = todo[key]
            tasks.append((p["text"], {"path": m["path"], "sha256": m["sha256"]}, key))
        f = client.submit(evaluate_batch, tasks, options, cache_folder,
                          key="ember-dse-" + batch[0] + "-" + str(len(batch)),
                          retries=retries, pure=False)
        futures[f] = batch
    rows = {}
    for f in as_completed(list(futures)):
        batch = futures[f]
        try:
            results = f.result()
        except Exception as e:  # the batch was lost again and again: its points crash
            results = [("error", e) for _ in batch]
        for key, res in zip(batch, results):
            slots = todo[key][2]
            if res[0] == "row" and isinstance(res[1], str):
                res = ("row", json.loads(res[1]))
            for s in slots:
                if res[0] == "row":
                    rows[s] = res[1]
                elif len(res) == 2:
                    rows[s] = _failure_row(s[0], s[1], res[1])
                else:
                    rows[s] = _failure_row(s[0], s[1], _Raised(res[1], res[2]))
            progress.step(len(slots))
    return rows


def _model_names(paths):
    """(path, name) pairs: names as ember-dse gives them ("#2" for a repeated name)."""
    named, seen = [], set()
    for path in paths:
        base = _ember.dse_model_name(os.fspath(path))
        name, k = base, 2
        while name in seen:
            name, k = f"{base}#{k}", k + 1
        seen.add(name)
        named.append({"path": os.fspath(path), "name": name})
    return named


def _summary(stats, where):
    return (f"dask: {stats['total']} runs: {stats['cached']} from the cache, "
            f"{stats['evaluated']} evaluated on {stats['workers']} workers ({where})")


def sweep(models, base=None, axes=(), random=0, seed=1, out="dse-out", client=None,
          scheduler=None, jobs=1, cache=None, check=False, calibrate="random:8",
          input_shapes=None, retries=2, progress=False, min_kib=(), max_kib=4096,
          min_array=4, max_array=64, keep_encoding=False):
    """ember-dse's sweep on Dask: the points of `axes` (or `random` descriptions) over
    `base`, every model on every point, OUT/dse.csv and OUT/dse.html written as ember-dse
    writes them. Returns {"rows", "table", "csv", "html", "stats"}."""
    options = {"axes": list(axes), "random": int(random), "seed": int(seed),
               "min_kib": list(min_kib), "max_kib": int(max_kib), "min_array": int(min_array),
               "max_array": int(max_array), "keep_encoding": bool(keep_encoding)}
    made = json.loads(_ember.dse_points(os.fspath(base) if base else "", json.dumps(options),
                                        os.fspath(out)))
    points = made["points"]
    stats = {}
    rows = run_points(points, _model_names(models), client=client, scheduler=scheduler or "",
                      jobs=jobs, cache=cache, check=check, calibrate=calibrate,
                      input_shapes=input_shapes, retries=retries, progress=progress,
                      stats=stats)
    title = f"ember-dse: {len(points)} points over {made['base']}"
    table = _ember.dse_report(json.dumps(points), json.dumps(rows), title, os.fspath(out))
    return {"rows": rows, "table": table, "stats": stats,
            "csv": os.path.join(out, "dse.csv"), "html": os.path.join(out, "dse.html")}


def search(models, **kwargs):
    """ember-dse search from Python: Optuna NSGA-II over `axes` (ember.dse_search.search,
    which documents the arguments)."""
    from .dse_search import search as _search
    return _search(models, **kwargs)


def _run_plan(plan_file, rows_file):
    """ember-dse --scheduler's engine: the plan's rows to `rows_file` (JSON)."""
    with open(plan_file) as f:
        plan = json.load(f)
    stats, area, areas = {}, plan.get("area"), {}
    rows = run_points(plan["points"], plan["models"], scheduler=plan["scheduler"],
                      jobs=plan["jobs"], cache=plan["cache"], check=plan["check"],
                      calibrate=plan["calibrate"], input_shapes=plan["input_shapes"],
                      retries=plan["retries"], progress=plan["progress"], stats=stats,
                      area=area, areas=areas)
    if area:  # a record per point, null for an invalid one
        _write_json(area["file"], [areas.get(p["index"]) for p in plan["points"]])
    _write_json(rows_file, rows)
    where = plan["scheduler"] or f"a local cluster of {plan['jobs']}"
    print(_summary(stats, where) + ("; resumed" if plan.get("resume") else ""), flush=True)
    return 0


def _shapes(specs):
    """--input-shape NAME=DxDx... values as {name: [dims]}."""
    out = {}
    for s in specs or ():
        name, _, dims = s.partition("=")
        try:
            out[name] = [int(d) for d in dims.split("x")]
        except ValueError:
            raise SystemExit(f"ember-dse: --input-shape {s}: expects NAME=DxDx... (whole numbers)")
    return out


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["run-plan"] and len(argv) == 3:
        return _run_plan(argv[1], argv[2])
    if argv[:1] == ["search"]:
        from . import dse_search
        return dse_search.main(argv[1:])
    p = argparse.ArgumentParser(prog="python3 -m ember.dse",
                                description="ember-dse's engine: run-plan PLAN ROWS (for "
                                "ember-dse --scheduler), search ... (ember-dse search), "
                                "sweep ... (a sweep from Python)")
    p.add_argument("command", choices=["sweep"])
    p.add_argument("models", nargs="+")
    p.add_argument("--base", "--isa", default=None)
    p.add_argument("--axis", action="append", default=[])
    p.add_argument("--random", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="dse-out")
    p.add_argument("--scheduler", default="")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--cache", default=None)
    p.add_argument("--check", action="store_true")
    p.add_argument("--calibrate", default="random:8")
    p.add_argument("--input-shape", action="append", default=[])
    p.add_argument("--no-table", action="store_true")
    a = p.parse_args(argv)
    r = sweep(a.models, base=a.base, axes=a.axis, random=a.random, seed=a.seed, out=a.out,
              scheduler=a.scheduler, jobs=a.jobs, cache=a.cache, check=a.check,
              calibrate=a.calibrate, input_shapes=_shapes(a.input_shape),
              progress=sys.stderr.isatty())
    if not a.no_table:
        sys.stdout.write(r["table"])
    print(_summary(r["stats"], a.scheduler or f"a local cluster of {a.jobs}"))
    print(f"wrote {r['csv']} and {r['html']}")
    return 0


def cli():
    """`python3 -m ember.dse`: main() with Ember's errors as ember-dse prints them."""
    try:
        return main()
    except _ember.Error as e:
        print(f"ember-dse: {e}", file=sys.stderr)
        return 2 if isinstance(e, _ember.UsageError) else 1


if __name__ == "__main__":
    # Run the module imported as ember.dse, so that the tasks Dask sends to workers name
    # ember.dse.evaluate_point (and its per-worker model cache), not a copy of __main__.
    import ember.dse as _imported
    sys.exit(_imported.cli())
