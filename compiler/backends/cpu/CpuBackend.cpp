// The cpu backend: the graph function goes through the low-level IR (schedule, IRGen,
// IR optimisations, static memory plan); ModuleGen turns that into one LLVM module,
// which is optimised for the host and JIT-compiled. run() copies inputs into the io
// region, runs the team over `ember_run(env, tid, nth)`, and copies outputs out.
#include "ember/cpu/CpuBackend.h"

#include "Jit.h"
#include "ModuleGen.h"
#include "ObjectCache.h"
#include "ThreadTeam.h"

#include "ember/lir/IRGen.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#include <sys/mman.h>

namespace ember {
namespace cpu {
namespace {

/// `requested` when positive, else the positive integer in environment variable `env`,
/// else `fallback`.
int resolveThreads(int requested, const char* env, int fallback) {
  if (requested > 0)
    return requested;
  if (const char* v = std::getenv(env)) {
    const int n = std::atoi(v);
    if (n > 0)
      return n;
  }
  return fallback;
}

/// 64-byte aligned, zero-initialised bytes. A region of at least 2 MiB is 2 MiB aligned
/// and asks for transparent huge pages (madvise), so that the weights and activations a
/// convolution streams, and the output rows P floats apart its tiles write, take few TLB
/// entries.
class AlignedBytes {
public:
  AlignedBytes() = default;
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;
  ~AlignedBytes() { std::free(bytes_); }
  void resize(size_t n) {
    std::free(bytes_);
    bytes_ = nullptr;
    constexpr size_t kHuge = size_t(2) << 20;
    const size_t align = n >= kHuge ? kHuge : kRegionAlignment;
    const size_t size = std::max<size_t>((n + align - 1) / align * align, align);
    bytes_ = static_cast<uint8_t*>(std::aligned_alloc(align, size));
    if (!bytes_)
      throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    if (align == kHuge)
      madvise(bytes_, size, MADV_HUGEPAGE); // advice only: failure changes nothing
#endif
    std::memset(bytes_, 0, size);
  }
  uint8_t* data() {
    return bytes_;
  }

private:
  uint8_t* bytes_ = nullptr;
};

class Program final : public CpuCompiledFunction {
public:
  /// `source`: the model file (Module::source), named by run-time errors.
  Program(const lir::Function& f, const CpuOptions& opts, std::string source);
  TensorMap run(const TensorMap& inputs) override;
  const CpuCompileStats& stats() const override { return stats_; }
  const std::vector<CpuOpTime>& profile() const override { return profile_; }

private:
  AlignedBytes constants_, io_, activations_, scratch_;
  std::vector<int32_t> errorFlags_;
  std::vector<ErrorSite> errors_;
  std::string source_;
  std::vector<IoBuffer> inputs_, outputs_;
  std::vector<std::string> knownInputs_;
  void* env_[kEnvFields] = {};
  std::unique_ptr<JitModule> jit_;
  void (*entry_)(void*, int64_t, int64_t) = nullptr;
  /// With CpuOptions::profile: every operation's entry point, and its last time.
  std::vector<void (*)(void*, int64_t, int64_t)> ops_;
  std::vector<CpuOpTime> profile_;
  CpuCompileStats stats_;
  /// Last, so that it is destroyed first: a worker may still be going through the
  /// generated code of the last run (taking no part of it) when run() has returned.
  ThreadTeam team_;
};

Program::Program(const lir::Function& f, const CpuOptions& opts, std::string source)
    : source_(std::move(source)), team_(resolveThreads(opts.threads, "EMBER_NUM_THREADS", 1)) {
  GeneratedModule g = generateModule(f, opts.profile);
  team_.prepare(g.stats.nodes);
  stats_ = g.stats;
  stats_.threads = team_.size();
  constants_.resize(g.constants.size());
  if (!g.constants.empty())
    std::memcpy(constants_.data(), g.constants.data(), g.constants.size());
  io_.resize(g.ioBytes);
  activations_.resize(g.activationBytes);
  scratch_.resize(g.scratchPerThread * static_cast<size_t>(team_.size()));
  errorFlags_.assign(std::max<size_t>(g.errors.size(), 1), 0);
  errors_ = std::move(g.errors);
  inputs_ = std::move(g.inputs);
  outputs_ = std::move(g.outputs);
  knownInputs_ = std::move(g.knownInputs);
  env_[kEnvConstants] = constants_.data();
  env_[kEnvIo] = io_.data();
  env_[kEnvActivations] = activations_.data();
  env_[kEnvScratch] = scratch_.data();
  env_[kEnvErrors] = errorFlags_.data();
  env_[kEnvBarrier] = nullptr; // the team's schedule waits on completion counts instead
  env_[kEnvTeam] = &team_;
  env_[kEnvRunNode] = reinterpret_cast<void*>(&ThreadTeam::runNodeEntry);
  env_[kEnvWaitNodes] = reinterpret_cast<void*>(&ThreadTeam::waitEntry);
  const JitOptions jo{resolveThreads(opts.compileThreads, "EMBER_JIT_THREADS",
                                     std::max(1, int(std::thread::hardware_concurrency()))),
                      opts.memoryCache, resolveCacheDir(opts.cacheDir)};
  std::vector<std::string> keep{kRunSymbol};
  for (const OpEntry& op : g.ops)
    keep.push_back(op.symbol);
  jit_ = std::make_unique<JitModule>(std::move(g.module), std::move(g.context), keep, jo, stats_);
  entry_ = reinterpret_cast<void (*)(void*, int64_t, int64_t)>(jit_->lookup(kRunSymbol));
  for (const OpEntry& op : g.ops) {
    ops_.push_back(reinterpret_cast<void (*)(void*, int64_t, int64_t)>(jit_->lookup(op.symbol)));
    profile_.push_back(CpuOpTime{op.name, op.kind, 0, op.parts});
  }
}

TensorMap Program::run(const TensorMap& inputs) {
  for (const auto& [name, _] : inputs)
    if (std::find(knownInputs_.begin(), knownInputs_.end(), name) == knownInputs_.end())
      throw Error("input '" + name + "'", "the model has no input of this name");
  for (const IoBuffer& b : inputs_) {
    auto it = inputs.find(b.name);
    if (it == inputs.end())
      throw Error("input '" + b.name + "'", "no value given (expects " + b.type.toString() + ")");
    const Type& have = it->second.type();
    if (have.kind != b.type.kind || have.dims != b.type.dims)
      throw Error("input '" + b.name + "'",
                  "given " + have.toString() + ", the model expects " + b.type.toString());
    std::memcpy(io_.data() + b.offset, it->second.raw(), it->second.sizeInBytes());
  }
  std::fill(errorFlags_.begin(), errorFlags_.end(), 0);
  if (ops_.empty()) {
    team_.run(entry_, env_);
  } else {
    // One team run per operation, each returning once its operation is finished.
    for (size_t i = 0; i < ops_.size(); ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      team_.run(ops_[i], env_);
      profile_[i].seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  for (size_t i = 0; i < errors_.size(); ++i)
    if (errorFlags_[i])
      throw Error(source_.empty() ? errors_[i].where : source_ + ": " + errors_[i].where,
                  errors_[i].reason);
  TensorMap out;
  for (const IoBuffer& b : outputs_) {
    Tensor t(b.type);
    std::memcpy(t.raw(), io_.data() + b.offset, t.sizeInBytes());
    out.insert_or_assign(b.name, std::move(t));
  }
  return out;
}

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(const CpuOptions& o) : opts_(o) {}
  std::string name() const override { return "cpu"; }
  bool supports(const Node& n) const override {
    if (n.isStorage() || n.kind() == NodeKind::Reshape)
      return true;
    return findCodegenUnit(Op::ofNode(n)) != nullptr;
  }
  std::string kindSupport(NodeKind k) const override {
    if (k == NodeKind::Reshape)
      return "view";
    std::string out;
    for (const auto& [kind, family] : codegenTable())
      if (kind == k && out.find(family) == std::string::npos)
        out += std::string(out.empty() ? "" : ", ") + family;
    return out;
  }
  /// Unsupported nodes are listed, all at once, by generateModule.
  std::unique_ptr<CompiledFunction> compile(const Function& f) const override {
    const std::unique_ptr<lir::Function> lf = lir::compileToLir(f);
    return std::make_unique<Program>(*lf, opts_, f.module().source());
  }

private:
  CpuOptions opts_;
};

} // namespace
} // namespace cpu

std::unique_ptr<Backend> createCpuBackend(const CpuOptions& opts) {
  return std::make_unique<cpu::CpuBackend>(opts);
}

std::unique_ptr<Backend> createCpuBackend() {
  return createCpuBackend(CpuOptions{});
}

} // namespace ember
