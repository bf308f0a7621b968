#!/usr/bin/env python3
"""bench_serve: serving in simulated time (docs/systems.md section 4). ResNet-50 pipelined
over four ember-v1 NPUs (emberc --system ember-v1-x4.json -o PKG) against the whole model
on one NPU, every distinct input's outputs required bit-exact with the one-NPU binary
(ember-run --reference); throughput and p50/p99 latency at 1, 4, 16 and 64 outstanding
requests, then 64 clients over a queue of 48 that blocks (nothing lost, nothing refused);
ResNet-18 replicated over four NPUs, on private DRAMs and on one shared DRAM (the four
simulated together: the throughput lost to DRAM contention). Figures only: it never fails
on a time."""

import argparse
import json
import os
import subprocess
import sys
import time


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        print(p.stdout)
        sys.exit(f"exit status {p.returncode}")
    return p.stdout, time.time() - t0


def compile_model(args, model, out, system=None):
    d = os.path.join(args.models_dir, model)
    cmd = [args.emberc, os.path.join(d, "model.onnx"), "--calibrate",
           os.path.join(d, "input.npy"), "-o", out, "--quiet"]
    if system:
        cmd += ["--system", system, "--partition-report"]
    text, secs = run(cmd)
    if system:
        print(text.rstrip())
    print(f"compiled {model} -> {out} in {secs:.1f} s", flush=True)


def serve(args, program, report, requests, clients, extra):
    cmd = [args.ember_run, program, "--requests", str(requests), "--concurrency", str(clients),
           "--random-input", "1", "--distinct-inputs", str(args.distinct), "--report", report,
           "--quiet"] + extra
    text, secs = run(cmd)
    with open(report) as f:
        r = json.load(f)
    r["host_seconds"] = secs
    r["text"] = text
    return r


def row(label, clients, r, clock):
    ms = 1e3 / clock
    lat = r["latency_cycles"]
    print(f"  {label:<10} {clients:>5} {r['completed']:>9} {r['refused']:>7} "
          f"{r['throughput_per_s']:>12.1f} {lat['p50'] * ms:>9.3f} {lat['p99'] * ms:>9.3f} "
          f"{r['host_seconds']:>7.1f}")


def header():
    print(f"  {'program':<10} {'outst':>5} {'completed':>9} {'refused':>7} {'infer/s':>12} "
          f"{'p50 ms':>9} {'p99 ms':>9} {'host s':>7}")


def contention(r):
    """The report's DRAM contention: each stage alone and on each device together."""
    for st in r.get("dram_contention", {}).get("stages", []):
        devs = ", ".join(f"{d['device']} {d['npu_cycles']} ({d['loss_percent']:+.1f}%, "
                         f"{d['arbitration_stall_cycles']} arbitration stall)"
                         for d in st["devices"])
        print(f"  stage {st['index']}: {st['alone_npu_cycles']} NPU cycles alone; together {devs}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--system", required=True, help="four ember-v1 NPUs (ember-v1-x4.json)")
    ap.add_argument("--shared-system", help="four ember-v1 NPUs on one DRAM (optional)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--requests", type=int, default=256)
    ap.add_argument("--distinct", type=int, default=2, help="distinct inputs simulated per run")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    elf = os.path.join(args.out, "resnet50.elf")
    pkg = os.path.join(args.out, "resnet50_x4.pkg")
    compile_model(args, "resnet50", elf)
    compile_model(args, "resnet50", pkg, args.system)
    ref = ["--reference", elf]
    print(f"\nResNet-50, {args.requests} requests, {args.distinct} distinct inputs simulated "
          "(outputs bit-exact with one NPU's binary for every one):")
    header()
    ratios = {}
    clock = None
    for clients in (1, 4, 16, 64):
        one = serve(args, elf, os.path.join(args.out, f"one_{clients}.json"), args.requests,
                    clients, [])
        pipe = serve(args, pkg, os.path.join(args.out, f"x4_{clients}.json"), args.requests,
                     clients, ["--system", args.system] + ref)
        clock = one["clock_hz"]
        row("1 NPU", clients, one, clock)
        row("x4 pipe", clients, pipe, clock)
        ratios[clients] = pipe["throughput_per_s"] / one["throughput_per_s"]
        ratios_base = one["throughput_per_s"]
    for clients, ratio in ratios.items():
        print(f"  throughput x4 pipeline / one NPU at {clients} outstanding: {ratio:.2f}x "
              "(goal >= 3.6x)")
    print(f"  stages (x4, 64 outstanding):")
    for st in pipe["stages"]:
        print(f"    stage {st['index']} on {','.join(st['devices'])}: {st['npu_cycles'][0]} NPU "
              f"cycles + {st['link_cycles']} link cycles ({st['in_bytes']} B in, "
              f"{st['out_bytes']} B out)")
    for d in pipe["devices"]:
        print(f"    {d['name']}: busy {d['busy_cycles']} cycles, utilisation "
              f"{100 * d['utilisation']:.1f}%, idle {d['stalls']['idle_cycles']}")
    q = serve(args, pkg, os.path.join(args.out, "x4_64_q48.json"), args.requests, 64,
              ["--system", args.system, "--queue-depth", "48"])
    print(f"  64 clients, queue depth 48, block when full: {q['completed']} completed, "
          f"{q['refused']} refused, {q['waited_for_slot']} waited for a slot, at most "
          f"{q['max_admitted']} admitted, p99 {q['latency_cycles']['p99'] * 1e3 / clock:.3f} ms")

    if args.shared_system:
        spkg = os.path.join(args.out, "resnet50_x4_shared.pkg")
        compile_model(args, "resnet50", spkg, args.shared_system)
        sh = serve(args, spkg, os.path.join(args.out, "x4_shared_16.json"), args.requests, 16,
                   ["--system", args.shared_system] + ref)
        print("\nResNet-50 pipelined over four NPUs on one DRAM (values between stages stay in "
              "it; the stages' NPU cycles with all four devices contending for the DRAM):")
        header()
        row("x4 shared", 16, sh, clock)
        print(f"  throughput / one NPU: {sh['throughput_per_s'] / ratios_base:.2f}x")
        contention(sh)

    r18 = os.path.join(args.out, "resnet18.elf")
    compile_model(args, "resnet18", r18)
    print(f"\nResNet-18 replicated over four NPUs, {args.requests} requests, 16 outstanding:")
    header()
    one = serve(args, r18, os.path.join(args.out, "r18_one.json"), args.requests, 16, [])
    rep = serve(args, r18, os.path.join(args.out, "r18_x4.json"), args.requests, 16,
                ["--system", args.system])
    row("1 NPU", 16, one, clock)
    row("x4 repl", 16, rep, clock)
    print(f"  throughput x4 replicas / one NPU: "
          f"{rep['throughput_per_s'] / one['throughput_per_s']:.2f}x (goal >= 3.8x)")
    if args.shared_system:
        rs = serve(args, r18, os.path.join(args.out, "r18_x4_shared.json"), args.requests, 16,
                   ["--system", args.shared_system])
        print("\nResNet-18 replicated over four NPUs on one DRAM (one simulation of the four):")
        header()
        row("x4 shared", 16, rs, clock)
        print(f"  throughput x4 shared / one NPU: "
              f"{rs['throughput_per_s'] / one['throughput_per_s']:.2f}x; lost to DRAM "
              f"contention: {100 * (1 - rs['throughput_per_s'] / rep['throughput_per_s']):.1f}% "
              f"of the private DRAMs' {rep['throughput_per_s']:.1f} inferences/s")
        contention(rs)


if __name__ == "__main__":
    main()
