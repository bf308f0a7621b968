#pragma once
/// \file
/// The LLVM CPU backend ("cpu"): the host-side twin of the NPU. A graph function goes
/// through the low-level IR (schedule, IR passes, static memory plan) and is compiled
/// into LLVM IR that calls the libjit kernels (compiler/backends/cpu/libjit, embedded as
/// bitcode) with the model's static shapes as constants and every buffer as an offset
/// into a region of the generated code's environment; the module is specialised,
/// optimised for the host CPU (O3, the host's vector extensions) and JIT-compiled with
/// ORC LLJIT (or written as an AOT bundle, ember/cpu/Bundle.h). Heavy kernels split
/// their outer loop over `threads` threads; results do not depend on the thread count.

#include "ember/backend/Backend.h"

#include <memory>

namespace ember {

/// Options of the cpu backend.
struct CpuOptions {
  /// Threads that run a compiled function (>= 1); 0 = $EMBER_NUM_THREADS, else 1.
  int threads = 0;
};

/// Timings of one compilation, for tools and benches.
struct CpuCompileStats {
  double codegenSeconds = 0;  ///< graph -> LLVM IR (with the libjit bitcode loaded)
  double optimizeSeconds = 0; ///< the O3 pipeline for the host
  double jitSeconds = 0;      ///< machine code generation by LLJIT
  size_t arenaBytes = 0;      ///< activations (static memory plan)
  size_t packedBytes = 0;     ///< weights repacked for the GEMM kernels
  size_t nodes = 0;           ///< nodes with code (views excluded)
  size_t kernelInstances = 0; ///< distinct specialised kernel instances they call
  int threads = 1;
};

/// The backend's compiled function: a CompiledFunction plus its compile statistics.
class CpuCompiledFunction : public CompiledFunction {
public:
  virtual const CpuCompileStats& stats() const = 0;
};

/// The cpu backend with the given options.
std::unique_ptr<Backend> createCpuBackend(const CpuOptions& opts);
/// The cpu backend with default options (for the backend registry).
std::unique_ptr<Backend> createCpuBackend();

} // namespace ember
