"""Program.serve: serving in simulated time (docs/systems.md section 4), on the small
CNN of conftest.py. The expected figures are worked out from the report's own stage
cycles and the description's host link, as tools.serve.lenet does."""

import json
import math
import os

import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _link(nbytes, link):
    return 0 if nbytes == 0 else link["latency_cycles"] + math.ceil(nbytes / link["bytes_per_cycle"])


def test_serve_on_one_npu_and_replicated(cnn_model, tmp_path):
    prog = ember.compile(cnn_model, calibrate="random:2")
    with open(os.path.join(ROOT, "isa", "ember-v1.json")) as f:
        link = json.load(f)["hardware"]["host_link"]
    one = prog.serve(8, concurrency=8)
    assert one["requests"] == 8 and one["completed"] == 8 and one["refused"] == 0
    st = one["stages"][0]
    s = st["npu_cycles"][0] + _link(st["in_bytes"], link) + _link(st["out_bytes"], link)
    assert one["makespan_cycles"] == 8 * s
    assert one["latency_cycles"]["p99"] == 8 * s
    ref = str(tmp_path / "cnn.elf")
    prog.save(ref)
    rep = prog.serve(8, concurrency=8, system=os.path.join(ROOT, "isa", "systems", "ember-v1-x4.json"),
                     reference=ref)
    assert rep["makespan_cycles"] == 2 * s  # two rounds of four
    assert [d["runs"] for d in rep["devices"]] == [2, 2, 2, 2]
    busy = prog.serve(6, concurrency=2, queue_depth=1, when_full="refuse")
    assert busy["completed"] + busy["refused"] == 6 and busy["refused"] == 3
    # Batches of four: the eight requests ready at cycle 0 make two batches, each four runs
    # back to back with their inputs and their outputs in one link transfer each way.
    b = prog.serve(8, concurrency=8, batch=4, batch_deadline=1000)
    st = b["stages"][0]
    per = 4 * st["npu_cycles"][0] + _link(4 * st["in_bytes"], link) + _link(4 * st["out_bytes"], link)
    assert b["batches"] == 2 and b["mean_batch_size"] == 4
    assert b["makespan_cycles"] == 2 * per < one["makespan_cycles"]
    # Python takes the command line's ranges (no batch of 0, no deadline past 10^12 cycles).
    with pytest.raises(ember.UsageError, match="--batch: 0 is outside 1..4096"):
        prog.serve(8, batch=0)
    with pytest.raises(ember.UsageError, match="--batch-deadline"):
        prog.serve(8, batch=2, batch_deadline=2**64 - 1)


def test_serve_refuses_host_programs(mlp_model):
    with pytest.raises(ember.UsageError, match="serve: runs NPU programs"):
        ember.compile(mlp_model[0], target="interp").serve(4)
