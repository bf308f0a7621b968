#!/usr/bin/python3
"""Models whose graph inputs the command line must shape or bind (--input-shape, --input,
--bind), with PyTorch's and NumPy's outputs as references (not Ember's):

  /usr/bin/python3 gen_dynamic_models.py OUT_DIR

  dyn_cnn.onnx        a small CNN exported by torch.onnx.export with a dynamic batch axis
                      (dynamic_axes={"input": {0: "batch"}}), input [batch, 3, 16, 16];
                      x1.npy / x3.npy (batch 1 and 3) and PyTorch's outputs expected1.npy /
                      expected3.npy; x_rank3.npy, an input of the wrong rank
  reshape_bind.onnx   y = Reshape(x, shape) with `shape` a graph input (int64[2]);
                      x.npy [2, 3, 4], shape.npy [4, 6], shape_f32.npy (wrong kind),
                      reshape_expected.npy
  resize_bind.onnx    y = Resize(x, scales) (nearest) with `scales` a graph input
                      (float32[4]); rx.npy [1, 1, 2, 3], scales.npy [1, 1, 2, 2],
                      resize_expected.npy
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def export_cnn(out):
    torch.manual_seed(42)
    model = SmallCnn().eval()
    with torch.no_grad():  # BatchNorm statistics that are not the identity
        bn = model.features[1]
        bn.running_mean.uniform_(-0.2, 0.2)
        bn.running_var.uniform_(0.5, 1.5)
    x3 = torch.rand(3, 3, 16, 16) * 2 - 1
    x1 = x3[1:2].clone()
    path = os.path.join(out, "dyn_cnn.onnx")
    torch.onnx.export(model, x1, path + ".tmp", opset_version=13, input_names=["input"],
                      output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    os.replace(path + ".tmp", path)
    declared = onnx.load(path).graph.input[0].type.tensor_type.shape.dim[0]
    assert declared.dim_param == "batch", "the export did not keep the batch axis dynamic"
    with torch.no_grad():
        for name, x in (("1", x1), ("3", x3)):
            np.save(os.path.join(out, f"x{name}.npy"), x.numpy())
            np.save(os.path.join(out, f"expected{name}.npy"), model(x).numpy())
    np.save(os.path.join(out, "x_rank3.npy"), x3[0].numpy())


def save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def bind_models(out):
    p = lambda n: os.path.join(out, n)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    save(helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")], "reshape_bind",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])]), p("reshape_bind.onnx"))
    np.save(p("x.npy"), x)
    np.save(p("shape.npy"), np.array([4, 6], np.int64))
    np.save(p("shape_f32.npy"), np.array([4, 6], np.float32))
    np.save(p("reshape_expected.npy"), x.reshape(4, 6))

    rx = np.array([[[[1, -2, 3], [4, 5, -6]]]], np.float32)
    save(helper.make_graph(
        [helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", mode="nearest")],
        "resize_bind",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 3]),
         helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "c", "h", "w"])]),
        p("resize_bind.onnx"))
    np.save(p("rx.npy"), rx)
    np.save(p("scales.npy"), np.array([1, 1, 2, 2], np.float32))
    np.save(p("resize_expected.npy"), rx.repeat(2, axis=2).repeat(2, axis=3))


def main(out):
    os.makedirs(out, exist_ok=True)
    export_cnn(out)
    bind_models(out)
    print(f"gen_dynamic_models: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
