"""The Python package against independent references: int8 runs on every device equal
the int8 interpreter bit for bit (Ember's reference for int8), float runs equal a NumPy
computation, and errors carry the tools' messages."""

import os

import re

import numpy as np
import pytest

import ember


def _input(prog, rng):
    (i,) = prog.inputs
    return {i["name"]: rng.uniform(-1, 1, i["shape"]).astype(np.float32)}


def _all_bit_exact(result):
    return all(v["bit_exact"] for v in result.values())


def test_backends_include_the_npu():
    names = ember.backends()
    assert "interp" in names and "npu" in names


def test_npu_program_runs_whole_and_matches_every_device(cnn_model, rng):
    prog = ember.compile(cnn_model)
    assert prog.target == "npu" and prog.precision == "int8"
    assert prog.devices[0] == "sim" and prog.whole_on_npu
    assert "1 segment(s) (1 on the NPU)" in prog.placement
    assert "estimated cycles" in prog.compile_summary
    x = _input(prog, rng)
    sim = prog.run(x)
    assert sim["y"].shape == (1, 10) and sim["y"].dtype == np.float32
    report = prog.report
    # the array executes at least the model's dense MACs (padded lanes count too)
    assert report["cycles"] > 0 and report["macs"] >= 16 * 16 * 9 * 64 + 160
    assert [layer["name"] for layer in report["layers"]]
    for device in prog.devices[1:]:
        other = prog.run(x, device=device)
        assert _all_bit_exact(ember.compare(sim, other)), device
        if device in ("interp", "cpu"):
            assert prog.report is None and prog.reports == []


def test_rtl_equals_sim_in_outputs_and_cycles(cnn_model, rng):
    prog = ember.compile(cnn_model)
    if "rtl" not in prog.devices:
        pytest.skip("this build has no RTL (EMBER_WITH_RTL=OFF)")
    x = _input(prog, rng)
    sim = prog.run(x, device="sim")
    sim_cycles = prog.report["cycles"]
    rtl = prog.run(x, device="rtl")
    assert _all_bit_exact(ember.compare(sim, rtl))
    assert prog.report["cycles"] == sim_cycles


def test_cross_check_agrees_across_devices_and_against_float(cnn_model, rng):
    prog = ember.compile(cnn_model)
    devices = [d for d in ("interp", "cpu", "sim", "rtl") if d in prog.devices]
    x = _input(prog, rng)
    c = prog.cross_check(x, devices)
    assert c["agree"] and c["mismatch"] == [], c["table"]
    assert list(c["outputs"]) == devices
    # every device's outputs equal the interpreter's bit for bit (numpy, not Ember, checks)
    for d in devices[1:]:
        assert c["outputs"][d]["y"].tobytes() == c["outputs"]["interp"]["y"].tobytes(), d
    assert "cosine" in c["table"]  # the int8 program against its float model
    if "rtl" in devices:
        assert "timing sim vs rtl: equal" in c["table"], c["table"]
    assert prog.report is not None and prog.report["cycles"] > 0  # the sim run's report
    with pytest.raises(ember.UsageError, match="at least two devices"):
        prog.cross_check(x, ["sim"])
    with pytest.raises(ember.UsageError, match="listed twice"):
        prog.cross_check(x, ["sim", "sim"])
    with pytest.raises(ember.UsageError, match="this program runs on"):
        prog.cross_check(x, ["sim", "gpu"])


def test_cross_check_of_a_loaded_binary(cnn_model, rng, tmp_path):
    prog = ember.compile(cnn_model)
    path = tmp_path / "m.elf"
    prog.save(path)
    loaded = ember.load(path)
    if "rtl" not in loaded.devices:
        pytest.skip("this build has no RTL (EMBER_WITH_RTL=OFF)")
    c = loaded.cross_check(_input(loaded, rng), "sim,rtl")
    assert c["agree"], c["mismatch"]
    assert c["outputs"]["sim"]["y"].tobytes() == c["outputs"]["rtl"]["y"].tobytes()


def test_partitioned_program_runs_softmax_on_the_host(softmax_model, rng):
    prog = ember.compile(softmax_model)
    assert not prog.whole_on_npu
    # The convolution stays on the NPU; the 160-MAC MatMul beside the host's Softmax may
    # go to the host with it (the partitioner's minimum cut weighs its transfers).
    macs = re.search(r"([\d.]+)% of MACs on the NPU", prog.placement)
    assert "segment" in prog.placement and macs and float(macs.group(1)) >= 99.0, prog.placement
    assert "Softmax" in prog.placement_report
    x = _input(prog, rng)
    sim = prog.run(x)
    assert len(prog.reports) >= 1 and all(r["cycles"] > 0 for r in prog.reports)
    assert _all_bit_exact(ember.compare(sim, prog.run(x, device="interp")))
    # Softmax along axis 1, int8 (docs/numerics.md 4.10): each probability a multiple of
    # 1/255, rounded, so each of the 5 lines of 2 sums to 1 within half a code per element.
    y = sim["y"].reshape(1, 2, 5)
    assert np.abs(y.sum(axis=1) - 1.0).max() <= 2 * 0.5 / 255 + 1e-6


def test_fallback_none_lists_the_node_it_cannot_run(softmax_model):
    with pytest.raises(ember.Unsupported) as e:
        ember.compile(softmax_model, fallback="none")
    assert "Softmax" in str(e.value) and "cannot run on the NPU" in str(e.value)


def test_save_and_load_give_the_same_results(cnn_model, softmax_model, rng, tmp_path):
    whole = ember.compile(cnn_model)
    x = _input(whole, rng)
    elf = tmp_path / "cnn.elf"
    whole.save(elf)
    assert open(elf, "rb").read(4) == b"\x7fELF"
    loaded = ember.load(elf)
    out = loaded.run(x)
    ref = whole.run(x)
    assert np.array_equal(out["y"].reshape(ref["y"].shape), ref["y"])
    assert loaded.report["cycles"] == whole.report["cycles"]

    parted = ember.compile(softmax_model)
    pkg = tmp_path / "softmax.pkg"
    parted.save(pkg)
    again = ember.load(pkg)
    assert again.placement == parted.placement
    assert _all_bit_exact(ember.compare(again.run(x), parted.run(x)))


def test_save_never_lands_on_what_the_program_was_made_from(cnn_model, tmp_path):
    prog = ember.compile(cnn_model)
    before = open(cnn_model, "rb").read()
    with pytest.raises(ember.Error, match="is also an input"):
        prog.save(cnn_model)
    assert open(cnn_model, "rb").read() == before
    elf = tmp_path / "m.elf"
    prog.save(elf)
    loaded = ember.load(elf)
    with pytest.raises(ember.Error, match="is also an input"):
        loaded.save(elf)
    desc = tmp_path / "desc.json"
    desc.write_bytes(open(ember.isa.default_path(), "rb").read())
    with pytest.raises(ember.Error, match="is also an input"):
        ember.compile(cnn_model, isa=desc).save(desc)


def test_same_model_compiles_to_the_same_bytes(softmax_model, tmp_path):
    a, b = tmp_path / "a.pkg", tmp_path / "b.pkg"
    ember.compile(softmax_model).save(a)
    ember.compile(softmax_model).save(b)
    assert open(a, "rb").read() == open(b, "rb").read()


def test_float_programs_match_numpy(mlp_model, rng):
    path, (w1, b1, w2) = mlp_model
    x = rng.uniform(-1, 1, (3, 12)).astype(np.float32)
    want = np.maximum(x @ w1 + b1, 0) @ w2
    for target in [t for t in ("interp", "cpu") if t in ember.backends()]:
        prog = ember.compile(path, target=target)
        assert prog.precision == "float" and prog.devices[0] == target
        got = prog.run({"x": x})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_int8_host_program_is_close_to_float(mlp_model, rng):
    path, (w1, b1, w2) = mlp_model
    x = rng.uniform(-1, 1, (3, 12)).astype(np.float32)
    want = np.maximum(x @ w1 + b1, 0) @ w2
    got = ember.compile(path, target="interp", precision="int8").run({"x": x})["y"]
    assert np.max(np.abs(got - want)) < 0.05 * np.max(np.abs(want))


def test_errors_carry_the_tools_messages(cnn_model, rng, tmp_path):
    with pytest.raises(ember.Error) as e:
        ember.compile(tmp_path / "missing.onnx")
    assert "missing.onnx" in str(e.value)
    prog = ember.compile(cnn_model)
    x = _input(prog, rng)
    with pytest.raises(ember.Error) as e:
        prog.run({"z": x["x"]})
    assert "no input named 'z'" in str(e.value) and "input 'x' not given" in str(e.value)
    with pytest.raises(ember.UsageError) as e:
        prog.run(x, device="gpu")
    assert "sim" in str(e.value)
    with pytest.raises(ember.Error) as e:
        prog.run({"x": x["x"].astype(np.float16)})
    assert "float16" in str(e.value)
    with pytest.raises(ember.Error) as e:
        prog.run({"x": x["x"][:, :8]})
    assert "input 'x'" in str(e.value)
    with pytest.raises(ember.UsageError):
        ember.compile(cnn_model, target="tpu")
    with pytest.raises(ember.UsageError):
        ember.compile(cnn_model, precision="float")  # the NPU runs int8 only
    with pytest.raises(ember.UsageError):
        ember.compile(cnn_model, target="interp").save(tmp_path / "x.elf")
    with pytest.raises(ember.Error):
        ember.load(cnn_model)  # an ONNX file is not a binary
    assert not (tmp_path / "x.elf").exists()


def test_isa_load_and_check(tmp_path):
    d = ember.isa.load()
    assert d.name == "ember-v1" and len(d.sha256) == 64
    assert d.json["name"] == "ember-v1" and d.peak_macs_per_cycle == 256
    assert os.path.samefile(d.file, ember.isa.default_path())
    bad = tmp_path / "bad.json"
    doc = dict(d.json)
    doc["hardware"] = dict(doc["hardware"], clock_hz=-5)
    import json
    bad.write_text(json.dumps(doc))
    with pytest.raises(ember.Error) as e:
        ember.isa.check(bad)
    assert "bad.json" in str(e.value) and "clock_hz" in str(e.value)


def test_html_report_of_the_last_npu_run(softmax_model, rng, tmp_path):
    prog = ember.compile(softmax_model)
    with pytest.raises(ember.Error):
        prog.write_html(tmp_path / "none.html")  # nothing ran yet
    prog.run(_input(prog, rng))
    page = tmp_path / "r.html"
    prog.write_html(page)
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "Roofline" in text and "Placement" in text
    assert "<script" not in text and "http" not in text.replace("http://www.w3.org", "")


def test_a_declared_input_no_output_depends_on_is_accepted(tmp_path, rng):
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "unused_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("extra", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = tmp_path / "unused.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    prog = ember.compile(path, target="interp")
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    want = np.maximum(x, 0)
    np.testing.assert_array_equal(prog.run({"x": x, "extra": np.zeros(4, np.float32)})["y"], want)
    np.testing.assert_array_equal(prog.run({"x": x})["y"], want)
    with pytest.raises(ember.Error) as e:
        prog.run({"x": x, "other": x})
    assert "no input named 'other'" in str(e.value)


def test_input_shapes_decide_a_dynamic_batch(dynamic_cnn_model, rng):
    prog = ember.compile(dynamic_cnn_model, input_shapes={"x": (3, 16, 8, 8)})
    assert prog.inputs[0]["shape"] == (3, 16, 8, 8)
    x = _input(prog, rng)
    sim = prog.run(x)
    assert sim["y"].shape == (3, 10)
    assert _all_bit_exact(ember.compare(sim, prog.run(x, device="interp")))
    # NumPy integers are whole numbers too.
    one = ember.compile(dynamic_cnn_model, target="interp",
                        input_shapes={"x": np.array([1, 16, 8, 8])})
    assert one.inputs[0]["shape"] == (1, 16, 8, 8)


def _numpy_cnn(model_file, x):
    """The dynamic CNN of conftest in float with NumPy (its weights read from the file)."""
    import onnx
    from onnx import numpy_helper
    w = {i.name: numpy_helper.to_array(i) for i in onnx.load(model_file).graph.initializer}
    pad = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    c = np.zeros((x.shape[0], 16, 8, 8), np.float64)
    for i in range(3):
        for j in range(3):
            c += np.einsum("nchw,oc->nohw", pad[:, :, i:i + 8, j:j + 8], w["w"][:, :, i, j])
    return np.maximum(c, 0).mean(axis=(2, 3)) @ w["fw"].T


def test_a_program_runs_other_batches_with_its_calibration(dynamic_cnn_model, rng):
    prog = ember.compile(dynamic_cnn_model, input_shapes={"x": (1, 16, 8, 8)})
    x3 = rng.uniform(-1, 1, (3, 16, 8, 8)).astype(np.float32)
    want = _numpy_cnn(dynamic_cnn_model, x3)
    for device in ("sim", "interp", "cpu"):
        y3 = prog.run({"x": x3}, device=device)["y"]  # compiled for batch 3 on first use
        assert y3.shape == (3, 10)
        for n in range(3):  # each image as the batch-1 program computes it, bit for bit
            assert np.array_equal(y3[n:n + 1], prog.run({"x": x3[n:n + 1]}, device=device)["y"])
        assert np.abs(y3 - want).max() < 0.05 * np.abs(want).max(), device
        assert np.array_equal(y3, prog.run({"x": x3}, device=device)["y"])  # kept, same
    check = prog.cross_check({"x": x3}, ["interp", "cpu", "sim"])
    assert check["agree"], check["table"]
    assert prog.inputs[0]["shape"] == (1, 16, 8, 8)  # the program itself is unchanged
    for device in ("sim", "interp"):  # a dimension the model fixes, refused before a copy
        with pytest.raises(ember.Error) as e:
            prog.run({"x": np.zeros((2, 4, 8, 8), np.float32)}, device=device)
        msg = str(e.value)
        assert "input 'x': has shape [2, 4, 8, 8], the program's input 'x' is " \
            "float32[1, 16, 8, 8]" in msg, msg
        assert "the model declares float32[?, 16, 8, 8] (another size where it says ?)" in msg
    fixed = ember.compile(dynamic_cnn_model, target="interp", input_shapes={"x": (1, 16, 8, 8)})
    assert fixed.run({"x": x3})["y"].shape == (3, 10)  # float programs too


def test_an_unknown_dimension_names_input_shapes(dynamic_cnn_model):
    with pytest.raises(ember.Error) as e:
        ember.compile(dynamic_cnn_model)
    msg = str(e.value)
    assert "input 'x': dimension 0 is unknown ('N')" in msg, msg
    assert "give its shape with input_shapes={'x': (1, 16, 8, 8)}" in msg, msg


def test_bad_input_shapes_are_refused(dynamic_cnn_model):
    cases = [
        ({"x": (0, 16, 8, 8)}, ember.UsageError,
         "input_shapes['x']: dimension 0 of input 'x' is 0; every dimension must be at least 1"),
        ({"x": (1, "16", 8, 8)}, ember.UsageError,
         "input_shapes['x']: dimension 1 of input 'x' is '16', not a whole number"),
        ({"x": 3}, ember.UsageError, "input_shapes['x']: expects a tuple of whole numbers"),
        ({"nope": (1, 16, 8, 8)}, ember.Error,
         "input_shapes['nope']=(1, 16, 8, 8): the model has no input named 'nope' "
         "(its inputs: x: float32[N, 16, 8, 8])"),
        ({"x": (1, 16, 8)}, ember.Error,
         "input_shapes['x']=(1, 16, 8): the shape has rank 3, the model's input 'x' is "
         "float32[N, 16, 8, 8] (rank 4)"),
        ({"x": (1, 4, 8, 8)}, ember.Error,
         "input_shapes['x']=(1, 4, 8, 8): dimension 1 is 4, but the model's input 'x' is "
         "float32[N, 16, 8, 8] (its dimension 1 is 16)"),
    ]
    for shapes, error, message in cases:
        with pytest.raises(error) as e:
            ember.compile(dynamic_cnn_model, input_shapes=shapes)
        assert message in str(e.value), (shapes, str(e.value))


def test_bind_folds_a_reshape_target(reshape_input_model):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    prog = ember.compile(reshape_input_model, target="interp",
                         bind={"shape": np.array([4, 6], np.int64)})
    assert [i["name"] for i in prog.inputs] == ["x"]
    y = prog.run({"x": x}, device="interp")["y"]
    assert y.shape == (4, 6) and np.array_equal(y, x.reshape(4, 6))
    with pytest.raises(ember.Unsupported) as e:
        ember.compile(reshape_input_model, target="interp")
    assert "it is the graph input 'shape': bind it to a constant with " \
        "bind={'shape': array}" in str(e.value), str(e.value)
    with pytest.raises(ember.Error) as e:
        ember.compile(reshape_input_model, target="interp",
                      bind={"shape": np.array([4, 6], np.int32)})
    assert "bind['shape']: the value is int32[2], the model's input 'shape' is int64[2]" \
        in str(e.value), str(e.value)
