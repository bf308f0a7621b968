#pragma once
/// \file
/// The LLVM CPU backend ("cpu"): the host-side twin of the NPU. A graph function goes
/// through the low-level IR (schedule, IR passes, static memory plan) and is compiled
/// into LLVM IR that calls the libjit kernels (compiler/backends/cpu/libjit, embedded as
/// bitcode) with the model's static shapes as constants and every buffer as an offset
/// into a region of the generated code's environment; the module is specialised,
/// optimised for the host CPU (O3, the host's vector extensions) and JIT-compiled with
/// ORC LLJIT (or written as an AOT bundle, ember/cpu/Bundle.h). The JIT compiles the
/// module in partitions on several threads and keeps their machine code in a cache
/// keyed by content (in memory, and on disk; see CpuOptions). Heavy kernels split their
/// outer loop over `threads` threads; results do not depend on the thread count.

#include "ember/backend/Backend.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember {

/// Options of the cpu backend.
struct CpuOptions {
  CpuOptions() = default;
  /// `threads` run-time threads, every other option at its default.
  explicit CpuOptions(int runThreads) : threads(runThreads) {}

  /// Threads that run a compiled function (>= 1); 0 = $EMBER_NUM_THREADS, else 1.
  int threads = 0;
  /// Threads that compile the module's partitions (>= 1); 0 = $EMBER_JIT_THREADS, else
  /// the host's hardware threads. The machine code does not depend on it.
  int compileThreads = 0;
  /// Whether compiled objects are shared through the process-wide memory cache (an
  /// identical partition is compiled once per process).
  bool memoryCache = true;
  /// The disk cache of compiled objects: "" = $EMBER_JIT_CACHE_DIR if set, else
  /// $XDG_CACHE_HOME/ember/jit or ~/.cache/ember/jit; "off" (here or in the variable) =
  /// none; anything else is the folder.
  std::string cacheDir;
  /// Times every operation of every run (CpuCompiledFunction::profile): the generated
  /// code keeps an entry point per operation and run() calls them one after the other
  /// on the thread team, each timed. The machine code of the operations is the same; a
  /// run costs one team dispatch per operation more (a few microseconds each).
  bool profile = false;
};

/// One operation's share of a profiled run (CpuOptions::profile).
struct CpuOpTime {
  std::string name;   ///< the graph node's name ("copy" operations: the copied value's)
  std::string kind;   ///< its kind (Conv, Gemm, ...) or "copy"
  double seconds = 0; ///< wall time of its last run, all threads
  /// The parts it is cut into, fixed at compile time by the model alone (the threads take
  /// them; docs/compiler/cpu-backend.md, "Threads").
  int64_t parts = 1;
};

/// Timings of one compilation, for tools and benches.
struct CpuCompileStats {
  double codegenSeconds = 0;   ///< graph -> LLVM IR (with the libjit bitcode loaded)
  double splitSeconds = 0;     ///< host attributes, partitions, cache keys and look-ups
  double optimizeSeconds = 0;  ///< the O3 pipeline, summed over the partitions compiled
  double jitSeconds = 0;       ///< machine code generation, summed over those partitions
  double compileSeconds = 0;   ///< wall time of optimisation + machine code (in parallel)
  double linkSeconds = 0;      ///< linking the objects in LLJIT
  size_t arenaBytes = 0;       ///< activations (static memory plan)
  size_t packedBytes = 0;      ///< weights repacked for the GEMM kernels
  size_t nodes = 0;            ///< nodes with code (views excluded)
  size_t kernelInstances = 0;  ///< distinct specialised kernel instances they call
  size_t partitions = 0;       ///< modules the code was split into (Partition.h)
  size_t cachedPartitions = 0; ///< of which the object cache had the machine code
  int compileThreads = 0;      ///< threads that compiled the others (0: all cached)
  int threads = 1;
};

/// The backend's compiled function: a CompiledFunction plus its compile statistics.
class CpuCompiledFunction : public CompiledFunction {
public:
  virtual const CpuCompileStats& stats() const = 0;
  /// With CpuOptions::profile: every operation of the last run, in program order, with
  /// its wall time; else empty.
  virtual const std::vector<CpuOpTime>& profile() const = 0;
};

/// The instruction sets of the int8 convolution and Gemm kernels this host runs, best
/// first, as $EMBER_CPU_INT8_ISA names them: "vnni" (vpdpbusd), "avx512bw" and "avx2"
/// (vpmaddwd on 16-bit pairs), "portable" (clang vectors). Unset, the variable means the
/// first; whichever runs, the results are the same bits (docs/compiler/cpu-kernels.md).
std::vector<std::string> cpuInt8Isas();

/// The cpu backend with the given options.
std::unique_ptr<Backend> createCpuBackend(const CpuOptions& opts);
/// The cpu backend with default options (for the backend registry).
std::unique_ptr<Backend> createCpuBackend();

} // namespace ember
