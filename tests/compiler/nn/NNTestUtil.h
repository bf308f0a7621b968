#pragma once
/// \file
/// Helpers shared by the NN operator tests: reading the reference tensors that the
/// Python generators write, and running one node on the interpreter.
#include "GraphBuilder.h"
#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/interpreter/Interpreter.h"

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::nntest {

/// Reads a .bin written by gen_nn_refs.py / gen_nn_onnx.py: int64 rank, int64 dims,
/// float32 data. Throws naming the file (and the generator to run) when it is absent.
inline Tensor readBin(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot open " + path + " (run the tests' generator scripts)");
  int64_t rank = 0;
  f.read(reinterpret_cast<char*>(&rank), sizeof rank);
  Shape dims(static_cast<size_t>(rank));
  f.read(reinterpret_cast<char*>(dims.data()), static_cast<std::streamsize>(rank * 8));
  Tensor t(ElemKind::Float32, dims);
  f.read(reinterpret_cast<char*>(t.raw()), static_cast<std::streamsize>(t.sizeInBytes()));
  if (!f)
    throw std::runtime_error("truncated " + path);
  return t;
}

/// Builds a one-node function over placeholders in0, in1, ... for `inputs`, runs it on
/// the interpreter and returns its results as out0, out1, ...
inline TensorMap runNode(NodeKind kind, const Attrs& a, const std::vector<Tensor>& inputs,
                         int numOutputs = 1) {
  test::GraphBuilder g;
  std::vector<NodeValue> ins;
  TensorMap feed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    ins.push_back(g.placeholder(name, inputs[i].type()));
    feed[name] = inputs[i];
  }
  Node* n = g.multi(kind, "node", ins, a);
  for (int j = 0; j < numOutputs; ++j)
    g.output("out" + std::to_string(j), n->result(static_cast<unsigned>(j)));
  return createInterpreterBackend()->compile(*g.f)->run(feed);
}

/// runNode for a single-result node: returns that result.
inline Tensor run1(NodeKind kind, const Attrs& a, const std::vector<Tensor>& inputs) {
  return runNode(kind, a, inputs, 1).at("out0");
}

} // namespace ember::nntest
