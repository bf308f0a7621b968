#pragma once
/// \file
/// Ahead-of-time bundles of the cpu backend: a model compiled once into a relocatable
/// object file for the host, to link into any C or C++ program with no Ember, LLVM or
/// C++ runtime at run time (the object needs only libc and libm).
///
/// A bundle named NAME is three files in one folder:
/// - `NAME.o`: the code, position independent, exporting `NAME_run`,
///   `NAME_run_thread`, `NAME_first_error` and `NAME_error_message`;
/// - `NAME.h`: the C header: the entry point, and the size of every memory region and
///   the offset, size, element type and shape of every input and output;
/// - `NAME.weights`: the constant region (weights, already repacked for the kernels),
///   to be loaded by the program into NAME_CONSTANT_BYTES of 64-byte aligned memory.
/// The program owns all memory: the constant region, the io region (inputs and outputs
/// at their offsets), the activation region and the scratch region, each 64-byte
/// aligned. `NAME_run` runs on the calling thread and returns 0, or k > 0 for run-time
/// error k (`NAME_error_message(k)` names the node and the reason); `NAME_run_thread` is
/// one thread's share of a run on threads the program owns (with its barrier).

#include "ember/graph/Graph.h"

#include <string>

namespace ember {

/// Options of a bundle.
struct BundleOptions {
  /// The bundle's name: file names and the C prefix of every symbol and macro (a C
  /// identifier; ember::Error otherwise).
  std::string name = "model";
};

/// What a bundle holds (the sizes are those in its header).
struct BundleInfo {
  std::string objectPath, headerPath, weightsPath;
  size_t constantBytes = 0, ioBytes = 0, activationBytes = 0, scratchBytes = 0;
  size_t objectBytes = 0;
  size_t nodes = 0;
  double seconds = 0; ///< whole compilation
};

/// Compiles `f` (float32 or quantized int8, as for the JIT) into a bundle in folder
/// `dir` (created if missing). Each file is written atomically; nothing is written when
/// compilation fails (ember::Unsupported lists every node the backend cannot compile).
BundleInfo emitBundle(const Function& f, const std::string& dir, const BundleOptions& opts = {});

} // namespace ember
