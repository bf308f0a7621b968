#pragma once
/// \file
/// Helpers of the low-level IR tests: the shared graph builder, and the
/// bit-exact comparison of the LIR interpreter with the graph interpreter (a different
/// execution path over the same kernels: the reference).
#include "GraphBuilder.h"
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

/// Uniform random floats in [-2, 2).
inline Tensor randomTensor(const Shape& dims, std::mt19937& rng) {
  return test::randomTensor(dims, rng, -2.f, 2.f);
}

/// The shared test graph builder (tests/compiler/common/GraphBuilder.h), seeded for the
/// low-level IR tests.
struct G : test::GraphBuilder {
  G() : GraphBuilder(42) {}
};

using test::attrs;

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
