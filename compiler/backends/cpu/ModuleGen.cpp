#include "ModuleGen.h"

#include "Jit.h"
#include "codegen/Strides.h"

#include "ember/lir/MemoryPlanner.h"
#include "ember/support/Error.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

namespace ember::cpu {

namespace {

size_t alignUp(size_t v) {
  return (v + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment;
}

/// Whether two operands are the very same bytes (one buffer, offset and size).
bool sameBytes(const lir::Value* a, const lir::Value* b) {
  const lir::Location la = lir::locate(const_cast<lir::Value*>(a));
  const lir::Location lb = lir::locate(const_cast<lir::Value*>(b));
  return la.root == lb.root && la.offset == lb.offset && a->sizeInBytes() == b->sizeInBytes();
}

/// Whether the bytes of two operands overlap.
bool overlaps(const lir::Value* a, const lir::Value* b) {
  if (!a || !b)
    return false;
  const lir::Location la = lir::locate(const_cast<lir::Value*>(a));
  const lir::Location lb = lir::locate(const_cast<lir::Value*>(b));
  return la.root == lb.root && la.offset < lb.offset + b->sizeInBytes() &&
         lb.offset < la.offset + a->sizeInBytes();
}

/// Where a buffer is: a region of the environment and a byte offset in it.
struct Place {
  EnvField region;
  size_t offset;
};

class Generator final : public CodegenServices {
public:
  Generator(const lir::Function& f, bool exportOps)
      : f_(f), plan_(lir::planMemory(f)), exportOps_(exportOps) {}

  GeneratedModule run();

  size_t keep(std::vector<uint8_t> bytes) override {
    out_.stats.packedBytes += bytes.size();
    return append(bytes.data(), bytes.size());
  }
  void needScratch(size_t bytes) override {
    out_.scratchPerThread = std::max(out_.scratchPerThread, alignUp(bytes));
  }
  size_t errorFlag(const std::string& where, const std::string& reason) override {
    out_.errors.push_back(ErrorSite{where, reason});
    return out_.errors.size() - 1;
  }

private:
  size_t append(const void* p, size_t n) {
    const size_t at = alignUp(out_.constants.size());
    out_.constants.resize(at + n);
    if (n)
      std::memcpy(out_.constants.data() + at, p, n);
    return at;
  }
  void checkSupported() const;
  void layoutIo();
  Place place(const lir::Value* v);
  llvm::Value* address(CodegenContext& ctx, const lir::Value* v);
  void emitCopy(const lir::Instruction& in, CodegenContext& ctx);
  /// Whether a result's bytes overlap an input's (an in-place pair).
  static bool writesOverAnInput(const lir::Instruction& in);
  /// Whether two operands share bytes once placed: activations by the memory plan (two
  /// allocations whose lives do not meet may share an offset), others by their buffer.
  bool sharesBytes(const lir::Value* a, const lir::Value* b) const;
  /// Emits `in`; with `add`, a residual Add fused into it (residualAddAfter).
  void emitCompute(const lir::Instruction& in, CodegenContext& ctx,
                   CodegenContext::InstanceCache& instances, const lir::Instruction* add = nullptr);
  /// `next` when it is an element-wise Add of `in`'s result (read by nothing else: the
  /// Add writes its result over it, or nothing else touches it) and
  /// another value of the same shape, that `in`'s codegen unit can compute in its
  /// epilogue writing straight into the Add's result; else null.
  const lir::Instruction* residualAddAfter(const lir::Instruction& in,
                                           const lir::Instruction* next) const;

  const lir::Function& f_;
  lir::FunctionMemoryPlan plan_;
  /// The compute and copy instructions that read or write each root buffer.
  std::map<const lir::Value*, std::vector<const lir::Instruction*>> users_;
  std::map<const lir::Value*, size_t> io_, constants_;
  bool exportOps_;
  GeneratedModule out_;
};

void Generator::checkSupported() const {
  std::vector<std::string> missing;
  for (const auto& in : f_.instructions())
    if (in->valueKind() == lir::ValueKind::Compute) {
      const Op op = Op::ofInstruction(*in);
      if (!findCodegenUnit(op))
        missing.push_back(nodeRef(op) + " (" + op.resultType().toString() + ")");
    }
  if (missing.empty())
    return;
  std::string msg = "the cpu backend cannot run " + std::to_string(missing.size()) + " node(s):";
  for (const auto& s : missing)
    msg += "\n  " + s;
  throw Unsupported("function '" + f_.name() + "'", msg);
}

void Generator::layoutIo() {
  std::set<const lir::Value*> used;
  for (const auto& in : f_.instructions())
    for (const lir::Operand& op : in->operands())
      if (op.value)
        used.insert(lir::locate(op.value).root);
  for (const auto& w : f_.weights()) {
    if (w->role() == lir::WeightVar::Role::Constant)
      continue;
    const bool input = w->role() == lir::WeightVar::Role::Input;
    if (input)
      out_.knownInputs.push_back(w->ioName());
    if (input && !used.count(w.get()))
      continue;
    io_[w.get()] = out_.ioBytes;
    (input ? out_.inputs : out_.outputs).push_back(IoBuffer{w->ioName(), w->type(), out_.ioBytes});
    out_.ioBytes += alignUp(std::max<size_t>(w->sizeInBytes(), 1));
  }
}

Place Generator::place(const lir::Value* v) {
  const lir::Location l = lir::locate(const_cast<lir::Value*>(v));
  if (l.root->valueKind() == lir::ValueKind::Alloc)
    return {kEnvActivations, plan_.offsetOf(l.root) + l.offset};
  const auto* w = static_cast<const lir::WeightVar*>(l.root);
  if (w->role() != lir::WeightVar::Role::Constant)
    return {kEnvIo, io_.at(w) + l.offset};
  auto it = constants_.find(w);
  if (it == constants_.end())
    it = constants_.emplace(w, append(w->payload()->raw(), w->payload()->sizeInBytes())).first;
  return {kEnvConstants, it->second + l.offset};
}

llvm::Value* Generator::address(CodegenContext& ctx, const lir::Value* v) {
  if (!v)
    return nullptr;
  const Place p = place(v);
  return ctx.at(p.region, p.offset);
}

void Generator::emitCopy(const lir::Instruction& in, CodegenContext& ctx) {
  const int64_t bytes = static_cast<int64_t>(in.operand(1).value->sizeInBytes());
  if (bytes == 0)
    return;
  const Box6<2> box = simplifyBox<2>({bytes}, {std::vector<int64_t>{1}, std::vector<int64_t>{1}});
  ctx.call("ember_copy_strided",
           {ctx.i32(1), address(ctx, in.operand(1).value), address(ctx, in.operand(0).value),
            ctx.int64Array(box.dims), ctx.int64Array(box.strides[0]),
            ctx.int64Array(box.strides[1]), ctx.tid(), ctx.nth()});
}

bool Generator::writesOverAnInput(const lir::Instruction& in) {
  for (size_t r = 0; r < in.numResults(); ++r)
    for (size_t i = in.numResults(); i < in.operands().size(); ++i)
      if (overlaps(in.operand(r).value, in.operand(i).value))
        return true;
  return false;
}

bool Generator::sharesBytes(const lir::Value* a, const lir::Value* b) const {
  if (!a || !b)
    return false;
  const lir::Location la = lir::locate(const_cast<lir::Value*>(a));
  const lir::Location lb = lir::locate(const_cast<lir::Value*>(b));
  if (la.root->valueKind() != lir::ValueKind::Alloc ||
      lb.root->valueKind() != lir::ValueKind::Alloc)
    return overlaps(a, b);
  const size_t oa = plan_.offsetOf(la.root) + la.offset, ob = plan_.offsetOf(lb.root) + lb.offset;
  return oa < ob + b->sizeInBytes() && ob < oa + a->sizeInBytes();
}

const lir::Instruction* Generator::residualAddAfter(const lir::Instruction& in,
                                                    const lir::Instruction* next) const {
  if (!next || next->valueKind() != lir::ValueKind::Compute || in.numResults() != 1 ||
      next->numResults() != 1 || next->operands().size() != 3)
    return nullptr;
  const Op op = Op::ofInstruction(in), add = Op::ofInstruction(*next);
  const CodegenUnit* unit = findCodegenUnit(op);
  if (add.kind() != NodeKind::Add || !unit || !unit->takesResidualAdd ||
      !unit->takesResidualAdd(op))
    return nullptr;
  const Type& t = op.resultType();
  auto plainFloat = [&](const Type& u) {
    return u.kind == ElemKind::Float32 && !u.quant.isQuantized() && u.dims == t.dims;
  };
  if (!plainFloat(t) || !plainFloat(add.resultType()) || !plainFloat(add.input(0).type()) ||
      !plainFloat(add.input(1).type()))
    return nullptr;
  // One operand of the Add is exactly the result, which nothing else reads.
  const lir::Value* y = in.operand(0).value;
  const lir::Location ly = lir::locate(const_cast<lir::Value*>(y));
  if (ly.root->valueKind() != lir::ValueKind::Alloc)
    return nullptr;
  const lir::Value *a = next->operand(1).value, *b = next->operand(2).value;
  if (!(sameBytes(a, y) ? !overlaps(b, y) : sameBytes(b, y) && !overlaps(a, y)))
    return nullptr;
  // Unless the Add writes its result over it (then later readers read the Add's result),
  // nothing else may touch it: the fused kernel never writes the result itself.
  const bool inPlace = sameBytes(next->operand(0).value, y);
  for (const lir::Instruction* u : users_.at(ly.root))
    if (!inPlace && u != &in && u != next)
      for (const lir::Operand& o : u->operands())
        if (overlaps(o.value, y))
          return nullptr;
  // The Add's result, written by the fused kernel, must not share bytes with one of its
  // inputs: not as a buffer, nor where the memory plan put them.
  for (size_t i = in.numResults(); i < in.operands().size(); ++i)
    if (sharesBytes(next->operand(0).value, in.operand(i).value))
      return nullptr;
  return next;
}

void Generator::emitCompute(const lir::Instruction& in, CodegenContext& ctx,
                            CodegenContext::InstanceCache& instances, const lir::Instruction* add) {
  const Op op = Op::ofInstruction(in);
  const CodegenUnit* unit = findCodegenUnit(op);
  if (!unit)
    throw Unsupported(nodeRef(op), "the cpu backend cannot compile this node");
  // With a fused Add, the results are the Add's.
  const lir::Instruction& out = add ? *add : in;
  auto operandAddress = [&](bool isResult, unsigned i) -> llvm::Value* {
    if (isResult)
      return i < out.numResults() ? address(ctx, out.operand(i).value) : nullptr;
    const size_t k = in.numResults() + i;
    return k < in.operands().size() ? address(ctx, in.operand(k).value) : nullptr;
  };
  CodegenContext octx(ctx.module(), ctx.builder(), *this, ctx.env(), ctx.tid(), ctx.nth(), &op,
                      operandAddress, &instances);
  octx.setOperandsMayAlias(writesOverAnInput(in));
  if (add) {
    const lir::Value* y = in.operand(0).value;
    const lir::Value* other = add->operand(sameBytes(add->operand(1).value, y) ? 2 : 1).value;
    octx.setResidual({address(ctx, other), FusedActivation::of(add->node())});
    octx.setOperandsMayAlias(sharesBytes(add->operand(0).value, other));
  }
  try {
    unit->emit(op, octx);
  } catch (const Unsupported&) {
    throw;
  } catch (const Error& e) {
    throw Error(nodeRef(op), e.what());
  }
}

GeneratedModule Generator::run() {
  const auto t0 = std::chrono::steady_clock::now();
  checkSupported();
  layoutIo();
  out_.context = std::make_unique<llvm::LLVMContext>();
  out_.module = loadLibjit(*out_.context);
  llvm::Module& m = *out_.module;
  llvm::LLVMContext& c = *out_.context;
  // Kernels are inlined into the instances that call them, so each call is specialised
  // on its constant shapes.
  for (llvm::Function& fn : m)
    if (!fn.isDeclaration() && fn.getName().starts_with("ember_")) {
      fn.removeFnAttr(llvm::Attribute::NoInline);
      fn.removeFnAttr(llvm::Attribute::OptimizeNone);
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  auto* i64 = llvm::Type::getInt64Ty(c);
  auto* ptr = llvm::PointerType::get(c, 0);
  auto* stepTy = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr, i64, i64}, false);
  auto* runFn = llvm::Function::Create(stepTy, llvm::GlobalValue::ExternalLinkage, kRunSymbol, m);
  llvm::IRBuilder<> rb(llvm::BasicBlock::Create(c, "entry", runFn));
  CodegenContext rctx(m, rb, *this, runFn->getArg(0), runFn->getArg(1), runFn->getArg(2));
  CodegenContext::InstanceCache instances;
  std::vector<const lir::Instruction*> steps;
  for (const auto& in : f_.instructions()) {
    const lir::ValueKind k = in->valueKind();
    if (k != lir::ValueKind::Compute && k != lir::ValueKind::Copy)
      continue;
    steps.push_back(in.get());
    for (const lir::Operand& o : in->operands())
      if (o.value)
        users_[lir::locate(o.value).root].push_back(in.get());
  }
  size_t index = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    const lir::Instruction* in = steps[s];
    const lir::ValueKind k = in->valueKind();
    const lir::Instruction* add =
        k == lir::ValueKind::Compute
            ? residualAddAfter(*in, s + 1 < steps.size() ? steps[s + 1] : nullptr)
            : nullptr;
    if (add)
      ++s; // the Add is computed by `in`
    // Profiling exports every operation under a plain symbol the host looks up.
    const std::string symbol = exportOps_ ? "ember_op_" + std::to_string(index)
                                          : "op." + std::to_string(index) + "." + in->name();
    ++index;
    auto* fn = llvm::Function::Create(stepTy,
                                      exportOps_ ? llvm::GlobalValue::ExternalLinkage
                                                 : llvm::GlobalValue::InternalLinkage,
                                      symbol, m);
    if (exportOps_)
      out_.ops.push_back(OpEntry{symbol, in->hasNode() ? in->node().name() : in->name(),
                                 k == lir::ValueKind::Copy ? "copy"
                                 : add                     ? std::string(in->opName()) + "+Add"
                                                           : std::string(in->opName())});
    fn->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", fn));
    CodegenContext ctx(m, b, *this, fn->getArg(0), fn->getArg(1), fn->getArg(2), nullptr, nullptr,
                       &instances);
    if (k == lir::ValueKind::Copy)
      emitCopy(*in, ctx);
    else
      emitCompute(*in, ctx, instances, add);
    b.CreateRetVoid();
    if (index > 1)
      rctx.barrier();
    rb.CreateCall(fn, {runFn->getArg(0), runFn->getArg(1), runFn->getArg(2)});
  }
  rb.CreateRetVoid();
  out_.activationBytes = plan_.plan.arenaBytes;
  out_.stats.arenaBytes = plan_.plan.arenaBytes;
  out_.stats.nodes = index;
  out_.stats.kernelInstances = instances.size();
  out_.stats.codegenSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return std::move(out_);
}

} // namespace

GeneratedModule generateModule(const lir::Function& f, bool exportOps) {
  return Generator(f, exportOps).run();
}

} // namespace ember::cpu
