#!/usr/bin/python3
"""ctest bench.scoreboard.parse: scoreboard.py's parsers and table on canned output of the
tools it runs (npu_bench --json, ember-sim --report, sim_bench --json, bench_cpu.py --json,
ember-run's timing line). No tool is run; fails when a parser or a row changes meaning.

  /usr/bin/python3 bench/scoreboard/test_scoreboard.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scoreboard as sb  # noqa: E402

NPU = [
    {"model": "resnet18", "description": "ember-v1", "compile_s": 0.31, "cycles": 8822292,
     "useful_mac_utilization": 0.803, "array_mac_utilization": 0.854,
     "roofline_efficiency": 0.816, "estimated_cycles": 8822323, "host_s": 1.01},
    {"model": "resnet18", "description": "ember-v1-large", "compile_s": 0.37, "cycles": 2976667,
     "useful_mac_utilization": 0.595, "array_mac_utilization": 0.733,
     "roofline_efficiency": 0.615, "estimated_cycles": 2976801, "host_s": 1.73},
    {"model": "resnet50", "description": "ember-v1", "compile_s": 0.5, "cycles": 21566929,
     "useful_mac_utilization": 0.86, "array_mac_utilization": 0.862,
     "roofline_efficiency": 0.93, "estimated_cycles": 21572993, "host_s": 3.28},
    {"model": "resnet50", "description": "ember-v1-large", "fault": "dma out of range"},
    {"model": "mobilenet_v2", "description": "ember-v1", "compile_s": 0.2, "cycles": 3980728,
     "useful_mac_utilization": 0.295, "array_mac_utilization": 0.66,
     "roofline_efficiency": 0.337, "estimated_cycles": 3981178, "host_s": 0.89},
]
REPORT = {"isa": "ember-v1", "cycles": 1000, "fault": None, "layers": [
    {"name": "/conv1/Conv", "cycles": 500, "macs": 10},
    {"name": "/layer1/layer1.0/Add", "cycles": 30, "macs": 0},
    {"name": "/layer1/layer1.1/Add_1", "cycles": 20, "macs": 0},
    {"name": "/layer2/layer2.0/Add__1", "cycles": 10, "macs": 0},
    {"name": "/layer2/layer2.0/conv2/Conv+Add", "cycles": 300, "macs": 10},
    {"name": "/layer3/layer3.0/conv3/Conv__1 + /layer3/layer3.0/Add__1", "cycles": 3,
     "macs": 10},
    {"name": "/layer2/layer2.0/AddBias", "cycles": 7, "macs": 0},
    {"name": "/fc/Gemm", "cycles": 100, "macs": 10},
]}
SIM = [{"name": "resnet50", "isa": "ember-v1", "instructions": 123, "cycles": 21566929,
        "mac_utilization": 0.76, "host_s": 3.25, "simulated_cycles_per_second": 6.636e6,
        "load_s": 0.2}]
CPU = {"ort_version": "1.30.0", "ort": None, "goal": 1.0, "rows": [
    {"model": "resnet18", "precision": "float32", "threads": 1, "ember_ms": 27.5,
     "ort_ms": 20.6, "ember_over_ort": 1.33, "ort_not_measured": None, "pytorch_ms": None,
     "compile_s": 1.9},
    {"model": "resnet50", "precision": "float32", "threads": 1, "ember_ms": 40.0,
     "ort_ms": 47.0, "ember_over_ort": 0.85, "ort_not_measured": None, "pytorch_ms": None,
     "compile_s": 6.0},
    {"model": "mobilenet_v2", "precision": "float32", "threads": 1, "ember_ms": 15.1,
     "ort_ms": None, "ember_over_ort": None, "ort_not_measured": "ort_bench.js failed: boom",
     "pytorch_ms": None, "compile_s": 3.3},
]}
CPU_NO_ORT = {"ort": "not measured (npm install failed, exit 1: ENOTFOUND)", "rows": [
    {"model": "transformer", "precision": "float32", "threads": 1, "ember_ms": 0.2,
     "ort_ms": None, "ember_over_ort": None, "ort_not_measured":
     "not measured (npm install failed, exit 1: ENOTFOUND)", "pytorch_ms": None,
     "compile_s": 0.5}]}
RUN = ("output: 1 tensors\n"
       "time: import 2.113 s (cpu 2.001 s), prepare (cpu) 4.321 s, run 0.131 s (cpu 0.130 s)\n")

checks = []


def check(what, ok):
    checks.append((what, bool(ok)))


def raises(fn, *args):
    try:
        fn(*args)
    except sb.ToolError:
        return True
    return False


plan = sb.FULL
for what, fn, arg in (("npu_bench", sb.npu_figures, NPU), ("ember-sim", sb.add_share, REPORT),
                      ("sim_bench", sb.sim_figures, SIM)):
    if raises(fn, arg):
        sys.exit("scoreboard: the canned %s output is refused by its parser" % what)
npu = sb.npu_figures(NPU)
rows = sb.npu_rows(plan, npu)
by = {r["figure"]: r for r in rows}
r50 = by.get("ResNet-50 useful MAC utilisation, ember-v1", {})
check("ResNet-50 MAC use on ember-v1 read and met (86% >= 85%)",
      r50.get("value") == 0.86 and r50.get("measured") == "86.0%" and r50.get("met") is True)
large = by.get("ResNet-50 useful MAC utilisation, ember-v1-large", {})
check("a faulted simulation is not measured, says why",
      large.get("met") is None and "faulted: dma out of range" in large.get("measured", ""))
rf = by.get("ResNet-18 roofline efficiency (ideal / simulated cycles), ember-v1", {})
check("ResNet-18 roofline read, not met (0.816 < 0.92)",
      rf.get("measured") == "0.816" and rf.get("met") is False)
mb = by.get("MobileNetV2 useful MAC utilisation, ember-v1", {})
check("MobileNetV2 read, not met", mb.get("measured") == "29.5%" and mb.get("met") is False)
check("five NPU rows", len(rows) == 5)
check("npu_bench output without a figure refused",
      raises(sb.npu_figures, [{"model": "resnet18", "description": "ember-v1", "cycles": 1}]))
check("npu_bench output not an array refused", raises(sb.npu_figures, {"rows": []}))

check("Add layers by node kind",
      [sb.is_add_layer(l["name"]) for l in REPORT["layers"]] ==
      [False, True, True, True, False, False, False, False])
share = sb.add_share(REPORT)
check("Add share: 60 of 1000 cycles in 3 layers", share == (0.06, 3, 60, 1000))
add = sb.add_row(plan, share)
check("Add row printed, not met", add["measured"] == "6.00% (3 Add layers, 60 of 1000 cycles)"
      and add["met"] is False)
fused = dict(REPORT, layers=[l for l in REPORT["layers"] if not sb.is_add_layer(l["name"])])
check("fused Adds: share 0, met", sb.add_row(plan, sb.add_share(fused))["met"] is True)
check("a report without layers refused", raises(sb.add_share, {"cycles": 5}))
check("a faulted report refused", raises(sb.add_share, dict(REPORT, fault={"kind": "x"})))

sim = sb.sim_rows(plan, sb.sim_figures(SIM), npu)
check("simulator speed row", sim[0]["measured"] == "3.250 s (6.6 M cycles/s)" and
      sim[0]["met"] is False)
check("cycles equal to npu_bench's", sim[1]["measured"] == "21566929 (npu_bench: 21566929)"
      and sim[1]["met"] is True)
other = sb.sim_rows(plan, dict(SIM[0], cycles=21566930, host_s=0.9), npu)
check("cycles that differ: not met; 0.9 s met", other[1]["met"] is False and
      other[0]["met"] is True)
check("sim_bench fault refused", raises(sb.sim_figures, [{"name": "x", "fault": "f"}]))

if raises(sb.cpu_rows, plan, CPU):
    sys.exit("scoreboard: the canned bench_cpu.py output is refused by its parser")
cpu = sb.cpu_rows(plan, CPU)
check("four CPU rows", len(cpu) == 4)
check("ResNet-18 ratio", cpu[0]["measured"] == "1.33x (27.50 / 20.60 ms)" and
      cpu[0]["met"] is False)
check("ResNet-50 ratio met", cpu[1]["met"] is True)
check("ONNX Runtime failing on one model: not measured, why",
      cpu[2]["measured"] == "not measured: no ONNX Runtime (ort_bench.js failed: boom); "
      "Ember 15.10 ms" and cpu[2]["met"] is None)
check("a model absent from the output: not measured", cpu[3]["met"] is None and
      cpu[3]["measured"].startswith("not measured: bench_cpu.py printed no"))
noort = sb.cpu_rows(sb.QUICK, CPU_NO_ORT)
check("no ONNX Runtime: says why", noort[0]["measured"] ==
      "not measured: no ONNX Runtime (npm install failed, exit 1: ENOTFOUND); Ember 0.20 ms")
check("bench_cpu.py output without rows refused", raises(sb.cpu_rows, plan, {"ort": None}))

check("JIT compile seconds from ember-run's timing line",
      not raises(sb.jit_seconds, RUN) and sb.jit_seconds(RUN) == 4.321)
check("JIT row not met (4.32 s > 3 s)", sb.jit_row(plan, 4.321)["met"] is False)
check("a changed timing line refused", raises(sb.jit_seconds, "time: run 0.1 s\n"))

all_rows = rows + [add] + sim + cpu + [sb.jit_row(plan, why="ember-run is not built")]
text = sb.table(all_rows)
lines = text.splitlines()
check("one table: header, rule, one line per row",
      lines[0].split("|")[1:5] and [c.strip() for c in lines[0].split("|")[1:5]] ==
      ["figure", "measured", "goal", "met?"] and len(lines) == 2 + len(all_rows))
check("aligned columns", len(set(len(l) for l in lines)) == 1)
check("marks", all(l.rstrip(" |").split("|")[-1].strip() in ("yes", "no", "-")
                   for l in lines[2:]))
check("every figure of issue 15 has a row", len(all_rows) == 13)

bad = [what for what, ok in checks if not ok]
if bad:
    print(text)
    sys.exit("scoreboard: %d of %d checks failed:\n  %s" % (len(bad), len(checks),
                                                            "\n  ".join(bad)))
print("scoreboard parsers and table: %d checks passed" % len(checks))
