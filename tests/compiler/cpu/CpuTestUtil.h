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
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

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

/// Runs f on the cpu backend with `threads` threads and every node cut into `parts`
/// parts ($EMBER_CPU_PARTS while it compiles; ModuleGen.cpp): the threads then share
/// even the small nodes, unevenly when parts is not a multiple of threads.
inline TensorMap runCpuInParts(const Function& f, const TensorMap& in, int threads, int parts) {
  const std::string value = std::to_string(parts);
  setenv("EMBER_CPU_PARTS", value.c_str(), 1);
  std::unique_ptr<CompiledFunction> cf;
  try {
    cf = createCpuBackend(CpuOptions{threads})->compile(f);
  } catch (...) {
    unsetenv("EMBER_CPU_PARTS");
    throw;
  }
  unsetenv("EMBER_CPU_PARTS");
  return cf->run(in);
}

} // namespace ember::cputest
