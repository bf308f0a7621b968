#pragma once
// From the low-level IR to one LLVM module, shared by the JIT and the AOT bundles.
// Every buffer of the function lives in a region of the environment (EnvField): constant
// weights, and the repacked weights the units keep, in the constant region; inputs and
// outputs in the io region; activations in the activation region at the offsets of the
// low-level IR's static memory plan (views and in-place results included). Each compute
// instruction becomes one function `op.<i>.<name>(env, tid, nth)` emitted by its codegen
// unit, each copy a call of the copy kernel; `ember_run(env, tid, nth)` calls them in
// program order with a barrier between two.

#include "Codegen.h"

#include "ember/cpu/CpuBackend.h"
#include "ember/lir/IR.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

namespace ember::cpu {

/// Alignment of every buffer in every region.
inline constexpr size_t kRegionAlignment = 64;
/// The generated entry point: `void ember_run(ptr env, i64 tid, i64 nth)`.
inline constexpr const char* kRunSymbol = "ember_run";

/// An input or output of the function in the io region.
struct IoBuffer {
  std::string name; ///< placeholder or output name
  Type type;
  size_t offset = 0;
};

/// A run-time error site: the operation and what went wrong.
struct ErrorSite {
  std::string where, reason;
};

/// An operation's entry point, kept only when the module is generated for profiling.
struct OpEntry {
  std::string symbol; ///< `void(ptr env, i64 tid, i64 nth)`
  std::string name, kind;
  int64_t parts = 1; ///< the parts the operation is cut into (ModuleGen.cpp: partsOf)
};

/// The generated code and what a host needs to run it.
struct GeneratedModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module; ///< defines kRunSymbol, linked with libjit
  std::vector<uint8_t> constants;       ///< the constant region's bytes
  size_t ioBytes = 0;
  size_t activationBytes = 0;
  size_t scratchPerThread = 0;
  /// Inputs the code reads (module placeholders it does not read are not listed).
  std::vector<IoBuffer> inputs;
  /// Every placeholder name of the module (any may be given at run time).
  std::vector<std::string> knownInputs;
  std::vector<IoBuffer> outputs;
  std::vector<ErrorSite> errors; ///< one per error flag
  std::vector<OpEntry> ops;      ///< with `exportOps`: every operation, in program order
  CpuCompileStats stats;         ///< codegen time, sizes and counts (no JIT times)
};

/// Generates the module of `f`, which must verify. ember::Unsupported listing every
/// operation that no codegen unit supports, before anything is generated. With
/// `exportOps` every operation's function is an external symbol listed in `ops` (for
/// profiling; `ember_run` still calls them all).
GeneratedModule generateModule(const lir::Function& f, bool exportOps = false);

} // namespace ember::cpu
