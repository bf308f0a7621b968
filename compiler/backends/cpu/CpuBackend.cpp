// The cpu backend: plans memory, generates one LLVM function per node through the
// codegen table plus `ember_run(tid, nth)` that calls them in order with a barrier in
// between, links them with the libjit bitcode (the same module), optimises for the host
// and JIT-compiles; run() copies inputs into the arena, runs the team, copies outputs.
#include "ember/cpu/CpuBackend.h"

#include "BufferPlan.h"
#include "Codegen.h"
#include "Jit.h"
#include "ThreadTeam.h"

#include "ember/support/Error.h"

#include <llvm/IR/Function.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <list>

namespace ember {
namespace cpu {
namespace {

int resolveThreads(int requested) {
  if (requested > 0)
    return requested;
  if (const char* env = std::getenv("EMBER_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0)
      return n;
  }
  return 1;
}

/// 64-byte aligned, zero-initialised bytes.
class AlignedBytes {
public:
  void resize(size_t n) { bytes_.assign(n + 64, 0); }
  uint8_t* data() {
    auto p = reinterpret_cast<uintptr_t>(bytes_.data());
    return reinterpret_cast<uint8_t*>((p + 63) / 64 * 64);
  }

private:
  std::vector<uint8_t> bytes_;
};

class Program final : public CpuCompiledFunction, public CodegenServices {
public:
  Program(const Function& f, int threads);
  TensorMap run(const TensorMap& inputs) override;
  const CpuCompileStats& stats() const override { return stats_; }

  const void* addressOf(const NodeValue& v) const override {
    if (plan_.inArena(v))
      return arena_ + plan_.offset(v);
    const NodeValue r = plan_.root(v);
    if (r.node->kind() != NodeKind::Constant)
      throw Error(nodeRef(*v.node), "value has no memory in the cpu backend");
    return r.node->payload().raw();
  }
  const void* keep(std::vector<uint8_t> bytes) override {
    stats_.packedBytes += bytes.size();
    kept_.emplace_back();
    kept_.back().resize(bytes.size());
    std::memcpy(kept_.back().data(), bytes.data(), bytes.size());
    return kept_.back().data();
  }
  void needScratch(size_t bytes) override {
    scratchPerThread_ = std::max(scratchPerThread_, bytes);
  }
  void (*barrierFn() const)(void*) override { return &ThreadTeam::barrierEntry; }
  void* barrierArg() const override { return const_cast<ThreadTeam*>(&team_); }
  int32_t* errorFlag(const Node& node, const std::string& reason) override {
    errors_.push_back(ErrorFlag{0, nodeRef(node), reason});
    return &errors_.back().flag;
  }

private:
  void generate(llvm::Module& m);

  const Function& f_;
  BufferPlan plan_;
  ThreadTeam team_;
  AlignedBytes arenaStore_, scratchStore_;
  uint8_t* arena_ = nullptr;
  std::list<AlignedBytes> kept_;
  struct ErrorFlag {
    int32_t flag;
    std::string where, reason;
  };
  std::list<ErrorFlag> errors_;
  size_t scratchPerThread_ = 0;
  std::unique_ptr<JitModule> jit_;
  void (*entry_)(int64_t, int64_t) = nullptr;
  CpuCompileStats stats_;
};

Program::Program(const Function& f, int threads) : f_(f), plan_(f), team_(threads) {
  const auto t0 = std::chrono::steady_clock::now();
  arenaStore_.resize(plan_.arenaBytes());
  arena_ = arenaStore_.data();
  stats_.arenaBytes = plan_.arenaBytes();
  stats_.threads = team_.size();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = loadLibjit(*ctx);
  generate(*m);
  stats_.codegenSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  jit_ = std::make_unique<JitModule>(std::move(m), std::move(ctx),
                                     std::vector<std::string>{"ember_run", "ember_scratch"},
                                     &stats_.optimizeSeconds, &stats_.jitSeconds);
  entry_ = reinterpret_cast<void (*)(int64_t, int64_t)>(jit_->lookup("ember_run"));
  scratchStore_.resize(scratchPerThread_ * static_cast<size_t>(team_.size()));
  *static_cast<void**>(jit_->lookup("ember_scratch")) = scratchStore_.data();
}

void Program::generate(llvm::Module& m) {
  llvm::LLVMContext& c = m.getContext();
  // Kernels are inlined into the node functions that call them, so each call is
  // specialised on its constant shapes.
  for (llvm::Function& fn : m)
    if (!fn.isDeclaration() && fn.getName().starts_with("ember_")) {
      fn.removeFnAttr(llvm::Attribute::NoInline);
      fn.removeFnAttr(llvm::Attribute::OptimizeNone);
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  auto* scratch = new llvm::GlobalVariable(
      m, llvm::PointerType::get(c, 0), false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantPointerNull::get(llvm::PointerType::get(c, 0)), "ember_scratch");
  auto* i64 = llvm::Type::getInt64Ty(c);
  auto* stepTy = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {i64, i64}, false);
  auto* run = llvm::Function::Create(stepTy, llvm::GlobalValue::ExternalLinkage, "ember_run", m);
  llvm::IRBuilder<> rb(llvm::BasicBlock::Create(c, "entry", run));
  size_t index = 0;
  CodegenContext::InstanceCache instances;
  for (const auto& n : f_.nodes()) {
    if (BufferPlan::isView(*n))
      continue;
    const CodegenUnit* unit = findCodegenUnit(*n);
    if (!unit)
      throw Unsupported(nodeRef(*n), "the cpu backend cannot compile this node");
    auto* fn = llvm::Function::Create(stepTy, llvm::GlobalValue::InternalLinkage,
                                      "node." + std::to_string(index++) + "." + n->name(), m);
    fn->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", fn));
    CodegenContext ctx(m, b, *this, scratch, fn->getArg(0), fn->getArg(1), n.get(), &instances);
    try {
      unit->emit(*n, ctx);
    } catch (const Unsupported&) {
      throw;
    } catch (const Error& e) {
      throw Error(nodeRef(*n), e.what());
    }
    b.CreateRetVoid();
    if (index > 1) {
      CodegenContext rctx(m, rb, *this, scratch, run->getArg(0), run->getArg(1));
      rctx.barrier();
    }
    rb.CreateCall(fn, {run->getArg(0), run->getArg(1)});
  }
  rb.CreateRetVoid();
  stats_.nodes = index;
  stats_.kernelInstances = instances.size();
}

TensorMap Program::run(const TensorMap& inputs) {
  for (const auto& [name, _] : inputs)
    if (!f_.module().getPlaceholder(name))
      throw Error("input '" + name + "'", "the model has no input of this name");
  for (Node* p : f_.inputs()) {
    auto it = inputs.find(p->name());
    if (it == inputs.end())
      throw Error("input '" + p->name() + "'",
                  "no value given (expects " + p->resultType().toString() + ")");
    const Type& want = p->resultType();
    const Type& have = it->second.type();
    if (have.kind != want.kind || have.dims != want.dims)
      throw Error("input '" + p->name() + "'",
                  "given " + have.toString() + ", the model expects " + want.toString());
    std::memcpy(const_cast<void*>(addressOf(NodeValue(p, 0))), it->second.raw(),
                it->second.sizeInBytes());
  }
  for (ErrorFlag& e : errors_)
    e.flag = 0;
  team_.run(entry_);
  for (const ErrorFlag& e : errors_)
    if (e.flag)
      throw Error(e.where, e.reason);
  TensorMap out;
  for (const auto& o : f_.outputs()) {
    Tensor t(o.value.type());
    std::memcpy(t.raw(), addressOf(o.value), t.sizeInBytes());
    out.emplace(o.name, std::move(t));
  }
  return out;
}

class CpuBackend final : public Backend {
public:
  explicit CpuBackend(const CpuOptions& o) : opts_(o) {}
  std::string name() const override { return "cpu"; }
  bool supports(const Node& n) const override {
    if (n.isStorage() || BufferPlan::isView(n))
      return true;
    return findCodegenUnit(n) != nullptr;
  }
  std::unique_ptr<CompiledFunction> compile(const Function& f) const override {
    std::vector<std::string> missing;
    for (const auto& n : f.nodes())
      if (!supports(*n))
        missing.push_back(nodeRef(*n) + " (" + n->resultType().toString() + ")");
    if (!missing.empty()) {
      std::string msg =
          "the cpu backend cannot run " + std::to_string(missing.size()) + " node(s):";
      for (const auto& s : missing)
        msg += "\n  " + s;
      throw Unsupported("function '" + f.name() + "'", msg);
    }
    return std::make_unique<Program>(f, resolveThreads(opts_.threads));
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
