#include "Jit.h"

#include "ObjectCache.h"
#include "Partition.h"

#include "ember/support/Error.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
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

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

namespace ember::cpu {

extern const unsigned char kLibjitBitcode[];
extern const size_t kLibjitBitcodeSize;

namespace {

/// Instance partitions a module is split into at most (Partition.h): a constant, so that
/// the partitions, and so the cache keys, do not depend on the compile thread count.
constexpr size_t kMaxPartitions = 8;
/// Changes whenever the way objects are made changes without a visible trace in the
/// signature below (it holds the pass pipeline, levels and target).
constexpr const char* kObjectFormat = "ember-jit-object-1";

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

/// The host's target: its CPU and features, position-independent code of the small code
/// model (what JITLink links and bundles need), code generation at `Aggressive`.
llvm::orc::JITTargetMachineBuilder hostBuilder() {
  initTargets();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    throw Error("cpu backend", "cannot describe the host CPU: " + message(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  return std::move(*jtmb);
}

std::unique_ptr<llvm::TargetMachine> targetMachine(llvm::orc::JITTargetMachineBuilder& jtmb) {
  auto tm = jtmb.createTargetMachine();
  if (!tm)
    throw Error("cpu backend", "no target machine for the host: " + message(tm.takeError()));
  return std::move(*tm);
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Runs `build(pb)`'s module pipeline on `m` with `tm`'s analyses.
template <typename Build> void runPipeline(llvm::Module& m, llvm::TargetMachine& tm, Build build) {
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
  llvm::ModulePassManager mpm = build(pb);
  mpm.run(m, mam);
}

/// The optimisation pipeline of every module the backend compiles.
llvm::ModulePassManager optimizationPipeline(llvm::PassBuilder& pb) {
  return pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
}

/// Host attributes, internalisation, verification, and the kernels the model does not
/// call dropped (GlobalDCE), so that the optimiser works on the used ones only.
void prepareForHost(llvm::Module& m, llvm::TargetMachine& tm,
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
  runPipeline(m, tm, [](llvm::PassBuilder&) {
    llvm::ModulePassManager mpm;
    mpm.addPass(llvm::GlobalDCEPass());
    return mpm;
  });
}

std::string emitObject(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw Error("cpu backend", "the host target cannot emit object files");
  pm.run(m);
  return std::string(buffer.begin(), buffer.end());
}

/// Optimises and compiles one partition in a context of its own (any thread).
std::string compilePartition(const std::string& bitcode, llvm::orc::JITTargetMachineBuilder jtmb,
                             double* optimizeSeconds, double* machineCodeSeconds) {
  llvm::LLVMContext ctx;
  auto m = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "partition"), ctx);
  if (!m)
    throw Error("cpu backend", "cannot read a module partition: " + message(m.takeError()));
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(jtmb);
  auto t0 = std::chrono::steady_clock::now();
  runPipeline(**m, *tm, optimizationPipeline);
  *optimizeSeconds = since(t0);
  t0 = std::chrono::steady_clock::now();
  std::string object = emitObject(**m, *tm);
  *machineCodeSeconds = since(t0);
  return object;
}

/// A partition, its cache key and (once found or compiled) its object.
struct Job {
  const ModulePartition* part;
  std::string key;
  std::shared_ptr<const std::string> object;
};

/// Compiles the jobs without an object on up to `threads` threads (largest first) and
/// stores them in `cache`; the first failure is rethrown once all threads have stopped.
void compileJobs(std::vector<Job*> jobs, int threads, const ObjectCache& cache,
                 CpuCompileStats& st) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job* a, const Job* b) {
    return a->part->instructions > b->part->instructions;
  });
  const llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      try {
        double opt = 0, mc = 0;
        auto object = std::make_shared<const std::string>(
            compilePartition(jobs[i]->part->bitcode, jtmb, &opt, &mc));
        cache.store(jobs[i]->key, object);
        std::lock_guard<std::mutex> lock(mu);
        jobs[i]->object = std::move(object);
        st.optimizeSeconds += opt;
        st.jitSeconds += mc;
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure)
          failure = std::current_exception();
        next = jobs.size();
      }
    }
  };
  const size_t helpers = std::min<size_t>(size_t(std::max(threads, 1)), jobs.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < helpers; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread& t : pool)
    t.join();
  st.compileThreads = int(std::max<size_t>(helpers, 1));
  if (failure)
    std::rethrow_exception(failure);
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

namespace {

/// The int8 instruction sets the host runs, best first (Portable always).
const std::vector<Int8Isa>& hostInt8Isas() {
  static const std::vector<Int8Isa> isas = [] {
    const auto jtmb = hostBuilder();
    const std::vector<std::string>& features = jtmb.getFeatures().getFeatures();
    const std::set<std::string> has(features.begin(), features.end());
    const bool bw = has.count("+avx512f") && has.count("+avx512bw") && has.count("+avx512vl");
    std::vector<Int8Isa> v;
    if (bw && has.count("+avx512vnni") && has.count("+avx2"))
      v.push_back(Int8Isa::Vnni);
    if (bw && has.count("+avx2"))
      v.push_back(Int8Isa::Avx512Bw);
    if (has.count("+avx2"))
      v.push_back(Int8Isa::Avx2);
    v.push_back(Int8Isa::Portable);
    return v;
  }();
  return isas;
}

} // namespace

const char* int8IsaName(Int8Isa isa) {
  switch (isa) {
  case Int8Isa::Vnni:
    return "vnni";
  case Int8Isa::Avx512Bw:
    return "avx512bw";
  case Int8Isa::Avx2:
    return "avx2";
  case Int8Isa::Portable:
    break;
  }
  return "portable";
}

Int8Isa int8Isa() {
  const std::vector<Int8Isa>& host = hostInt8Isas();
  const char* env = std::getenv("EMBER_CPU_INT8_ISA");
  const std::string want = env ? env : "";
  if (want.empty())
    return host.front();
  std::string names;
  for (Int8Isa isa : host) {
    if (want == int8IsaName(isa))
      return isa;
    names += std::string(names.empty() ? "" : ", ") + int8IsaName(isa);
  }
  for (Int8Isa isa : {Int8Isa::Vnni, Int8Isa::Avx512Bw, Int8Isa::Avx2})
    if (want == int8IsaName(isa))
      throw Error("cpu backend", "EMBER_CPU_INT8_ISA=" + want +
                                     ": this host cannot run it (it runs " + names + ")");
  throw Error("cpu backend", "EMBER_CPU_INT8_ISA=" + want +
                                 ": unknown (vnni, avx512bw, avx2 or portable; this host runs " +
                                 names + ")");
}

std::vector<std::string> int8IsaNames() {
  std::vector<std::string> v;
  for (Int8Isa isa : hostInt8Isas())
    v.push_back(int8IsaName(isa));
  return v;
}

bool interpreterGemmFuses() {
  static const bool fuses = [] {
    const auto jtmb = hostBuilder();
    bool avx512 = false, avx2 = false, fma = false;
    for (const std::string& f : jtmb.getFeatures().getFeatures()) {
      avx512 = avx512 || f == "+avx512f";
      avx2 = avx2 || f == "+avx2";
      fma = fma || f == "+fma";
    }
    const char* isa = std::getenv("EMBER_GEMM_ISA");
    const std::string want = isa ? isa : "";
    if ((want.empty() || want == "avx512") && avx512)
      return true;
    return (want.empty() || want == "avx512" || want == "avx2") && avx2 && fma;
  }();
  return fuses;
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

const std::string& jitSignature() {
  static const std::string signature = [] {
    llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
    std::unique_ptr<llvm::TargetMachine> tm = targetMachine(jtmb);
    std::string s;
    llvm::raw_string_ostream os(s);
    os << kObjectFormat << "\nllvm " << LLVM_VERSION_STRING << "\ntriple "
       << tm->getTargetTriple().str() << "\ncpu " << tm->getTargetCPU() << "\nfeatures "
       << tm->getTargetFeatureString() << "\nreloc " << int(tm->getRelocationModel())
       << "\ncode-model " << int(tm->getCodeModel()) << "\ncodegen-level " << int(tm->getOptLevel())
       << "\npipeline ";
    // The pass pipeline as text: a change of level or passes changes every key.
    llvm::PassBuilder pb(tm.get());
    optimizationPipeline(pb).printPipeline(os, [](llvm::StringRef name) { return name; });
    return os.str();
  }();
  return signature;
}

std::string compileToHostObject(std::unique_ptr<llvm::Module> m,
                                const std::vector<std::string>& keep, double* optimizeSeconds) {
  const auto t0 = std::chrono::steady_clock::now();
  llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  std::unique_ptr<llvm::TargetMachine> tm = targetMachine(jtmb);
  prepareForHost(*m, *tm, keep);
  runPipeline(*m, *tm, optimizationPipeline);
  *optimizeSeconds = since(t0);
  return emitObject(*m, *tm);
}

JitModule::JitModule(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                     const std::vector<std::string>& keep, const JitOptions& opts,
                     CpuCompileStats& st) {
  auto t0 = std::chrono::steady_clock::now();
  llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  {
    std::unique_ptr<llvm::TargetMachine> tm = targetMachine(jtmb);
    prepareForHost(*m, *tm, keep);
  }
  const std::vector<ModulePartition> parts = splitModule(*m, keep, kMaxPartitions);
  m.reset();
  ctx.reset();
  const ObjectCache cache(opts.memoryCache, opts.cacheDir);
  std::vector<Job> jobs;
  std::vector<Job*> misses;
  for (const ModulePartition& p : parts)
    jobs.push_back(Job{&p, objectCacheKey(p.bitcode, jitSignature()), nullptr});
  for (Job& j : jobs)
    if (!(j.object = cache.find(j.key)))
      misses.push_back(&j);
  st.partitions = parts.size();
  st.cachedPartitions = parts.size() - misses.size();
  st.splitSeconds = since(t0);

  t0 = std::chrono::steady_clock::now();
  st.optimizeSeconds = st.jitSeconds = 0;
  st.compileThreads = 0;
  if (!misses.empty()) {
    compileJobs(misses, opts.compileThreads, cache, st);
    cache.prune();
  }
  st.compileSeconds = since(t0);

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
  for (size_t i = 0; i < jobs.size(); ++i)
    if (auto e = jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
            *jobs[i].object, "ember-partition-" + std::to_string(i))))
      throw Error("cpu backend", "cannot add an object to the JIT: " + message(std::move(e)));
  for (const std::string& name : keep)
    lookup(name); // links now, so that run() measures only running
  st.linkSeconds = since(t0);
}

JitModule::~JitModule() = default;

void* JitModule::lookup(const std::string& name) {
  auto sym = jit_->lookup(name);
  if (!sym)
    throw Error("cpu backend", "JIT symbol '" + name + "': " + message(sym.takeError()));
  return sym->toPtr<void*>();
}

} // namespace ember::cpu

namespace ember {

std::vector<std::string> cpuInt8Isas() {
  return cpu::int8IsaNames();
}

} // namespace ember
