#!/usr/bin/python3
"""cpu backend benchmark: float32 latency at batch 1 with 1 and 2 threads of Ember's
LLVM cpu backend (ember-cpu-bench) beside PyTorch eager with the same thread count, in
this one run; compile (JIT) time printed apart. Prints figures; never fails on time
(exit status is non-zero only if something could not run at all).

  /usr/bin/python3 bench/cpu/bench_cpu.py --bench BUILD/bench/cpu/ember-cpu-bench \\
      --models-dir BUILD/models [--model resnet18 --model resnet50] [--iterations 10]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "models"))
THREADS = (1, 2)


def ember_figures(args, folder):
    cmd = [args.bench, "--model-dir", folder, "--iterations", str(args.iterations),
           "--threads", ",".join(str(t) for t in THREADS), "--int8"]
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
    if set(figures) != {(p, t) for p in ("float32", "int8") for t in THREADS}:
        raise SystemExit("bench: could not parse ember-cpu-bench's output:\n" + r.stdout)
    return figures


def torch_latency(models_dir, model_name, iterations, threads):
    """PyTorch eager's median latency in seconds, the faster of its two layouts (NCHW and
    channels_last: at one thread PyTorch runs some convolutions of ResNet-50 through its
    slow reference path in NCHW, so the better layout is the fairer peer), and that
    layout's name."""
    import numpy as np
    import torch
    import gen_models
    torch.set_num_threads(threads)
    build = gen_models.MODELS[model_name][0]
    torch.manual_seed(0)
    model = build().eval()
    x = torch.from_numpy(np.load(os.path.join(models_dir, model_name, "input.npy")))
    best = None
    for layout, fmt in (("nchw", torch.contiguous_format), ("nhwc", torch.channels_last)):
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of ember-cpu-bench")
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--model", action="append", help="zoo model (repeatable)")
    ap.add_argument("--iterations", type=int, default=10)
    args = ap.parse_args()
    models = args.model or ["resnet18", "resnet50"]
    gen = os.path.join(HERE, "..", "..", "tests", "models", "gen_models.py")
    for name in models:
        subprocess.run([sys.executable, gen, "--out", args.models_dir, "--only", name],
                       check=True, stderr=subprocess.DEVNULL)
    rows = []
    for name in models:
        folder = os.path.join(args.models_dir, name)
        ember = ember_figures(args, folder)
        for t in THREADS:
            torch_s, layout = torch_latency(args.models_dir, name, args.iterations, t)
            rows.append((name, t, ember[("float32", t)], ember[("int8", t)], torch_s, layout))
    load = os.getloadavg()[0]
    print()
    print(f"bench cpu backend (batch 1, median of {args.iterations} after 2 warm-up "
          f"runs; {os.cpu_count()} CPUs, load average {load:.1f})")
    print(f"  {'model':10} {'threads':>7} {'compile s':>10} {'(opt / jit)':>14} "
          f"{'float ms':>9} {'pytorch ms':>16} {'float/pytorch':>14} {'int8 ms':>8} "
          f"{'int8/pytorch':>13} {'int8 compile s':>15}")
    for name, t, e, q, torch_s, layout in rows:
        split = f"{e['optimize_s']:.2f} / {e['jit_s']:.2f}"
        pt = f"{torch_s * 1e3:.1f} ({layout})"
        print(f"  {name:10} {t:7d} {e['compile_s']:10.2f} {split:>14} {e['median_ms']:9.1f} "
              f"{pt:>16} {e['median_ms'] / (torch_s * 1e3):13.2f}x "
              f"{q['median_ms']:8.1f} {q['median_ms'] / (torch_s * 1e3):12.2f}x "
              f"{q['compile_s']:15.2f}")
    print("  (x/pytorch < 1: the cpu backend is faster than PyTorch eager float32 in its faster "
          "layout at\n   that thread count; int8: the model quantized by ember::quant, "
          "calibrated on input.npy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
