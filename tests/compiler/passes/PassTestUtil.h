#pragma once
/// \file
/// Helpers of the pass tests: a small graph builder with random constants, random
/// inputs, and the check that a pass keeps the float interpreter's results (the
/// unoptimised interpreter is the trusted reference).
#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"
#include "ember/graph/Verifier.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/passes/Pass.h"
#include "ember/passes/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace ember::passtest {

/// A tensor of uniform random floats in [lo, hi).
inline Tensor randomTensor(const Shape& dims, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(ElemKind::Float32, dims);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i)
    p[i] = dist(rng);
  return t;
}

/// A module with one function "main" and helpers to add inputs and constants.
struct G {
  Module m;
  Function* f = m.createFunction("main");
  std::mt19937 rng{1234};

  NodeValue input(const std::string& name, const Shape& dims) {
    return m.createPlaceholder(name, Type(ElemKind::Float32, dims))->result();
  }
  NodeValue constant(const std::string& name, const Shape& dims, float lo = -1.f, float hi = 1.f) {
    return m.createConstant(name, randomTensor(dims, rng, lo, hi))->result();
  }
  NodeValue constant(const std::string& name, Tensor t) {
    return m.createConstant(name, std::move(t))->result();
  }
  NodeValue scalar(const std::string& name, float v) {
    return m.createConstant(name, Tensor::scalar<float>(v))->result();
  }
  NodeValue node(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a = {}) {
    return f->create(k, name, std::move(in), std::move(a))->result();
  }
  void output(const std::string& name, NodeValue v) { f->addOutput(name, v); }

  /// Random values for every input of the function.
  TensorMap randomInputs() {
    TensorMap in;
    for (Node* p : f->inputs())
      in[p->name()] = randomTensor(p->resultType().dims, rng, -2.f, 2.f);
    return in;
  }
  TensorMap run(const TensorMap& in) { return createInterpreterBackend()->compile(*f)->run(in); }
  size_t count(NodeKind k) const {
    size_t c = 0;
    for (const auto& n : f->nodes())
      c += n->kind() == k;
    return c;
  }
};

/// max |a - b| <= tol * max(1, max |b|) for every output (b: the reference).
inline void expectClose(const TensorMap& got, const TensorMap& ref, double tol = 1e-5) {
  ASSERT_EQ(got.size(), ref.size());
  for (const auto& [name, r] : ref) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << name;
    const Tensor& g = it->second;
    ASSERT_EQ(g.dims(), r.dims()) << name;
    double maxRef = 1, maxDiff = 0;
    for (int64_t i = 0; i < r.size(); ++i) {
      maxRef = std::max(maxRef, std::fabs(r.getAsDouble(i)));
      const double d = std::fabs(g.getAsDouble(i) - r.getAsDouble(i));
      maxDiff = std::isnan(d) ? INFINITY : std::max(maxDiff, d);
    }
    EXPECT_LE(maxDiff, tol * maxRef) << "output " << name;
  }
}

/// Runs `g` on random inputs, applies `pass`, verifies, runs again and compares.
/// Returns the number of rewrites the pass reported.
inline size_t checkPassKeepsResults(G& g, const std::function<size_t(Function&)>& pass,
                                    double tol = 1e-5) {
  verifyOrThrow(*g.f);
  const TensorMap in = g.randomInputs();
  const TensorMap before = g.run(in);
  const size_t changed = pass(*g.f);
  EXPECT_TRUE(verifyFunction(*g.f).empty()) << verifyFunction(*g.f).front();
  expectClose(g.run(in), before, tol);
  return changed;
}

/// A backend that asks for every node to be lowered and runs on the interpreter.
class LowerAllBackend : public Backend {
public:
  explicit LowerAllBackend(std::function<bool(const Node&)> want = nullptr)
      : want_(std::move(want)) {}
  std::string name() const override { return "lower-all"; }
  bool supports(const Node& n) const override { return interpreterSupports(n); }
  std::string kindSupport(NodeKind k) const override {
    return createInterpreterBackend()->kindSupport(k);
  }
  bool shouldLower(const Node& n) const override { return !want_ || want_(n); }
  std::unique_ptr<CompiledFunction> compile(const Function& f) const override {
    return std::make_unique<Interpreter>(f);
  }

private:
  std::function<bool(const Node&)> want_;
};

inline Attrs attrs(std::initializer_list<std::pair<const std::string, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv)
    a.set(k, v);
  return a;
}

} // namespace ember::passtest
