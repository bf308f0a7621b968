#pragma once
/// \file
/// Helpers of the pass tests: the shared graph builder, and the check that a pass keeps the float
/// interpreter's results (the unoptimised interpreter is the trusted reference).
#include "GraphBuilder.h"
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

using test::randomTensor;

/// The shared test graph builder (tests/compiler/common/GraphBuilder.h) and a run on the
/// float interpreter.
struct G : test::GraphBuilder {
  G() : GraphBuilder(1234) {}
  TensorMap run(const TensorMap& in) { return createInterpreterBackend()->compile(*f)->run(in); }
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
