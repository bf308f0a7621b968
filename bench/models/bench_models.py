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
    m = re.search(r"time: import ([0-9.]+) s, prepare \(\w+\) ([0-9.]+) s, run ([0-9.]+) s",
                  r.stdout)
    if not m:
        raise SystemExit("bench: could not parse ember-run's timing line:\n" + r.stdout)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def torch_latency(model_name, iterations, threads):
    import numpy as np
    import torch
    import gen_models
    torch.set_num_threads(threads)
    build, shape = gen_models.MODELS[model_name][0], gen_models.MODELS[model_name][1]
    torch.manual_seed(0)
    model = build().eval()
    x = torch.from_numpy(np.load(os.path.join(ARGS.models_dir, model_name, "input.npy")))
    times = []
    with torch.no_grad():
        model(x)  # warm-up
        for _ in range(iterations):
            t0 = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


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

    imp, prep, run = ember_figures(args, folder)
    t1 = torch_latency(args.model, args.iterations, 1)
    t2 = torch_latency(args.model, args.iterations, 2)
    n = args.iterations
    print()
    print(f"bench {args.model} (batch 1, float32, {n} iteration(s), median)")
    print(f"  ember import (ONNX -> graph)      {imp * 1e3:10.1f} ms")
    print(f"  ember prepare (interp)            {prep * 1e3:10.1f} ms")
    print(f"  ember interpreter latency         {run * 1e3:10.1f} ms")
    print(f"  pytorch eager latency, 1 thread   {t1 * 1e3:10.1f} ms   "
          f"ember/pytorch = {run / t1:6.2f}x")
    print(f"  pytorch eager latency, 2 threads  {t2 * 1e3:10.1f} ms   "
          f"ember/pytorch = {run / t2:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
