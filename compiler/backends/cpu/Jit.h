#pragma once
// The LLVM side of the cpu backend: loading the embedded libjit bitcode, preparing the
// generated module for the host (target attributes, internalisation, the O3 pipeline),
// and JIT-compiling it with ORC LLJIT or writing it as an object file (AOT bundles).

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

/// Whether the host CPU has AVX512-VNNI, BW and VL (the int8 convolution uses vpdpbusd).
bool hostHasAvx512Vnni();

/// Parses the embedded libjit bitcode into a new module of `ctx`.
std::unique_ptr<llvm::Module> loadLibjit(llvm::LLVMContext& ctx);

/// Specialises and optimises `m` for the host (every function but the `keep` symbols
/// internal, the O3 pipeline) and emits it as a relocatable, position-independent object
/// file. The optimisation time goes to `optimizeSeconds`.
std::string compileToHostObject(std::unique_ptr<llvm::Module> m,
                                const std::vector<std::string>& keep, double* optimizeSeconds);

/// A JIT-compiled module.
class JitModule {
public:
  /// Specialises and optimises `m` for the host (every function but the `keep`
  /// symbols internal, O3) and compiles it. Timings go to the two pointers.
  JitModule(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
            const std::vector<std::string>& keep, double* optimizeSeconds, double* jitSeconds);
  ~JitModule();
  /// Address of an external symbol of the module (ember::Error if absent).
  void* lookup(const std::string& name);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace ember::cpu
