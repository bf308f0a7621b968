#!/usr/bin/env python3
"""Serving end to end (docs/systems.md section 4) on a small model: emberc writes the
whole-model binary and a two-stage pipeline package (--system), ember-run serves both
(--requests, --concurrency, --report) with every output checked bit-exact against the
whole binary (--reference), and the report's figures are checked here against closed
forms: the link cycles from the bytes and the description's host link, the makespan of
N requests issued at once (one NPU: N s; a pipeline of stages s0, s1: s0 + s1 +
(N - 1) max(s0, s1); replicas on four devices: ceil(N / 4) s; batches of four: N / 4 batches of four NPU
runs with one link transfer each way), and back-pressure (refusals counted, nothing
lost). Exits non-zero on the first difference."""

import argparse
import json
import math
import os
import re
import subprocess

from checks import expect, run  # this folder is on sys.path


def link_cycles(nbytes, link):
    if nbytes == 0:
        return 0
    return link["latency_cycles"] + math.ceil(nbytes / link["bytes_per_cycle"])


def stage_cycles(stage, link):
    npu = stage["npu_cycles"][0]
    want = link_cycles(stage["in_bytes"], link) + link_cycles(stage["out_bytes"], link)
    expect(stage["link_cycles"] == want,
           f"stage {stage['index']}: link cycles {stage['link_cycles']} == {want} "
           f"({stage['in_bytes']} bytes in, {stage['out_bytes']} out)")
    return npu + want


def serve(args, program, extra, report, n, c):
    run([args.ember_run, program, "--requests", str(n), "--concurrency", str(c),
         "--random-input", "1", "--distinct-inputs", "1", "--report", report] + extra)
    with open(report) as f:
        r = json.load(f)
    expect(r["completed"] + r["refused"] == n, f"{report}: completed + refused == {n}")
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--calibrate", required=True)
    ap.add_argument("--isa", required=True, help="the devices' description (its host_link)")
    ap.add_argument("--system2", required=True, help="two devices of --isa")
    ap.add_argument("--system4", required=True, help="four devices of --isa")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    with open(args.isa) as f:
        link = json.load(f)["hardware"]["host_link"]
    elf = os.path.join(args.work, "whole.elf")
    pkg = os.path.join(args.work, "pipe2.pkg")
    run([args.emberc, args.model, "--calibrate", args.calibrate, "-o", elf, "--quiet"])
    out = run([args.emberc, args.model, "--calibrate", args.calibrate, "--system", args.system2,
               "-o", pkg])
    expect("2 NPU stage(s)" in out, "the package holds two NPU stages")

    n = 12
    one = serve(args, elf, [], os.path.join(args.work, "one.json"), n, n)
    s = stage_cycles(one["stages"][0], link)
    expect(one["makespan_cycles"] == n * s, f"one NPU: makespan {one['makespan_cycles']} == {n} x {s}")
    expect(one["latency_cycles"]["p99"] == n * s, "one NPU: the last request waits for all")

    # Batches of 4, no deadline: three batches of four back-to-back runs, each batch's
    # inputs in one transfer over the link and its outputs in one.
    b = serve(args, elf, ["--batch", "4"], os.path.join(args.work, "batch.json"), n, n)
    st = one["stages"][0]
    per = (4 * st["npu_cycles"][0] + link_cycles(4 * st["in_bytes"], link)
           + link_cycles(4 * st["out_bytes"], link))
    expect(b["batches"] == 3 and b["mean_batch_size"] == 4, "batch 4: three batches of four")
    expect(b["makespan_cycles"] == 3 * per,
           f"batch 4: makespan {b['makespan_cycles']} == 3 x (4 npu + link(4 in) + link(4 out)) "
           f"= 3 x {per}, under one by one's {n * s}")

    ref = ["--reference", elf]
    model = serve(args, args.model, ["--calibrate", args.calibrate] + ref,
                  os.path.join(args.work, "model.json"), n, n)
    expect(model["makespan_cycles"] == one["makespan_cycles"],
           "the ONNX model compiled by ember-run: the same schedule as its binary, bit-exact")
    pipe = serve(args, pkg, ["--system", args.system2] + ref, os.path.join(args.work, "pipe.json"), n, n)
    s0, s1 = (stage_cycles(st, link) for st in pipe["stages"])
    want = s0 + s1 + (n - 1) * max(s0, s1)
    expect(pipe["makespan_cycles"] == want,
           f"pipeline: makespan {pipe['makespan_cycles']} == {s0} + {s1} + {n - 1} x {max(s0, s1)}")
    expect([d["name"] for d in pipe["devices"]] == ["npu0", "npu1"], "pipeline: devices npu0, npu1")
    expect(pipe["devices"][0]["busy_cycles"] == n * s0, "pipeline: npu0 busy N s0")

    # Two devices on one DRAM: the value between the stages stays there (no link), as the
    # partitioner counts; the model's input and output still cross.
    shared = os.path.join(args.work, "x2-shared.json")
    with open(shared, "w") as f:
        json.dump({"name": "x2-shared", "description": "two ember-v1 on one DRAM",
                   "drams": [{"id": "d", "size_bytes": 1 << 30, "bytes_per_cycle": 32,
                              "latency_cycles": 100, "arbitration": "round-robin"}],
                   "devices": [{"name": f"npu{i}", "description": os.path.abspath(args.isa),
                                "dram": "d"} for i in range(2)]}, f)
    sh = serve(args, pkg, ["--system", shared] + ref, os.path.join(args.work, "shared.json"), n, n)
    t0, t1 = sh["stages"]
    expect(t0["in_bytes"] == pipe["stages"][0]["in_bytes"] and t0["out_bytes"] == 0
           and t1["in_bytes"] == 0 and t1["out_bytes"] == pipe["stages"][1]["out_bytes"],
           "shared DRAM: the value between the stages crosses no link")
    # Both devices on one DRAM: each stage's NPU cycles are the joint simulation's
    # (docs/systems.md section 4), never fewer than alone; the schedule uses them.
    jc = sh["dram_contention"]["stages"]
    u0, u1 = (stage_cycles(st, link) - st["npu_cycles"][0] + jc[k]["devices"][0]["npu_cycles"]
              for k, st in enumerate(sh["stages"]))
    for k in (0, 1):
        expect(jc[k]["alone_npu_cycles"] == sh["stages"][k]["npu_cycles"][0]
               and jc[k]["devices"][0]["npu_cycles"] >= jc[k]["alone_npu_cycles"],
               f"shared DRAM: stage {k} together >= alone")
    expect(sh["makespan_cycles"] == u0 + u1 + (n - 1) * max(u0, u1), "shared DRAM: makespan")

    rep = serve(args, elf, ["--system", args.system4] + ref, os.path.join(args.work, "rep.json"), n, n)
    expect(rep["makespan_cycles"] == math.ceil(n / 4) * s, f"replicas: makespan == ceil({n} / 4) x {s}")
    expect(all(d["runs"] == n // 4 for d in rep["devices"]), "replicas: three requests each")

    # Replicas on four devices sharing one DRAM, four clients: each device serves its own
    # client, three runs of its joint NPU cycles plus the link; the report's per-device
    # NPU cycles and arbitration stalls are three times the joint simulation's.
    x4s = os.path.join(os.path.dirname(args.system4), "ember-v1-x4-shared.json")
    rs = serve(args, elf, ["--system", x4s], os.path.join(args.work, "rep_shared.json"), n, 4)
    dc = rs["dram_contention"]["stages"][0]
    expect(dc["alone_npu_cycles"] == one["stages"][0]["npu_cycles"][0],
           "shared replicas: alone = one NPU's cycles")
    lk = s - one["stages"][0]["npu_cycles"][0]
    for d, jd in zip(rs["devices"], dc["devices"]):
        expect(d["runs"] == 3 and d["npu_cycles"] == 3 * jd["npu_cycles"]
               and d["stalls"]["dram_arbitration_cycles"] == 3 * jd["arbitration_stall_cycles"],
               f"shared replicas: {d['name']} runs 3 x its joint figures")
    slowest = max(jd["npu_cycles"] for jd in dc["devices"])
    expect(slowest > dc["alone_npu_cycles"], "shared replicas: four devices at once contend")
    expect(rs["makespan_cycles"] == 3 * (slowest + lk), "shared replicas: makespan 3 x slowest")

    busy = serve(args, elf, ["--queue-depth", "2", "--when-full", "refuse"],
                 os.path.join(args.work, "busy.json"), 8, 4)
    expect(busy["refused"] > 0 and busy["completed"] > 0 and busy["max_admitted"] == 2,
           f"refuse: {busy['completed']} completed, {busy['refused']} refused, at most 2 admitted")
    block = serve(args, elf, ["--queue-depth", "2"], os.path.join(args.work, "block.json"), 8, 4)
    expect(block["completed"] == 8 and block["refused"] == 0 and block["max_admitted"] == 2,
           "block: all 8 completed, none refused, at most 2 admitted")
    expect(block["makespan_cycles"] == 8 * s, "block: one NPU, 8 s")
    # A device whose DRAM cannot hold its stage: the refusal names stage, bytes, device.
    small = os.path.join(args.work, "x2-64k.json")
    with open(small, "w") as f:
        json.dump({"name": "x2-64k", "description": "two ember-v1 with 64 KiB DRAMs", "drams": [
            {"id": f"d{i}", "size_bytes": 65536, "bytes_per_cycle": 32, "latency_cycles": 100,
             "arbitration": "round-robin"} for i in range(2)],
            "devices": [{"name": f"npu{i}", "description": os.path.abspath(args.isa),
                         "dram": f"d{i}"} for i in range(2)]}, f)
    p = subprocess.run([args.ember_run, pkg, "--system", small, "--requests", "2",
                        "--random-input", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    print(p.stdout)
    expect(p.returncode == 1 and re.search(r"x2-64k.json: stage ([01]) needs [0-9.]+ KiB of "
                                           r"DRAM, device npu\1 has 64 KiB", p.stdout),
           "a stage larger than its device's DRAM is refused, naming stage, bytes and device")
    print("serve e2e: all checks passed")


if __name__ == "__main__":
    main()
