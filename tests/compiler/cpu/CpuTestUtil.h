#pragma once
// Helpers of the cpu backend tests: a small graph builder with random constants and
// inputs, and comparisons with the interpreter (the reference).
#include "ember/cpu/CpuBackend.h"
#include "ember/graph/Graph.h"
#include "ember/interpreter/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ember::cputest {

inline Tensor randomTensor(const Shape& dims, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  Tensor t(ElemKind::Float32, dims);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.size(); ++i)
    p[i] = dist(rng);
  return t;
}

/// A module with one function and helpers to add inputs, constants and nodes.
struct G {
  Module m;
  Function* f = m.createFunction("main");
  std::mt19937 rng{4321};

  NodeValue input(const std::string& name, const Shape& dims) {
    return m.createPlaceholder(name, Type(ElemKind::Float32, dims))->result();
  }
  NodeValue constant(const std::string& name, const Shape& dims) {
    return m.createConstant(name, randomTensor(dims, rng))->result();
  }
  NodeValue constant(const std::string& name, Tensor t) {
    return m.createConstant(name, std::move(t))->result();
  }
  NodeValue node(NodeKind k, const std::string& name, std::vector<NodeValue> in, Attrs a = {}) {
    return f->create(k, name, std::move(in), std::move(a))->result();
  }
  void output(const std::string& name, NodeValue v) { f->addOutput(name, v); }
  TensorMap randomInputs() {
    TensorMap in;
    for (Node* p : f->inputs())
      in[p->name()] = randomTensor(p->resultType().dims, rng, -2.f, 2.f);
    return in;
  }
};

/// "" when every output agrees within tol * max(1, max |ref|) (NaN where the reference
/// has NaN; integers and booleans exactly), else the first difference.
inline std::string compare(const TensorMap& got, const TensorMap& ref, double tol) {
  for (const auto& [name, r] : ref) {
    auto it = got.find(name);
    if (it == got.end())
      return "missing output " + name;
    const Tensor& g = it->second;
    if (g.type().kind != r.type().kind || g.dims() != r.dims())
      return name + ": type " + g.type().toString() + " vs " + r.type().toString();
    double maxRef = 1;
    for (int64_t i = 0; i < r.size(); ++i)
      if (std::isfinite(r.getAsDouble(i)))
        maxRef = std::max(maxRef, std::fabs(r.getAsDouble(i)));
    const double bound = r.kind() == ElemKind::Float32 ? tol * maxRef : 0.0;
    for (int64_t i = 0; i < r.size(); ++i) {
      const double a = g.getAsDouble(i), b = r.getAsDouble(i);
      const bool bad =
          std::isnan(b) ? !std::isnan(a) : (std::isinf(b) ? a != b : !(std::fabs(a - b) <= bound));
      if (bad)
        return name + " element " + std::to_string(i) + ": " + std::to_string(a) + " vs " +
               std::to_string(b) + " (bound " + std::to_string(bound) + ")";
    }
  }
  return "";
}

/// Runs f on the cpu backend with `threads` threads.
inline TensorMap runCpu(const Function& f, const TensorMap& in, int threads) {
  return createCpuBackend(CpuOptions{threads})->compile(f)->run(in);
}

} // namespace ember::cputest
