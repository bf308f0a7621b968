#!/usr/bin/python3
"""Issue 15's scoreboard (`ninja bench`): every figure of the performance issue measured
in one run, printed as one table (figure | measured | goal | met?) and written as JSON.

  /usr/bin/python3 bench/scoreboard/scoreboard.py --models-dir BUILD/models \\
      --work BUILD/bench/scoreboard --json BUILD/bench/scoreboard.json \\
      [--emberc E] [--ember-sim S] [--ember-run R] [--npu-bench N] [--sim-bench B] \\
      [--cpu-bench C] [--ort-dir BUILD/bench/cpu/onnxruntime [--node node] [--npm npm] |
      --no-ort] [--iterations 10] [--quick]

The measuring is the existing benches' (nothing is timed here): npu_bench (MAC
utilisation, roofline efficiency), emberc + ember-sim --report (the share of cycles in
separate residual Add layers, summed from the per-layer report), sim_bench --elf
(simulator speed on ResNet-50), bench/cpu/bench_cpu.py (the CPU backend against ONNX
Runtime, float32, one thread) and ember-run --device cpu (JIT compile time of
DenseNet-121); their JSON output (or ember-run's timing line) is parsed. A tool not
given (not built) or ONNX Runtime unavailable makes its rows "not measured: why".
--quick measures the same figures on small stand-ins (ResNet-18 for ResNet-50, the
transformer for the CPU rows and DenseNet-121) with one iteration and without ONNX
Runtime's install: the smoke test of this script (ctest bench.scoreboard.quick).

Benches never fail on time: a goal not met is a mark in the table, not an exit status.
The exit status is non-zero only if a tool could not run at all or its output could not
be parsed (its rows then say so).
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
GEN_MODELS = os.path.join(SOURCE, "tests", "models", "gen_models.py")
BENCH_CPU = os.path.join(SOURCE, "bench", "cpu", "bench_cpu.py")
ISA = {"ember-v1": os.path.join(SOURCE, "isa", "ember-v1.json"),
       "ember-v1-large": os.path.join(SOURCE, "isa", "examples", "ember-v1-large.json")}
NAMES = {"resnet18": "ResNet-18", "resnet50": "ResNet-50", "mobilenet_v2": "MobileNetV2",
         "transformer": "transformer", "densenet121": "DenseNet-121"}

# Which model each figure is measured on. --quick: small stand-ins, same figures and goals.
FULL = {"mac": "resnet50", "roofline": ["resnet18", "resnet50"], "mobile": "mobilenet_v2",
        "add": "resnet18", "sim": "resnet50",
        "cpu": ["resnet18", "resnet50", "mobilenet_v2", "transformer"], "jit": "densenet121"}
QUICK = {"mac": "resnet18", "roofline": ["resnet18"], "mobile": "mobilenet_v2",
         "add": "resnet18", "sim": "resnet18", "cpu": ["transformer"], "jit": "transformer"}

# Issue 15's goals: (comparison, threshold, as printed).
GOALS = {
    ("mac", "ember-v1"): (">=", 0.85, ">= 85%"),
    ("mac", "ember-v1-large"): (">=", 0.75, ">= 75%"),
    "roofline": (">=", 0.92, ">= 0.92"),
    "mobile": (">=", 0.60, ">= 60%"),
    "add": ("<=", 0.0, "0 (fused into the conv)"),
    "sim": ("<=", 1.0, "<= 1 s (>= 20 M cycles/s)"),
    "cycles": ("==", None, "unchanged"),
    "cpu": ("<=", 1.0, "<= 1.0x"),
    "jit": ("<=", 3.0, "<= 3 s"),
}


class ToolError(Exception):
    """A tool could not run, or its output could not be parsed (the rows say why)."""


def row(figure, goal_key, value=None, measured=None, why=None, expected=None):
    """One line of the table. value is the number compared with the goal; measured is
    what is printed (default: the value); why, if given, says why it was not measured."""
    op, threshold, goal = GOALS[goal_key]
    if threshold is None:
        threshold = expected
    met = None
    if why is None and value is not None and threshold is not None:
        met = {">=": value >= threshold, "<=": value <= threshold,
               "==": value == threshold}[op]
    if why is not None:
        measured = "not measured: " + why
    elif measured is None:
        measured = "%g" % value
    return {"figure": figure, "measured": measured, "value": value if why is None else None,
            "goal": goal, "met": met}


def pct(v):
    return "%.1f%%" % (100 * v)


# --- the parsers: one per tool output, each raising ToolError on what it cannot read ---

def npu_figures(records):
    """npu_bench --json -> {(model, description): record}."""
    if not isinstance(records, list):
        raise ToolError("npu_bench --json: not an array")
    out = {}
    for r in records:
        try:
            key = (r["model"], r["description"])
            if "fault" not in r:
                for k in ("cycles", "useful_mac_utilization", "roofline_efficiency"):
                    float(r[k])
        except (KeyError, TypeError, ValueError) as e:
            raise ToolError("npu_bench --json: no number %s in a record (%s on %s)" % (
                e, r.get("model", "?") if isinstance(r, dict) else "?",
                r.get("description", "?") if isinstance(r, dict) else "?"))
        out[key] = r
    return out


def npu_rows(plan, npu, why=None):
    """The utilisation and roofline rows from npu_figures' result (or why not)."""
    rows = []

    def one(figure, goal_key, model, desc, field, fmt):
        if why is not None:
            return row(figure, goal_key, why=why)
        r = npu.get((model, desc))
        if r is None:
            return row(figure, goal_key, why="npu_bench printed no %s on %s" % (model, desc))
        if "fault" in r:
            return row(figure, goal_key, why="the simulation faulted: " + r["fault"])
        v = float(r[field])
        return row(figure, goal_key, v, fmt(v))

    m = plan["mac"]
    for desc in ("ember-v1", "ember-v1-large"):
        rows.append(one("%s useful MAC utilisation, %s" % (NAMES[m], desc), ("mac", desc), m,
                        desc, "useful_mac_utilization", pct))
    for m in plan["roofline"]:
        rows.append(one("%s roofline efficiency (ideal / simulated cycles), ember-v1" % NAMES[m],
                        "roofline", m, "ember-v1", "roofline_efficiency", lambda v: "%.3f" % v))
    m = plan["mobile"]
    rows.append(one("%s useful MAC utilisation, ember-v1" % NAMES[m], "mobile", m, "ember-v1",
                    "useful_mac_utilization", pct))
    return rows


# A layer is named after its node (ONNX name, made unique with "__N"), whose last path
# component is the node kind as PyTorch's exporter writes it: "/layer1/layer1.0/Add",
# "/layer2/layer2.1/Add_1", "/layer1/layer1.0/Add__1". A residual Add fused into its
# convolution's epilogue is part of that convolution's layer, named "<conv> + <add>"
# (docs/compiler/npu-layers.md), not a separate Add layer.
ADD_LAYER = re.compile(r"Add(_+\d+)*")


def is_add_layer(name):
    if " + " in name:
        return False
    return ADD_LAYER.fullmatch(name.rstrip("/").rsplit("/", 1)[-1]) is not None


def add_share(report):
    """ember-sim --report JSON -> (share of cycles in separate Add layers, Add layers,
    their cycles, total cycles)."""
    try:
        total = int(report["cycles"])
        layers = report["layers"]
        adds = [l for l in layers if is_add_layer(l["name"])]
        add_cycles = sum(int(l["cycles"]) for l in adds)
    except (KeyError, TypeError, ValueError) as e:
        raise ToolError("ember-sim --report: no %s in the report" % e)
    if report.get("fault"):
        raise ToolError("ember-sim: the simulation faulted: %s" % report["fault"])
    if total <= 0 or not layers:
        raise ToolError("ember-sim --report: no cycles or no layers")
    return add_cycles / total, len(adds), add_cycles, total


def add_row(plan, share=None, why=None):
    figure = "%s residual Add layers: share of NPU cycles in separate Add layers" % \
        NAMES[plan["add"]]
    if why is not None:
        return row(figure, "add", why=why)
    s, n, c, total = share
    return row(figure, "add", s, "%.2f%% (%d Add layers, %d of %d cycles)" % (100 * s, n, c,
                                                                           total))


def sim_figures(records):
    """sim_bench --elf --json -> its one record."""
    if not isinstance(records, list) or len(records) != 1:
        raise ToolError("sim_bench --json: not an array of one program")
    r = records[0]
    if "fault" in r:
        raise ToolError("sim_bench: the simulation faulted: " + str(r["fault"]))
    try:
        float(r["host_s"]), int(r["cycles"]), float(r["simulated_cycles_per_second"])
    except (KeyError, TypeError, ValueError) as e:
        raise ToolError("sim_bench --json: no number %s in the record" % e)
    return r


def sim_rows(plan, sim, npu, why=None):
    """Host time of the simulation, and its cycles beside npu_bench's simulation of the same
    model on the same description (same model, compiler and calibration: equal cycles)."""
    name = NAMES[plan["sim"]]
    figure = "simulating %s on ember-v1: host seconds (M simulated cycles/s)" % name
    cyc_figure = "simulating %s on ember-v1: cycles unchanged (sim_bench = npu_bench)" % name
    if why is not None:
        return [row(figure, "sim", why=why), row(cyc_figure, "cycles", why=why)]
    host = float(sim["host_s"])
    rows = [row(figure, "sim", host, "%.3f s (%.1f M cycles/s)" % (
        host, float(sim["simulated_cycles_per_second"]) / 1e6))]
    ref = (npu or {}).get((plan["sim"], "ember-v1"))
    cycles = int(sim["cycles"])
    if ref is None or "cycles" not in ref:
        rows.append(row(cyc_figure, "cycles", why="npu_bench did not simulate %s" % name))
    else:
        rows.append(row(cyc_figure, "cycles", cycles, "%d (npu_bench: %d)" % (
            cycles, int(ref["cycles"])), expected=int(ref["cycles"])))
    return rows


def cpu_rows(plan, doc=None, why=None):
    """bench_cpu.py --json -> one row per model: Ember / ONNX Runtime, float32, 1 thread."""
    rows = []
    by_model = {}
    if why is None:
        try:
            for r in doc["rows"]:
                if r["precision"] == "float32" and int(r["threads"]) == 1:
                    by_model[r["model"]] = r
        except (KeyError, TypeError, ValueError) as e:
            raise ToolError("bench_cpu.py --json: no %s" % e)
    for m in plan["cpu"]:
        figure = "CPU backend float32 latency / ONNX Runtime, 1 thread: %s" % NAMES[m]
        r = by_model.get(m)
        if why is not None:
            rows.append(row(figure, "cpu", why=why))
        elif r is None:
            rows.append(row(figure, "cpu", why="bench_cpu.py printed no float32 1-thread row"))
        elif r.get("ort_ms") is None:
            ort_why = r.get("ort_not_measured") or doc.get("ort") or "no ONNX Runtime figure"
            ort_why = re.sub(r"^not measured \((.*)\)$", r"\1", ort_why)
            rows.append(row(figure, "cpu", why="no ONNX Runtime (%s); Ember %.2f ms" % (
                ort_why, float(r["ember_ms"]))))
        else:
            ratio = float(r["ember_ms"]) / float(r["ort_ms"])
            rows.append(row(figure, "cpu", ratio, "%.2fx (%.2f / %.2f ms)" % (
                ratio, float(r["ember_ms"]), float(r["ort_ms"]))))
    return rows


RUN_TIME = re.compile(r"^time: .*prepare \(cpu\) ([0-9.]+) s", re.M)


def jit_seconds(stdout):
    """ember-run's timing line -> the cpu backend's compile (prepare) seconds."""
    m = RUN_TIME.search(stdout)
    if not m:
        raise ToolError("could not find 'prepare (cpu) S s' in ember-run's timing line")
    return float(m.group(1))


def jit_row(plan, seconds=None, why=None):
    figure = "CPU backend JIT compile time, %s float32, cold" % NAMES[plan["jit"]]
    if why is not None:
        return row(figure, "jit", why=why)
    return row(figure, "jit", seconds, "%.2f s" % seconds)


def table(rows):
    """The one table, in Markdown (aligned, so that it reads on a terminal too)."""
    marks = {True: "yes", False: "no", None: "-"}
    head = ("figure", "measured", "goal", "met?")
    lines = [(r["figure"], r["measured"], r["goal"], marks[r["met"]]) for r in rows]
    widths = [max(len(x[i]) for x in lines + [head]) for i in range(4)]

    def fmt(cells):
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([fmt(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"] +
                     [fmt(l) for l in lines])


# --- running the tools ---

class Runner:
    def __init__(self, steps):
        self.steps, self.step, self.t0 = steps, 0, time.monotonic()

    def title(self, text):
        self.step += 1
        print("\n== scoreboard [%d/%d] %s (at %.0f s)" % (self.step, self.steps, text,
                                                          time.monotonic() - self.t0),
              flush=True)

    @staticmethod
    def run(cmd, what, env=None):
        """Runs cmd (in environment env, default ours), its output shown as it comes;
        returns stdout + stderr. ToolError if it cannot start or exits non-zero."""
        print("+", " ".join(cmd), flush=True)
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, env=env)
        except OSError as e:
            raise ToolError("%s could not start: %s" % (what, e))
        out = []
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            out.append(line)
        status = proc.wait()
        if status != 0:
            raise ToolError("%s failed (exit %d)" % (what, status))
        return "".join(out)


def read_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ToolError("%s: could not read %s: %s" % (what, path, e))


def measure(a, plan):
    """Runs every tool; returns (rows, errors)."""
    errors = []
    run = Runner(6)
    os.makedirs(a.work, exist_ok=True)
    iterations = "1" if a.quick else str(a.iterations)

    def failed(e):
        errors.append(str(e))
        print("scoreboard: %s" % e, file=sys.stderr, flush=True)
        return str(e)

    run.title("models of the zoo")
    models = sorted(set([plan["mac"], plan["mobile"], plan["add"], plan["sim"], plan["jit"]] +
                        plan["roofline"] + plan["cpu"]))
    try:
        run.run([sys.executable, GEN_MODELS, "--out", a.models_dir, "--only", ",".join(models)],
                "gen_models.py")
    except ToolError as e:
        failed(e)

    def model(m):
        return os.path.join(a.models_dir, m, "model.onnx")

    rows = []
    run.title("NPU: utilisation and roofline (npu_bench)")
    npu = {}
    if not a.npu_bench:
        rows += npu_rows(plan, npu, why="npu_bench is not built")
    else:
        out = os.path.join(a.work, "npu_bench.json")
        npu_models = sorted(set([plan["mac"], plan["mobile"], plan["sim"]] + plan["roofline"]))
        try:
            if os.path.exists(out):
                os.remove(out)
            run.run([a.npu_bench, "--models", a.models_dir, "--isa", ISA["ember-v1"],
                     "--isa", ISA["ember-v1-large"], "--json", out] + npu_models, "npu_bench")
            npu = npu_figures(read_json(out, "npu_bench"))
            rows += npu_rows(plan, npu)
        except ToolError as e:
            rows += npu_rows(plan, npu, why=failed(e))

    run.title("NPU: residual Add layers (emberc --fallback none, ember-sim --report)")
    if not (a.emberc and a.ember_sim):
        rows.append(add_row(plan, why="emberc or ember-sim is not built"))
    else:
        elf = os.path.join(a.work, plan["add"] + ".elf")
        report = os.path.join(a.work, plan["add"] + ".report.json")
        try:
            for path in (elf, report):
                if os.path.exists(path):
                    os.remove(path)
            run.run([a.emberc, model(plan["add"]), "--isa", ISA["ember-v1"], "--fallback", "none",
                     "-q", "-o", elf], "emberc")
            # No --input: the inputs are zeros (ember-sim says so); cycles do not depend on
            # the values.
            run.run([a.ember_sim, elf, "--isa", ISA["ember-v1"], "--report", report, "--no-table",
                     "--no-progress"], "ember-sim")
            rows.append(add_row(plan, add_share(read_json(report, "ember-sim --report"))))
        except ToolError as e:
            rows.append(add_row(plan, why=failed(e)))

    run.title("simulator speed (emberc, sim_bench --elf)")
    if not (a.emberc and a.sim_bench):
        rows += sim_rows(plan, None, npu, why="emberc or sim_bench is not built")
    else:
        elf = os.path.join(a.work, plan["sim"] + ".elf")
        out = os.path.join(a.work, "sim_bench.json")
        try:
            for path in (elf, out):
                if os.path.exists(path):
                    os.remove(path)
            run.run([a.emberc, model(plan["sim"]), "--isa", ISA["ember-v1"], "-q", "-o", elf],
                    "emberc")
            run.run([a.sim_bench, "--isa", ISA["ember-v1"], "--elf", elf, "--name", plan["sim"],
                     "--repeat", "1" if a.quick else "3", "--json", out], "sim_bench")
            rows += sim_rows(plan, sim_figures(read_json(out, "sim_bench")), npu)
        except ToolError as e:
            rows += sim_rows(plan, None, npu, why=failed(e))

    run.title("CPU backend vs ONNX Runtime, float32, 1 thread (bench_cpu.py)")
    if not a.cpu_bench:
        rows += cpu_rows(plan, why="ember-cpu-bench is not built (EMBER_WITH_LLVM)")
    else:
        out = os.path.join(a.work, "bench_cpu.json")
        cmd = [sys.executable, BENCH_CPU, "--bench", a.cpu_bench, "--models-dir", a.models_dir,
               "--iterations", iterations, "--threads", "1", "--precision", "float32",
               "--no-pytorch", "--json", out]
        for m in plan["cpu"]:
            cmd += ["--model", m]
        if a.no_ort or not a.ort_dir:
            cmd.append("--no-ort")
        else:
            cmd += ["--ort-dir", a.ort_dir, "--node", a.node, "--npm", a.npm]
        try:
            if os.path.exists(out):
                os.remove(out)
            run.run(cmd, "bench_cpu.py")
            rows += cpu_rows(plan, read_json(out, "bench_cpu.py"))
        except ToolError as e:
            rows += cpu_rows(plan, why=failed(e))

    run.title("CPU backend JIT compile time (ember-run --device cpu)")
    if not a.ember_run or not a.cpu_bench:
        rows.append(jit_row(plan, why="ember-run or the cpu backend is not built"))
    else:
        try:
            # Cold: the JIT object cache off (EMBER_JIT_CACHE_DIR=off, docs/compiler/cpu-backend.md),
            # so the figure is a compile, not a read of an earlier run's objects.
            out = run.run([a.ember_run, model(plan["jit"]), "--device", "cpu", "--precision",
                           "float", "--random-input", "1", "--quiet"], "ember-run",
                          env=dict(os.environ, EMBER_JIT_CACHE_DIR="off"))
            rows.append(jit_row(plan, jit_seconds(out)))
        except ToolError as e:
            rows.append(jit_row(plan, why=failed(e)))
    return rows, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models-dir", required=True, help="the zoo's folder (gen_models.py --out)")
    ap.add_argument("--work", required=True, help="folder for the binaries and tools' JSON")
    ap.add_argument("--json", required=True, help="the scoreboard as JSON")
    for tool in ("emberc", "ember-sim", "ember-run", "npu-bench", "sim-bench", "cpu-bench"):
        ap.add_argument("--" + tool, default="", help="path of %s (absent: not built)" % tool)
    ap.add_argument("--ort-dir", help="onnxruntime-node's folder (bench_cpu.py --ort-dir)")
    ap.add_argument("--node", default="node")
    ap.add_argument("--npm", default="npm")
    ap.add_argument("--no-ort", action="store_true", help="do not measure ONNX Runtime")
    ap.add_argument("--iterations", type=int, default=10, help="CPU latency: median of N")
    ap.add_argument("--quick", action="store_true",
                    help="small stand-in models, one iteration (the smoke test)")
    a = ap.parse_args()
    plan = QUICK if a.quick else FULL
    started = datetime.datetime.now(datetime.timezone.utc)
    t0, load_start = time.monotonic(), os.getloadavg()[0]
    rows, errors = measure(a, plan)
    seconds, load_end = time.monotonic() - t0, os.getloadavg()[0]
    print()
    print("Issue 15 scoreboard%s: measured in this run of %.0f s on %d CPUs (load average "
          "%.1f at the start, %.1f at the end)" % (" (--quick: small stand-in models)"
                                                   if a.quick else "", seconds,
                                                   os.cpu_count() or 0, load_start, load_end))
    print(table(rows))
    met = sum(1 for r in rows if r["met"])
    measured = sum(1 for r in rows if r["met"] is not None)
    print("%d of %d figures measured meet their goal%s. Figures only: a goal not met is "
          "never a failure." % (met, measured, "" if measured == len(rows) else
                                " (%d not measured)" % (len(rows) - measured)))
    doc = {"started": started.strftime("%Y-%m-%d %H:%M:%S UTC"), "seconds": round(seconds, 1),
           "quick": a.quick, "load_average": [load_start, load_end], "rows": rows,
           "errors": errors}
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    tmp = a.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, a.json)
    print("scoreboard: wrote %s" % a.json)
    if errors:
        print("scoreboard: could not measure everything:\n  " + "\n  ".join(errors),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
