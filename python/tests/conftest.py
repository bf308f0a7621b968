"""Small ONNX models for the Python package's tests, built with onnx.helper (no torch:
they take milliseconds) into pytest's temporary folder."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper


def _save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


@pytest.fixture(scope="session")
def rng():
    return np.random.default_rng(2026)


@pytest.fixture(scope="session")
def cnn_model(tmp_path_factory, rng):
    """Conv(16->16, 3x3) + Relu + GlobalAveragePool + Flatten + Gemm(16->10): all NPU."""
    w = rng.uniform(-0.3, 0.3, (16, 16, 3, 3))
    b = rng.uniform(-0.1, 0.1, (16,))
    fw = rng.uniform(-0.5, 0.5, (10, 16))
    fb = rng.uniform(-0.1, 0.1, (10,))
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [_init("w", w), _init("b", b), _init("fw", fw), _init("fb", fb)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return _save(model, tmp_path_factory.mktemp("models") / "cnn.onnx")


@pytest.fixture(scope="session")
def softmax_model(tmp_path_factory, rng):
    """The CNN's head followed by a Softmax along a middle axis ([1, 2, 5], axis 1), which
    the NPU's normalize instructions cannot walk (they normalise along the channels, the
    last axis): partitioned."""
    w = rng.uniform(-0.3, 0.3, (16, 16, 3, 3))
    fw = rng.uniform(-0.5, 0.5, (16, 10))
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("MatMul", ["f", "fw"], ["m"]),
        helper.make_node("Reshape", ["m", "groups"], ["m3"]),
        helper.make_node("Softmax", ["m3"], ["y"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 5])],
        [_init("w", w), _init("fw", fw),
         numpy_helper.from_array(np.array([1, 2, 5], np.int64), "groups")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return _save(model, tmp_path_factory.mktemp("models") / "softmax.onnx")


@pytest.fixture(scope="session")
def mlp_model(tmp_path_factory, rng):
    """y = relu(x @ W1 + b1) @ W2: float, with its weights returned for a NumPy reference."""
    w1 = rng.uniform(-1, 1, (12, 20)).astype(np.float32)
    b1 = rng.uniform(-1, 1, (20,)).astype(np.float32)
    w2 = rng.uniform(-1, 1, (20, 5)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"]),
        helper.make_node("Add", ["h", "b1"], ["hb"]),
        helper.make_node("Relu", ["hb"], ["r"]),
        helper.make_node("MatMul", ["r", "w2"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])],
        [_init("w1", w1), _init("b1", b1), _init("w2", w2)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = _save(model, tmp_path_factory.mktemp("models") / "mlp.onnx")
    return path, (w1, b1, w2)


@pytest.fixture(scope="session")
def dynamic_cnn_model(tmp_path_factory, rng):
    """The CNN with a dynamic batch, as torch.onnx.export's dynamic_axes writes it: x is
    float32[N, 16, 8, 8], y float32[N, 10]."""
    w = rng.uniform(-0.3, 0.3, (16, 16, 3, 3))
    fw = rng.uniform(-0.5, 0.5, (10, 16))
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fw"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn_dynamic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        [_init("w", w), _init("fw", fw)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return _save(model, tmp_path_factory.mktemp("models") / "cnn_dynamic.onnx")


@pytest.fixture(scope="session")
def reshape_input_model(tmp_path_factory):
    """y = Reshape(x, shape) with the target `shape` a graph input (int64[2])."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return _save(model, tmp_path_factory.mktemp("models") / "reshape_input.onnx")
