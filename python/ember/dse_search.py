"""`ember-dse search`: Optuna's NSGA-II over ember-dse's axes (docs/dse.md).

Each trial picks one value per axis; its point is made by ember-dse's own rules
(`_ember.dse_point`) and evaluated on every model through ember.dse.run_points (Dask,
the shared cache). Objectives, all minimised, summed over the models: cycles, energy
(uJ) and the description's SRAM bytes. A generation of `population` trials is asked at
once and evaluated in parallel on the cluster. A point any model fails on (invalid,
refused, too small) is a failed trial. Outputs: OUT/search.csv (one row per trial, and
with --grid one per point of that grid sweep, the Pareto front of them all marked),
OUT/search.html (the front over cycles and energy), and OUT/dse.csv / OUT/dse.html of
the trials' rows as a sweep writes them.
"""

import argparse
import csv
import html
import io
import json
import os
import sys
import time

from . import _ember
from . import dse as _dse


def _parse_axes(specs):
    axes = []
    for s in specs:
        name, eq, values = s.partition("=")
        if not eq or not name or not values:
            raise _ember.UsageError(f"--axis '{s}': expects NAME=V1,V2,...")
        for other, had in axes:  # as ember-dse's sweep (runtime/session/src/dse/Space.cpp)
            if other == name:
                merged = had + [v for v in values.split(",") if v not in had]
                raise _ember.UsageError(
                    f"--axis '{s}': axis '{name}' is given twice (also --axis "
                    f"'{name}={','.join(had)}'); give its values once: --axis "
                    f"{name}={','.join(merged)}")
        axes.append((name, values.split(",")))
    return axes


def pareto(points):
    """For tuples where smaller is better in every place: True for those no other dominates."""
    front = []
    for i, p in enumerate(points):
        dominated = any(all(a <= b for a, b in zip(q, p)) and any(a < b for a, b in zip(q, p))
                        for j, q in enumerate(points) if j != i)
        front.append(not dominated)
    return front


def _objectives(rows):
    """(cycles, energy uJ, SRAM bytes) summed over a point's models; None if one is not ok."""
    if not rows or any(r["status"] != "ok" for r in rows):
        return None
    sram = sum(s["size"] for s in rows[0]["sram"])
    # energy at the CSV's precision (4 decimals), so that a trial and the grid's row of
    # the same point (read back from its CSV) have equal objectives
    energy = round(sum(round(r["energy_uj"], 4) for r in rows), 4)
    return (sum(r["cycles"] for r in rows), energy, sram)


def read_grid(csv_file, axis_names):
    """A grid sweep's dse.csv as [(settings tuple, objectives or None)] per point."""
    by_point = {}
    with open(csv_file, newline="") as f:
        for row in csv.DictReader(f):
            p = by_point.setdefault(row["point"], {"settings": tuple(row.get(n, "")
                                                                     for n in axis_names),
                                                   "rows": []})
            p["rows"].append(row)
    out = []
    for p in by_point.values():
        rows = p["rows"]
        if any(r["status"] != "ok" for r in rows):
            out.append((p["settings"], None))
            continue
        sram = sum(int(v) for k, v in rows[0].items() if k.startswith("sram_")
                   and k.endswith("_bytes") and not k.endswith("peak_bytes"))
        out.append((p["settings"], (sum(int(r["cycles"]) for r in rows),
                                    round(sum(float(r["energy_uj"]) for r in rows), 4), sram)))
    return out


def _svg(entries):
    """Cycles against energy: grid points grey, trials blue, the front ringed in red."""
    ok = [e for e in entries if e["objectives"]]
    if not ok:
        return "<p>no point ran on every model</p>"
    xs = [e["objectives"][0] for e in ok]
    ys = [e["objectives"][1] for e in ok]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    w, h, m = 640, 400, 50

    def sx(v):
        return m + (v - x0) / ((x1 - x0) or 1) * (w - 2 * m)

    def sy(v):
        return h - m - (v - y0) / ((y1 - y0) or 1) * (h - 2 * m)
    parts = [f'<svg width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg">',
             f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">cycles (sum over models)'
             '</text>',
             f'<text x="12" y="{h / 2}" transform="rotate(-90 12 {h / 2})" '
             'text-anchor="middle">energy uJ</text>']
    for e in ok:
        c = "#999" if e["source"] == "grid" else "#1f6fd0"
        x, y = sx(e["objectives"][0]), sy(e["objectives"][1])
        title = html.escape(f"{e['source']} {e['id']}: {e['settings']}")
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{c}"><title>{title}'
                     '</title></circle>')
        if e["front"]:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="none" '
                         'stroke="#d03030" stroke-width="2"/>')
    parts.append("</svg>")
    return "\n".join(parts)


def _write(out, axes, entries, title):
    names = [n for n, _ in axes]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["source", "id"] + names + ["status", "cycles", "energy_uj", "sram_bytes",
                                           "front", "search_front", "in_grid"])
    for e in entries:
        o = e["objectives"]
        w.writerow([e["source"], e["id"]] + list(e["settings"]) +
                   ["ok" if o else "failed", o[0] if o else "", f"{o[1]:.4f}" if o else "",
                    o[2] if o else "", int(e["front"]), int(e["search_front"]),
                    int(e["in_grid"])])
    with open(os.path.join(out, "search.csv"), "w") as f:
        f.write(buf.getvalue())
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in csv.reader(io.StringIO(buf.getvalue())))
    page = (f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<h1>{html.escape(title)}</h1><p>Blue: search trials; grey: grid points "
            "(--grid); ringed: the Pareto front of cycles, energy and SRAM bytes over all "
            f"of them.</p>{_svg(entries)}<table border=1 cellspacing=0>{rows}</table>")
    with open(os.path.join(out, "search.html"), "w") as f:
        f.write(page)


def search(models, base=None, axes=(), trials=40, seed=1, population=8, out="dse-search",
           client=None, scheduler="", jobs=1, cache=None, check=False, calibrate="random:8",
           input_shapes=None, retries=2, grid=None, progress=False):
    """NSGA-II (Optuna, seeded) over `axes`, `trials` evaluations in generations of
    `population`. Returns {"entries", "evaluated", "seconds"}."""
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    axes = _parse_axes(axes)
    base = os.fspath(base) if base else ""
    os.makedirs(out, exist_ok=True)
    # An unknown axis or a pointer the base lacks is a usage error before any work.
    _ember.dse_point(base, json.dumps([[n, v[0]] for n, v in axes]), 0,
                     os.path.join(out, "descriptions", "check.json"))
    sampler = optuna.samplers.NSGAIISampler(population_size=population, seed=seed)
    study = optuna.create_study(directions=["minimize"] * 3, sampler=sampler)
    named = _dse._model_names(models)
    own = None
    if client is None:
        _dse._quiet_dask()
        own = client = _dse._client(scheduler, jobs)
    t0, points, rows, results = time.monotonic(), [], [], []
    try:
        while len(points) < trials:
            batch = [study.ask() for _ in range(min(population, trials - len(points)))]
            made = []
            for t in batch:
                settings = [[n, t.suggest_categorical(n, v)] for n, v in axes]
                file = os.path.join(out, "descriptions", f"t{t.number}.json")
                made.append(json.loads(_ember.dse_point(base, json.dumps(settings), t.number,
                                                        file)))
            got = _dse.run_points(made, named, client=client, cache=cache, check=check,
                                  calibrate=calibrate, input_shapes=input_shapes,
                                  retries=retries)
            for t, p in zip(batch, made):
                mine = [r for r in got if r["point"] == p["index"]]
                o = _objectives(mine)
                if o is None:
                    study.tell(t, state=optuna.trial.TrialState.FAIL)
                else:
                    study.tell(t, list(o))
                results.append((p, o))
            points += made
            rows += got
            if progress:
                sys.stderr.write(f"\r[dse search] {len(points)}/{trials} trials, "
                                 f"{time.monotonic() - t0:.0f} s")
                sys.stderr.flush()
    finally:
        if own is not None:
            cluster = getattr(own, "cluster", None)
            own.close()
            if cluster is not None and not scheduler:
                cluster.close()
    if progress:
        sys.stderr.write("\r" + " " * 60 + "\r")
    seconds = time.monotonic() - t0
    names = [n for n, _ in axes]
    grid_points = read_grid(os.path.join(grid, "dse.csv"), names) if grid else []
    grid_set = {s for s, _ in grid_points}
    entries = [{"source": "search", "id": p["index"],
                "settings": tuple(v for _, v in p["settings"]), "objectives": o}
               for p, o in results]
    entries += [{"source": "grid", "id": i, "settings": s, "objectives": o}
                for i, (s, o) in enumerate(grid_points)]
    ok = [e for e in entries if e["objectives"]]
    for e, f in zip(ok, pareto([e["objectives"] for e in ok])):
        e["front"] = f
    mine = [e for e in ok if e["source"] == "search"]
    for e, f in zip(mine, pareto([e["objectives"] for e in mine])):
        e["search_front"] = f
    for e in entries:
        e.setdefault("front", False)
        e.setdefault("search_front", False)
        e["in_grid"] = e["source"] == "search" and e["settings"] in grid_set
    title = (f"ember-dse search: {len(points)} trials (NSGA-II, seed {seed}, population "
             f"{population}) over {base or 'the default description'}")
    _write(out, axes, entries, title)
    _ember.dse_report(json.dumps(points), json.dumps(rows), title, out)
    return {"entries": entries, "evaluated": len(points), "seconds": seconds}


def main(argv):
    p = argparse.ArgumentParser(
        prog="ember-dse search",
        description="Optuna NSGA-II over ember-dse's axes: minimises cycles, energy and SRAM "
        "bytes (summed over the models); trials run on Dask (docs/dse.md)")
    p.add_argument("models", nargs="+", metavar="MODEL")
    p.add_argument("--base", "--isa", default=None, help="the description the axes change")
    p.add_argument("--axis", action="append", default=[], required=True,
                   help="NAME=V1,V2,... as ember-dse's --axis (repeat)")
    p.add_argument("--trials", type=int, default=40, help="evaluations in all (default 40)")
    p.add_argument("--population", type=int, default=8,
                   help="trials per generation, evaluated at once (default 8)")
    p.add_argument("--seed", type=int, default=1, help="the sampler's seed (default 1)")
    p.add_argument("--grid", default=None, metavar="OUT",
                   help="a grid sweep's output folder: its points join the front")
    p.add_argument("--out", default="dse-search")
    p.add_argument("--scheduler", default="", help="tcp://HOST:PORT (default: a local cluster)")
    p.add_argument("--jobs", type=int, default=1, help="workers of the local cluster")
    p.add_argument("--cache", default=None)
    p.add_argument("--check", action="store_true")
    p.add_argument("--calibrate", default="random:8")
    p.add_argument("--input-shape", action="append", default=[])
    p.add_argument("--retries", type=int, default=2)
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    if a.trials < 1 or a.population < 2:
        p.error("--trials must be at least 1 and --population at least 2")
    r = search(a.models, base=a.base, axes=a.axis, trials=a.trials, seed=a.seed,
               population=a.population, out=a.out,
               scheduler="" if a.scheduler == "local" else a.scheduler, jobs=a.jobs,
               cache=a.cache, check=a.check, calibrate=a.calibrate,
               input_shapes=_dse._shapes(a.input_shape), retries=a.retries, grid=a.grid,
               progress=not a.no_progress and sys.stderr.isatty())
    front = [e for e in r["entries"] if e["front"]]
    print(f"ember-dse search: {r['evaluated']} trials in {r['seconds']:.1f} s; front of "
          f"{len(front)} points ({sum(e['source'] == 'search' for e in front)} from the "
          f"search); wrote {os.path.join(a.out, 'search.csv')} and "
          f"{os.path.join(a.out, 'search.html')}")
    names = [n for n, _ in _parse_axes(a.axis)]
    for e in front:
        o = e["objectives"]
        print(f"  {e['source']} {e['id']}: {dict(zip(names, e['settings']))}"
              f" cycles {o[0]} energy {o[1]:.4f} uJ sram {o[2]} B"
              f"{' (in the grid)' if e['in_grid'] else ''}")
    return 0
