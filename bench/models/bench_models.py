#!/usr/bin/python3
"""Model benchmark: Ember's ONNX import time and float interpreter latency beside PyTorch
eager latency (1 and 2 threads), all measured in this one run. Prints figures; never
fails on time (exit status is non-zero only if something could not run at all).

  /usr/bin/python3 bench/models/bench_models.py --ember-run BUILD/tools/ember-run/ember-run \\
      --models-dir BUILD/models [--model resnet50] [--iterations 5]
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


def ember_figures(args, folder):
    cmd = [args.ember_run, os.path.join(folder, "model.onnx"), "--device", "interp",
           "--input", "input=" + os.path.join(folder, "input.npy"),
           "--repeat", str(args.iterations), "--quiet"]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise SystemExit(f"bench: ember-run failed (exit {r.returncode})")
    m = re.search(r"time: import ([0-9.]+) s \(cpu ([0-9.]+) s\), prepare \(\w+\) ([0-9.]+) s, "
                  r"run ([0-9.]+) s \(cpu ([0-9.]+) s\)", r.stdout)
    if not m:
        raise SystemExit("bench: could not parse ember-run's timing line:\n" + r.stdout)
    return [float(g) for g in m.groups()]


def torch_latency(model_name, iterations, threads):
    import numpy as np
    import torch
    import gen_models
    torch.set_num_threads(threads)
    build, shape = gen_models.MODELS[model_name][0], gen_models.MODELS[model_name][1]
    torch.manual_seed(0)
    model = build().eval()
    x = torch.from_numpy(np.load(os.path.join(ARGS.models_dir, model_name, "input.npy")))
    times, cpu = [], []
    with torch.no_grad():
        for _ in range(2):  # warm-up (thread pools, allocator)
            model(x)
        for _ in range(iterations):
            t0, c0 = time.perf_counter(), time.process_time()
            model(x)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    return statistics.median(times), statistics.median(cpu)


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--iterations", type=int, default=5)
    ARGS = args = ap.parse_args()
    gen = os.path.join(HERE, "..", "..", "tests", "models", "gen_models.py")
    subprocess.run([sys.executable, gen, "--out", args.models_dir, "--only", args.model],
                   check=True, stderr=subprocess.DEVNULL)
    folder = os.path.join(args.models_dir, args.model)

    imp, imp_cpu, prep, run, run_cpu = ember_figures(args, folder)
    t1, c1 = torch_latency(args.model, args.iterations, 1)
    t2, c2 = torch_latency(args.model, args.iterations, 2)
    load = os.getloadavg()[0]
    print()
    print(f"bench {args.model} (batch 1, float32, median of {args.iterations}; "
          f"{os.cpu_count()} CPUs, load average {load:.1f})")
    print(f"  {'':34} {'wall ms':>10} {'cpu ms':>10}   ratio ember/pytorch (wall)")
    print(f"  {'ember import (ONNX -> graph)':34} {imp * 1e3:10.1f} {imp_cpu * 1e3:10.1f}")
    print(f"  {'ember prepare (interp)':34} {prep * 1e3:10.1f}")
    print(f"  {'ember interpreter latency':34} {run * 1e3:10.1f} {run_cpu * 1e3:10.1f}")
    print(f"  {'pytorch eager latency, 1 thread':34} {t1 * 1e3:10.1f} {c1 * 1e3:10.1f}"
          f"   {run / t1:6.2f}x")
    print(f"  {'pytorch eager latency, 2 threads':34} {t2 * 1e3:10.1f} {c2 * 1e3:10.1f}"
          f"   {run / t2:6.2f}x")
    print("  (cpu = process CPU time: on a busy machine, wall time includes waiting)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
