#include "Jit.h"

#include "ember/support/Error.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <chrono>
#include <mutex>
#include <set>

namespace ember::cpu {

extern const unsigned char kLibjitBitcode[];
extern const size_t kLibjitBitcodeSize;

namespace {

void initTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string message(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

llvm::orc::JITTargetMachineBuilder hostBuilder() {
  initTargets();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    throw Error("cpu backend", "cannot describe the host CPU: " + message(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return std::move(*jtmb);
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

bool hostHasAvx512() {
  static const bool has = [] {
    const auto jtmb = hostBuilder();
    for (const std::string& f : jtmb.getFeatures().getFeatures())
      if (f == "+avx512f")
        return true;
    return false;
  }();
  return has;
}

bool hostHasAvx512Vnni() {
  static const bool has = [] {
    const auto jtmb = hostBuilder();
    int found = 0;
    for (const std::string& f : jtmb.getFeatures().getFeatures())
      found += f == "+avx512vnni" || f == "+avx512bw" || f == "+avx512vl";
    return found == 3;
  }();
  return has;
}

std::unique_ptr<llvm::Module> loadLibjit(llvm::LLVMContext& ctx) {
  auto buf = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char*>(kLibjitBitcode), kLibjitBitcodeSize),
      "libjit.bc", /*RequiresNullTerminator=*/false);
  auto m = llvm::parseBitcodeFile(buf->getMemBufferRef(), ctx);
  if (!m)
    throw Error("cpu backend",
                "cannot read the embedded libjit bitcode: " + message(m.takeError()));
  return std::move(*m);
}

namespace {

/// Host attributes, internalisation, verification and O3 (see Jit.h).
void optimizeForHost(llvm::Module& m, llvm::TargetMachine& tm,
                     const std::vector<std::string>& keep) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(tm.getTargetTriple().str());

  // The bitcode was compiled for a generic CPU: every function gets the host's CPU and
  // features instead, so the O3 pipeline vectorises for the host's registers.
  const std::string cpu = tm.getTargetCPU().str();
  const std::string features = tm.getTargetFeatureString().str();
  const bool wide = hostHasAvx512();
  for (llvm::Function& f : m) {
    if (f.isDeclaration())
      continue;
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
    f.addFnAttr("target-cpu", cpu);
    f.addFnAttr("target-features", features);
    if (wide) {
      f.addFnAttr("prefer-vector-width", "512");
      f.addFnAttr("min-legal-vector-width", "512");
    }
  }
  const std::set<std::string> keepSet(keep.begin(), keep.end());
  llvm::internalizeModule(
      m, [&](const llvm::GlobalValue& gv) { return keepSet.count(gv.getName().str()) != 0; });
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es))
    throw Error("cpu backend", "generated LLVM IR is invalid: " + es.str());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  // Kernels the model does not call go first, so that O3 works on the used ones only.
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.addPass(pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3));
  mpm.run(m, mam);
}

} // namespace

std::string compileToHostObject(std::unique_ptr<llvm::Module> m,
                                const std::vector<std::string>& keep, double* optimizeSeconds) {
  const auto t0 = std::chrono::steady_clock::now();
  llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  auto tm = jtmb.createTargetMachine();
  if (!tm)
    throw Error("cpu backend", "no target machine for the host: " + message(tm.takeError()));
  optimizeForHost(*m, **tm, keep);
  *optimizeSeconds = since(t0);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw Error("cpu backend", "the host target cannot emit object files");
  pm.run(*m);
  return std::string(buffer.begin(), buffer.end());
}

JitModule::JitModule(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                     const std::vector<std::string>& keep, double* optimizeSeconds,
                     double* jitSeconds) {
  auto t0 = std::chrono::steady_clock::now();
  llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  auto tm = jtmb.createTargetMachine();
  if (!tm)
    throw Error("cpu backend", "no target machine for the host: " + message(tm.takeError()));
  optimizeForHost(*m, **tm, keep);
  *optimizeSeconds = since(t0);

  t0 = std::chrono::steady_clock::now();
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit)
    throw Error("cpu backend", "cannot create the JIT: " + message(jit.takeError()));
  jit_ = std::move(*jit);
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit_->getDataLayout().getGlobalPrefix());
  if (!gen)
    throw Error("cpu backend", "cannot resolve host symbols: " + message(gen.takeError()));
  jit_->getMainJITDylib().addGenerator(std::move(*gen));
  if (auto e = jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    throw Error("cpu backend", "cannot add the module to the JIT: " + message(std::move(e)));
  for (const std::string& name : keep)
    lookup(name); // compiles now, so that run() measures only running
  *jitSeconds = since(t0);
}

JitModule::~JitModule() = default;

void* JitModule::lookup(const std::string& name) {
  auto sym = jit_->lookup(name);
  if (!sym)
    throw Error("cpu backend", "JIT symbol '" + name + "': " + message(sym.takeError()));
  return sym->toPtr<void*>();
}

} // namespace ember::cpu
