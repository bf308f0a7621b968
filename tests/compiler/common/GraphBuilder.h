#pragma once
/// \file
/// The one graph builder of the compiler's tests (passes, low-level IR, interpreter
/// operators, cpu, npu and the operator table): a module with one function under
/// construction, float placeholders and random constants, nodes with inferred types,
/// and the int8 pieces the NPU tests build by hand (quantized inputs, per-channel int8
/// weights, int32 biases, int8 nodes of given parameters, dequantized outputs). Each
/// folder's helper header derives its `G` from it with its own seed.

#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"

#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace ember::test {

/// Attributes of integer lists, e.g. ints({{"perm", {1, 0, 2}}}).
inline Attrs ints(std::initializer_list<std::pair<const char*, std::vector<int64_t>>> l) {
  Attrs a;
  for (const auto& [k, v] : l)
    a.set(k, v);
  return a;
}

/// A tensor of uniform random floats in [lo, hi).
inline Tensor randomTensor(const Shape& dims, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(ElemKind::Float32, dims);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i)
    p[i] = dist(rng);
  return t;
}

/// Per-tensor quantization parameters.
inline QuantParams perTensor(float scale, int32_t zeroPoint) {
  QuantParams q;
  q.scales = {scale};
  q.zeroPoints = {zeroPoint};
  return q;
}

/// Attributes from a brace list: attrs({{"axis", int64_t(1)}, {"pads", {...}}}).
inline Attrs attrs(std::initializer_list<std::pair<const std::string, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv)
    a.set(k, v);
  return a;
}

/// A module with one function ("main") under construction.
class GraphBuilder {
public:
  /// `seed` seeds every random constant and input; inputs are uniform in
  /// [inputLo, inputHi).
  explicit GraphBuilder(unsigned seed = 1234, float inputLo = -2.f, float inputHi = 2.f)
      : rng(seed), inputLo_(inputLo), inputHi_(inputHi) {}
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  Module m;
  Function* f = m.createFunction("main");
  std::mt19937 rng;

  // --- float graphs ---
  NodeValue input(const std::string& name, const Shape& dims) {
    return placeholder(name, Type(ElemKind::Float32, dims));
  }
  NodeValue placeholder(const std::string& name, const Type& t) {
    return m.createPlaceholder(name, t)->result();
  }
  /// A constant of uniform random floats in [lo, hi).
  NodeValue constant(const std::string& name, const Shape& dims, float lo = -1.f, float hi = 1.f) {
    return m.createConstant(name, randomTensor(dims, rng, lo, hi))->result();
  }
  NodeValue constant(const std::string& name, Tensor t) {
    return m.createConstant(name, std::move(t))->result();
  }
  NodeValue scalar(const std::string& name, float v) {
    return m.createConstant(name, Tensor::scalar<float>(v))->result();
  }
  /// A node with inferred result types; its first result.
  NodeValue node(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a = {}) {
    return f->create(k, name, std::move(in), std::move(a))->result();
  }
  /// A node of several results.
  Node* multi(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a = {}) {
    return f->create(k, name, std::move(in), std::move(a));
  }
  void output(const std::string& name, NodeValue v) { f->addOutput(name, v); }

  /// Random values for every input of the function (float: uniform in the builder's
  /// input range; integer and boolean inputs: codes of their kind's whole range).
  TensorMap randomInputs() {
    TensorMap in;
    for (Node* p : f->inputs()) {
      const Type& t = p->resultType();
      if (t.kind == ElemKind::Float32) {
        in[p->name()] = randomTensor(t.dims, rng, inputLo_, inputHi_);
        continue;
      }
      Tensor x(t);
      std::uniform_int_distribution<int> d(t.kind == ElemKind::Bool ? 0 : -128,
                                           t.kind == ElemKind::Bool ? 1 : 127);
      for (int64_t i = 0; i < x.size(); ++i)
        x.setFromDouble(i, d(rng));
      in[p->name()] = std::move(x);
    }
    return in;
  }
  /// How many nodes of kind `k` the function has.
  size_t count(NodeKind k) const {
    size_t c = 0;
    for (const auto& n : f->nodes())
      c += n->kind() == k;
    return c;
  }

  // --- int8 graphs built by hand ---
  /// A float placeholder quantized to int8 with (scale, zeroPoint).
  NodeValue quantizedInput(const std::string& name, const Shape& dims, float scale,
                           int32_t zeroPoint) {
    NodeValue ph = input(name, dims);
    return f
        ->create(NodeKind::QuantizeLinear, name + "_q", {ph}, {},
                 std::vector<Type>{Type(ElemKind::Int8, dims, perTensor(scale, zeroPoint))})
        ->result();
  }
  /// An int8 node whose result has shape `dims` and parameters (scale, zeroPoint).
  NodeValue int8Node(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a,
                     Shape dims, float scale, int32_t zeroPoint) {
    return f
        ->create(
            k, name, std::move(in), std::move(a),
            std::vector<Type>{Type(ElemKind::Int8, std::move(dims), perTensor(scale, zeroPoint))})
        ->result();
  }
  /// A random int8 constant in [-lim, lim] with per-channel scales along `axis` (zero
  /// points 0).
  NodeValue int8Weights(const std::string& name, const Shape& dims, int axis, int lim = 127) {
    Tensor t(ElemKind::Int8, dims);
    std::uniform_int_distribution<int> d(-lim, lim);
    for (int64_t i = 0; i < t.size(); ++i)
      t.data<int8_t>()[i] = static_cast<int8_t>(d(rng));
    QuantParams q;
    std::uniform_real_distribution<float> sd(0.002f, 0.02f);
    for (int64_t k = 0; k < dims[size_t(axis)]; ++k) {
      q.scales.push_back(sd(rng));
      q.zeroPoints.push_back(0);
    }
    q.axis = axis;
    t.mutableType().quant = q;
    return m.createConstant(name, t)->result();
  }
  /// A random int32 bias of `k` values in [-lim, lim].
  NodeValue int32Bias(const std::string& name, int64_t k, int lim = 3000) {
    Tensor t(ElemKind::Int32, {k});
    std::uniform_int_distribution<int> d(-lim, lim);
    for (int64_t i = 0; i < k; ++i)
      t.data<int32_t>()[i] = d(rng);
    return m.createConstant(name, t)->result();
  }
  /// Dequantizes `v` into function output `name`.
  void dequantizedOutput(const std::string& name, NodeValue v) {
    f->addOutput(name, f->create(NodeKind::DequantizeLinear, name + "_dq", {v})->result());
  }

private:
  float inputLo_, inputHi_;
};

} // namespace ember::test
