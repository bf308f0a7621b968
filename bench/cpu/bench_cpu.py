#!/usr/bin/python3
"""cpu backend benchmark: latency at batch 1 with 1 and 2 threads of Ember's LLVM cpu
backend (ember-cpu-bench), float32 and int8, beside ONNX Runtime 1.30 (the peer: what a
user would pick instead) and PyTorch eager, all in this one run; compile (JIT) time
printed apart. Prints figures; never fails on time (exit status is non-zero only if
Ember or PyTorch could not run at all; ONNX Runtime missing is reported, not an error).

  /usr/bin/python3 bench/cpu/bench_cpu.py --bench BUILD/bench/cpu/ember-cpu-bench \\
      --models-dir BUILD/models [--model resnet18 ...] [--iterations 10] \\
      [--ort-dir BUILD/bench/cpu/onnxruntime [--node node] [--npm npm] | --no-ort] \\
      [--threads 1,2] [--precision float32,int8] [--no-pytorch] [--json FILE]

--threads, --precision and --no-pytorch narrow the run (bench/scoreboard/scoreboard.py
asks for float32 at one thread, Ember and ONNX Runtime only); --json also writes the
figures as {"ort": null or why not, "rows": [{model, precision, threads, ember_ms, ort_ms,
ember_over_ort, ort_not_measured, pytorch_ms, compile_s}, ...]} (null where a figure was
not measured).

ONNX Runtime comes from npm, not from a Python wheel: `npm install --ignore-scripts
onnxruntime-node@1.30.0` into --ort-dir (once; the package carries ONNX Runtime's CPU
library, and the skipped install script only fetches GPU extras), timed by
ort_bench.js under Node.js. Its int8 column runs a QDQ export of the same model made by
qdq_export.py (calibrated in ONNX Runtime on input.npy, as Ember's int8 is).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "models"))
THREADS = (1, 2)
PRECISIONS = ("float32", "int8")
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "transformer"]
ORT_VERSION = "1.30.0"
GOAL = 1.0  # issue 15: Ember / ONNX Runtime <= 1.0x


def ember_figures(args, folder):
    cmd = [args.bench, "--model-dir", folder, "--iterations", str(args.iterations),
           "--threads", ",".join(str(t) for t in args.threads)]
    if "int8" in args.precisions:
        cmd.append("--int8")
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"bench: ember-cpu-bench failed (exit {r.returncode})")
    figures = {}
    for line in r.stdout.splitlines():
        if line.startswith("cpu-bench "):
            kv = dict(item.split("=") for item in line.split()[1:])
            key = (kv.pop("precision"), int(kv["threads"]))
            figures[key] = {k: float(v) for k, v in kv.items()}
    expected = ("float32", "int8") if "int8" in args.precisions else ("float32",)
    if set(figures) != {(p, t) for p in expected for t in args.threads}:
        raise SystemExit("bench: could not parse ember-cpu-bench's output:\n" + r.stdout)
    return figures


def torch_latency(models_dir, model_name, iterations, threads):
    """PyTorch eager's median latency in seconds, the faster of its two layouts (NCHW and
    channels_last: at one thread PyTorch runs some convolutions of ResNet-50 through its
    slow reference path in NCHW, so the better layout is the fairer peer), and that
    layout's name ("" for an input that is not an image)."""
    import numpy as np
    import torch
    import gen_models
    torch.set_num_threads(threads)
    build = gen_models.MODELS[model_name][0]
    torch.manual_seed(0)
    model = build().eval()
    x = torch.from_numpy(np.load(os.path.join(models_dir, model_name, "input.npy")))
    best = None
    layouts = [("nchw", torch.contiguous_format), ("nhwc", torch.channels_last)]
    if x.dim() != 4:
        layouts = [("", torch.contiguous_format)]
    for layout, fmt in layouts:
        m = model.to(memory_format=fmt)
        xi = x.contiguous(memory_format=fmt)
        times = []
        with torch.no_grad():
            for _ in range(2):  # warm-up (thread pools, allocator)
                m(xi)
            for _ in range(iterations):
                t0 = time.perf_counter()
                m(xi)
                times.append(time.perf_counter() - t0)
        t = statistics.median(times)
        if best is None or t < best[0]:
            best = (t, layout)
    return best


def ort_setup(args):
    """(path of the onnxruntime-node module, None) or (None, why ONNX Runtime is not
    measured). Installs the package into args.ort_dir with npm the first time."""
    if args.no_ort:
        return None, "not measured (--no-ort)"
    if not args.ort_dir:
        return None, "not measured (no --ort-dir; ninja bench_cpu gives one when CMake finds node and npm)"
    node = shutil.which(args.node)
    npm = shutil.which(args.npm)
    if not node or not npm:
        return None, f"not measured ({args.node if not node else args.npm} not found; " \
                     "install nodejs and npm, scripts/deps.txt)"
    # Absolute: node resolves a relative require() path as a package name.
    args.ort_dir = os.path.abspath(args.ort_dir)
    module = os.path.join(args.ort_dir, "node_modules", "onnxruntime-node")
    pkg = os.path.join(module, "package.json")
    if not os.path.exists(pkg) or f'"version": "{ORT_VERSION}"' not in open(pkg).read():
        cmd = [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund",
               "--no-save", "--prefix", args.ort_dir, "--cache",
               os.path.join(args.ort_dir, "npm-cache"), f"onnxruntime-node@{ORT_VERSION}"]
        os.makedirs(args.ort_dir, exist_ok=True)
        print("+", " ".join(cmd), flush=True)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except subprocess.TimeoutExpired:
            return None, "not measured (npm install timed out: no network?)"
        if r.returncode != 0 or not os.path.exists(pkg):
            errors = [l for l in r.stderr.splitlines()
                      if l.strip() and "complete log" not in l and "_logs" not in l]
            why = "; ".join(l.strip() for l in errors[:2]) or "?"
            return None, f"not measured (npm install failed, exit {r.returncode}: {why})"
    return module, None


def ort_run(args, module, model, input_npy, extra):
    cmd = [shutil.which(args.node), os.path.join(HERE, "ort_bench.js"), "--ort", module,
           "--model", model, "--input", input_npy] + extra
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError((r.stderr.strip().splitlines() or ["?"])[-1])
    return r.stdout


def ort_figures(args, module, name, folder):
    """{(precision, threads): median ms} of ONNX Runtime, or a string saying why not."""
    work = os.path.join(args.ort_dir, "models", name)
    os.makedirs(work, exist_ok=True)
    model, input_npy = os.path.join(folder, "model.onnx"), os.path.join(folder, "input.npy")
    folded, augmented, ranges, qdq = (os.path.join(work, f) for f in (
        "folded.onnx", "augmented.onnx", "ranges.json", "qdq.onnx"))
    export = os.path.join(HERE, "qdq_export.py")
    figures = {}
    try:
        if "int8" in args.precisions:
            # The QDQ export: float graph with folded weights, calibration run, Q/DQ pairs.
            subprocess.run([sys.executable, export, "augment", model, folded, augmented],
                           check=True, capture_output=True, text=True)
            ort_run(args, module, augmented, input_npy, ["--ranges", ranges])
            subprocess.run([sys.executable, export, "qdq", folded, ranges, qdq], check=True,
                           capture_output=True, text=True)
        for precision, path in (("float32", model), ("int8", qdq)):
            if precision not in args.precisions:
                continue
            out = ort_run(args, module, path, input_npy,
                          ["--iterations", str(args.iterations),
                           "--threads", ",".join(str(t) for t in args.threads)])
            for line in out.splitlines():
                if line.startswith("ort-bench "):
                    kv = dict(item.split("=") for item in line.split()[1:])
                    figures[(precision, int(kv["threads"]))] = float(kv["median_ms"])
    except subprocess.CalledProcessError as e:
        return f"QDQ export failed: {(e.stderr.strip().splitlines() or ['?'])[-1]}"
    except RuntimeError as e:
        return f"ort_bench.js failed: {e}"
    if set(figures) != {(p, t) for p in args.precisions for t in args.threads}:
        return "could not parse ort_bench.js's output"
    return figures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of ember-cpu-bench")
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--model", action="append", help="zoo model (repeatable; default: "
                    + ", ".join(MODELS) + ")")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--ort-dir", help="build-tree folder onnxruntime-node is installed into "
                    "(and the QDQ exports written to)")
    ap.add_argument("--node", default="node", help="Node.js (default: node on PATH)")
    ap.add_argument("--npm", default="npm", help="npm (default: npm on PATH)")
    ap.add_argument("--no-ort", action="store_true", help="do not measure ONNX Runtime")
    ap.add_argument("--threads", default=",".join(str(t) for t in THREADS),
                    help="comma-separated thread counts (default: %(default)s)")
    ap.add_argument("--precision", default=",".join(PRECISIONS),
                    help="comma-separated precisions of " + ", ".join(PRECISIONS)
                    + " (default: %(default)s)")
    ap.add_argument("--no-pytorch", action="store_true", help="do not measure PyTorch eager")
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args()
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        ap.error(f"--threads: not a list of numbers: {args.threads}")
    args.precisions = [p for p in args.precision.split(",") if p]
    if not args.threads or min(args.threads) < 1:
        ap.error("--threads: at least one thread count, each >= 1")
    if not args.precisions or any(p not in PRECISIONS for p in args.precisions):
        ap.error(f"--precision: a comma-separated list of {', '.join(PRECISIONS)}")
    models = args.model or MODELS
    load_start = os.getloadavg()[0]
    gen = os.path.join(HERE, "..", "..", "tests", "models", "gen_models.py")
    for name in models:
        subprocess.run([sys.executable, gen, "--out", args.models_dir, "--only", name],
                       check=True, stderr=subprocess.DEVNULL)
    module, ort_missing = ort_setup(args)
    rows = []
    why = {}  # (model, precision, threads): why ONNX Runtime is not measured, or None
    ort_notes = []
    for name in models:
        folder = os.path.join(args.models_dir, name)
        ember = ember_figures(args, folder)
        ort = ort_figures(args, module, name, folder) if module else ort_missing
        if isinstance(ort, str):
            ort_notes.append(f"{name}: {ort}")
        torch_ms = {}
        for t in args.threads:
            if args.no_pytorch:
                torch_ms[t] = (None, "")
                continue
            torch_s, layout = torch_latency(args.models_dir, name, args.iterations, t)
            torch_ms[t] = (torch_s * 1e3, layout)
        for p in args.precisions:
            for t in args.threads:
                rows.append((name, p, t, ember[(p, t)],
                             ort.get((p, t)) if isinstance(ort, dict) else None) + torch_ms[t])
                why[(name, p, t)] = ort if isinstance(ort, str) else None
    load_end = os.getloadavg()[0]

    def ms(v):
        return f"{v:.2f}" if v < 10 else f"{v:.1f}"

    print()
    pytorch_name = "PyTorch " + torch_version() if not args.no_pytorch else "no PyTorch"
    print(f"bench cpu backend vs ONNX Runtime {ORT_VERSION} and {pytorch_name} "
          f"(batch 1, median of {args.iterations} after 2 warm-up runs; {os.cpu_count()} CPUs, "
          f"load average {load_start:.1f} at the start, {load_end:.1f} at the end)")
    if ort_missing:
        print(f"  ONNX Runtime: {ort_missing}")
    for note in ort_notes if not ort_missing else []:
        print(f"  ONNX Runtime {note}")
    print(f"  {'model':13} {'precision':9} {'threads':>7} {'ember ms':>9} {'ort ms':>8} "
          f"{'ember/ort':>9} {'goal':>6} {'pytorch ms':>17} {'ember/pytorch':>13} "
          f"{'compile s':>9} {'(opt / jit)':>12}")
    for name, p, t, e, o, pt, layout in rows:
        ratio = f"{e['median_ms'] / o:8.2f}x" if o else f"{'-':>9}"
        goal = f"<={GOAL:.1f}x" if o else ""
        pytorch = f"{ms(pt)}" + (f" ({layout})" if layout else "") if pt else "-"
        over_pytorch = f"{e['median_ms'] / pt:12.2f}x" if pt else f"{'-':>13}"
        split = f"{e['optimize_s']:.2f} / {e['jit_s']:.2f}"
        print(f"  {name:13} {p:9} {t:7d} {ms(e['median_ms']):>9} "
              f"{ms(o) if o else '-':>8} {ratio} {goal:>6} {pytorch:>17} "
              f"{over_pytorch} {e['compile_s']:9.2f} {split:>12}")
    print("  ember/ort: Ember's latency over ONNX Runtime's at the same precision and thread "
          "count (issue 15's goal:\n  <= 1.0x). float32: the same model.onnx in both. int8: "
          "Ember's ember::quant (int8 activations, per-channel\n  int8 weights, min/max "
          "calibrated on input.npy; the path of `ember-run --precision int8 --device cpu`)\n"
          "  against ONNX Runtime on bench/cpu/qdq_export.py's QDQ export (uint8 activations, "
          "int8 weights, min/max on\n  input.npy). PyTorch eager is float32 in both rows "
          "(faster of NCHW / channels_last for images), so\n  ember/pytorch of an int8 row "
          "compares Ember's int8 with PyTorch's float32.")
    if args.json:
        doc = {"ort_version": ORT_VERSION, "ort": ort_missing, "goal": GOAL,
               "iterations": args.iterations, "load_average": [load_start, load_end],
               "rows": [{"model": name, "precision": p, "threads": t,
                         "ember_ms": e["median_ms"], "ort_ms": o,
                         "ember_over_ort": e["median_ms"] / o if o else None,
                         "ort_not_measured": why[(name, p, t)],
                         "pytorch_ms": pt, "compile_s": e["compile_s"]}
                        for name, p, t, e, o, pt, _ in rows]}
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.json)
    return 0


def torch_version():
    import torch
    return torch.__version__


if __name__ == "__main__":
    sys.exit(main())
