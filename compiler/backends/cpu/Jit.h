#pragma once
// The LLVM side of the cpu backend: loading the embedded libjit bitcode, preparing the
// generated module for the host (target attributes, internalisation), optimising it (the
// O3 pipeline) and compiling it: for the JIT in partitions on several threads, through
// the object cache (Partition.h, ObjectCache.h), then linked by ORC LLJIT; for AOT
// bundles as one relocatable object file.

#include "ember/cpu/CpuBackend.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
}

namespace ember::cpu {

/// Whether the host CPU has AVX-512F (the GEMM kernels pick their register blocking).
bool hostHasAvx512();

/// How the int8 convolutions and Gemm add the products of four bytes into an int32 lane
/// (libjit/Int8Vnni.cpp), best first; Portable is libjit/Int8.cpp's clang vectors.
enum class Int8Isa { Vnni, Avx512Bw, Avx2, Portable };

/// The name of `isa` as $EMBER_CPU_INT8_ISA spells it: "vnni", "avx512bw", "avx2",
/// "portable".
const char* int8IsaName(Int8Isa isa);

/// The int8 kernels' instruction set for a compilation: $EMBER_CPU_INT8_ISA when set
/// (read at every call, so a process may compile under several), else the best the host
/// has. Throws ember::Error for an unknown name or one the host cannot run.
Int8Isa int8Isa();

/// The names of the int8 instruction sets the host runs, best first (cpuInt8Isas()).
std::vector<std::string> int8IsaNames();

/// Whether the interpreter's GEMM core (interpreter/kernels/GemmCore.cpp) rounds each
/// multiply-add once (FMA) on this host: its AVX-512 and AVX2+FMA micro-kernels do, its
/// generic one does not, and EMBER_GEMM_ISA ("avx512", "avx2", "generic") narrows the
/// choice as it does there. The kernels that repeat the interpreter's arithmetic
/// (libjit/ConvNd.cpp) follow it.
bool interpreterGemmFuses();

/// Parses the embedded libjit bitcode into a new module of `ctx`.
std::unique_ptr<llvm::Module> loadLibjit(llvm::LLVMContext& ctx);

/// Specialises and optimises `m` for the host (every function but the `keep` symbols
/// internal, the O3 pipeline) and emits it as a relocatable, position-independent object
/// file. The optimisation time goes to `optimizeSeconds`.
std::string compileToHostObject(std::unique_ptr<llvm::Module> m,
                                const std::vector<std::string>& keep, double* optimizeSeconds);

/// How a JitModule is compiled.
struct JitOptions {
  int compileThreads = 1;  ///< threads that optimise and compile partitions (>= 1)
  bool memoryCache = true; ///< the process-wide object cache
  std::string cacheDir;    ///< disk cache folder ("" = none)
};

/// A JIT-compiled module.
class JitModule {
public:
  /// Specialises `m` for the host (every function but the `keep` symbols internal),
  /// splits it into partitions, takes each partition's object from the cache or
  /// optimises (O3) and compiles it, and links the objects. Timings, partition and
  /// cache counts go to `stats` (its codegen and node fields are left alone).
  JitModule(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
            const std::vector<std::string>& keep, const JitOptions& opts, CpuCompileStats& stats);
  ~JitModule();
  /// Address of an external symbol of the module (ember::Error if absent).
  void* lookup(const std::string& name);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace ember::cpu
