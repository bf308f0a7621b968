#pragma once
/// \file
/// Helpers of the low-level IR tests: a small graph builder, random inputs, and the
/// bit-exact comparison of the LIR interpreter with the graph interpreter (a different
/// execution path over the same kernels: the reference).
#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/lir/IRGen.h"
#include "ember/lir/LirInterpreter.h"
#include "ember/lir/Passes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace ember::lirtest {

inline Tensor randomTensor(const Shape& dims, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  Tensor t(ElemKind::Float32, dims);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i)
    p[i] = dist(rng);
  return t;
}

/// A module with one function "main".
struct G {
  Module m;
  ember::Function* f = m.createFunction("main");
  std::mt19937 rng{42};

  NodeValue input(const std::string& name, const Shape& dims) {
    return m.createPlaceholder(name, Type(ElemKind::Float32, dims))->result();
  }
  NodeValue constant(const std::string& name, const Shape& dims) {
    return m.createConstant(name, randomTensor(dims, rng))->result();
  }
  NodeValue node(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a = {}) {
    return f->create(k, name, std::move(in), std::move(a))->result();
  }
  Node* multi(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a = {}) {
    return f->create(k, name, std::move(in), std::move(a));
  }
  void output(const std::string& name, NodeValue v) { f->addOutput(name, v); }
  TensorMap randomInputs() {
    TensorMap in;
    for (Node* p : f->inputs())
      in[p->name()] = randomTensor(p->resultType().dims, rng);
    return in;
  }
};

inline Attrs attrs(std::initializer_list<std::pair<const std::string, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv)
    a.set(k, v);
  return a;
}

/// "" when both maps hold the same names, types and bytes; else the first difference.
inline std::string bitDifference(const TensorMap& got, const TensorMap& ref) {
  if (got.size() != ref.size())
    return std::to_string(got.size()) + " outputs vs " + std::to_string(ref.size());
  for (const auto& [name, r] : ref) {
    auto it = got.find(name);
    if (it == got.end())
      return "no output " + name;
    const Tensor& g = it->second;
    if (g.kind() != r.kind() || g.dims() != r.dims())
      return name + ": " + g.type().toString() + " vs " + r.type().toString();
    if (r.sizeInBytes() && std::memcmp(g.raw(), r.raw(), r.sizeInBytes()) != 0) {
      for (int64_t i = 0; i < r.size(); ++i)
        if (g.getAsDouble(i) != r.getAsDouble(i) &&
            !(std::isnan(g.getAsDouble(i)) && std::isnan(r.getAsDouble(i))))
          return name + " element " + std::to_string(i) + ": " + std::to_string(g.getAsDouble(i)) +
                 " vs " + std::to_string(r.getAsDouble(i));
      return name + ": bytes differ (NaN payloads)";
    }
  }
  return "";
}

} // namespace ember::lirtest
