#pragma once
// Helpers of the cpu backend tests: the shared graph builder, and comparisons with the
// interpreter (the reference).
#include "GraphBuilder.h"
#include "OutputCompare.h"
#include "ember/cpu/CpuBackend.h"
#include "ember/graph/Graph.h"
#include "ember/interpreter/Interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace ember::cputest {

using test::randomTensor;

/// The shared test graph builder (tests/compiler/common/GraphBuilder.h), seeded for the
/// cpu tests.
struct G : test::GraphBuilder {
  G() : GraphBuilder(4321) {}
};

using test::compareOutputs;
/// The cpu tests' name for compareOutputs.
inline std::string compare(const TensorMap& got, const TensorMap& ref, double tol) {
  return compareOutputs(got, ref, tol);
}

/// Runs f on the cpu backend with `threads` threads.
inline TensorMap runCpu(const Function& f, const TensorMap& in, int threads) {
  return createCpuBackend(CpuOptions{threads})->compile(f)->run(in);
}

} // namespace ember::cputest
