#include "ModuleGen.h"

#include "Jit.h"
#include "ThreadTeam.h"
#include "codegen/Strides.h"

#include "ember/lir/MemoryPlanner.h"
#include "ember/support/Error.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
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
  /// Emits `in`; with `add`, a residual Add fused into it (residualAddAfter). Returns
  /// the operation's part limit: 1 when it must run as one part (CodegenContext::barrier),
  /// else the unit's CodegenContext::limitParts, 0 when none.
  int64_t emitCompute(const lir::Instruction& in, CodegenContext& ctx,
                      CodegenContext::InstanceCache& instances,
                      const lir::Instruction* add = nullptr);
  /// The operands a step (an instruction, with its fused Add) reads or writes.
  struct Touch {
    std::vector<const lir::Value*> reads, writes;
  };
  static Touch touchOf(const lir::Instruction& in, const lir::Instruction* add);
  /// Whether two steps may not run at the same time: one writes bytes the other touches.
  bool conflict(const Touch& a, const Touch& b) const;
  /// Emits the wait for `nodes` (pairs: node index, parts), which comes before what
  /// `before` says (ThreadTeam::WaitBefore).
  void emitWait(CodegenContext& rctx, const std::vector<int64_t>& nodes, int64_t before);
  /// A node some part of which may still be running (see ThreadTeam.h).
  struct Pending {
    int64_t node, parts;
    Touch touch;
  };
  /// The pairs (node, parts) a node that touches `*touch` waits for, taken out of
  /// `pending`: those it conflicts with, or all once `pending` is full or `touch` is null
  /// (the end of ember_run).
  std::vector<int64_t> takeWaits(std::vector<Pending>& pending, const Touch* touch) const;
  /// The compute and copy instructions in order; fills users_.
  std::vector<const lir::Instruction*> collectSteps();
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

int64_t Generator::emitCompute(const lir::Instruction& in, CodegenContext& ctx,
                               CodegenContext::InstanceCache& instances,
                               const lir::Instruction* add) {
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
  octx.setScratch(ctx.scratchValue());
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
  return octx.needsOnePart() ? 1 : octx.partLimit();
}

Generator::Touch Generator::touchOf(const lir::Instruction& in, const lir::Instruction* add) {
  Touch t;
  for (const lir::Instruction* x : {&in, add}) {
    if (!x)
      continue;
    // A copy's destination is its operand 0, like a compute instruction's result.
    const size_t results = x->valueKind() == lir::ValueKind::Copy ? 1 : x->numResults();
    for (size_t i = 0; i < x->operands().size(); ++i)
      if (const lir::Value* v = x->operand(i).value)
        (i < results ? t.writes : t.reads).push_back(v);
  }
  return t;
}

bool Generator::conflict(const Touch& a, const Touch& b) const {
  auto writesInto = [&](const Touch& w, const Touch& o) {
    for (const lir::Value* x : w.writes) {
      for (const lir::Value* y : o.writes)
        if (sharesBytes(x, y))
          return true;
      for (const lir::Value* y : o.reads)
        if (sharesBytes(x, y))
          return true;
    }
    return false;
  };
  return writesInto(a, b) || writesInto(b, a);
}

void Generator::emitWait(CodegenContext& rctx, const std::vector<int64_t>& nodes, int64_t before) {
  llvm::IRBuilder<>& b = rctx.builder();
  auto* i64 = b.getInt64Ty();
  auto* ptr = b.getPtrTy();
  auto* waitTy = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, i64, i64, i64, i64}, false);
  llvm::Value* list = nodes.empty() ? rctx.nullPtr() : rctx.int64Array(nodes);
  b.CreateCall(waitTy, rctx.field(kEnvWaitNodes),
               {rctx.field(kEnvTeam), rctx.field(kEnvBarrier), list,
                b.getInt64(int64_t(nodes.size() / 2)), b.getInt64(before), rctx.tid(), rctx.nth()});
}

namespace {

/// Work of one part: about this many multiply-adds or bytes moved (a few microseconds).
constexpr double kPartWork = 1 << 18;
/// Parts of the largest nodes: enough that a member that starts late or is descheduled
/// leaves a small share to the others, few enough that each part stays long.
constexpr int64_t kMaxParts = 8;

/// How many parts a step is cut into: one per kPartWork of its work (the bytes of its
/// operands, plus the multiply-adds of a convolution or product), at most kMaxParts, an
/// even count when more than one. The count depends only on the model, so the parts, and
/// the bits, are the same for every thread count. $EMBER_CPU_PARTS (a positive integer,
/// at most ThreadTeam::kMaxParts) sets every node's count instead: the tests cut small
/// nodes into uneven parts with it, since the bits must not depend on the parts either.
/// Otherwise a unit's limit (CodegenContext::limitParts; 0 = none) caps the count.
int64_t partsOf(const lir::Instruction& in, const lir::Instruction* add, int64_t limit) {
  if (const char* v = std::getenv("EMBER_CPU_PARTS"))
    if (const int64_t n = std::atoll(v); n > 0)
      return std::min<int64_t>(n, ThreadTeam::kMaxParts);
  double work = 0;
  for (const lir::Instruction* x : {&in, add})
    if (x)
      for (const lir::Operand& o : x->operands())
        if (o.value)
          work += double(o.value->sizeInBytes());
  if (in.valueKind() == lir::ValueKind::Compute) {
    const Op op = Op::ofInstruction(in);
    const double outs = double(numElements(op.resultType().dims));
    const OpInput w = op.optionalInput(1);
    const NodeKind k = op.kind();
    if ((k == NodeKind::Conv || k == NodeKind::ConvTranspose) && w && !w.dims().empty() &&
        w.dims()[0] > 0) {
      // Conv: each output takes C/group x kernel products; ConvTranspose: each input.
      const double per = double(numElements(w.dims())) / double(w.dims()[0]);
      work += (k == NodeKind::Conv ? outs : double(numElements(op.input(0).dims()))) * per;
    } else if ((k == NodeKind::MatMul || k == NodeKind::Gemm) && op.numInputs() > 1 && w) {
      const Shape& a = op.input(0).dims();
      work += outs * double(a.empty() ? 1 : std::max(a.back(), a.size() > 1 ? a[a.size() - 2] : 1));
    }
  }
  int64_t parts = int64_t(work / kPartWork);
  parts = std::clamp<int64_t>(parts, 1, kMaxParts);
  parts = parts > 1 ? (parts + 1) / 2 * 2 : 1;
  return limit > 0 ? std::min(parts, limit) : parts;
}

/// Kernels are inlined into the instances that call them, so each call is specialised on
/// its constant shapes.
void inlineKernels(llvm::Module& m) {
  for (llvm::Function& fn : m)
    if (!fn.isDeclaration() && fn.getName().starts_with("ember_")) {
      fn.removeFnAttr(llvm::Attribute::NoInline);
      fn.removeFnAttr(llvm::Attribute::OptimizeNone);
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
    }
}

/// The profile's name of a node's `ember_op_N` symbol: its graph node and operation.
OpEntry opEntry(const std::string& symbol, const lir::Instruction& in, const lir::Instruction* add,
                int64_t parts) {
  const std::string op = in.valueKind() == lir::ValueKind::Copy ? "copy"
                         : add                                  ? std::string(in.opName()) + "+Add"
                                                                : std::string(in.opName());
  return OpEntry{symbol, in.hasNode() ? in.node().name() : in.name(), op, parts};
}

} // namespace

std::vector<int64_t> Generator::takeWaits(std::vector<Pending>& pending, const Touch* touch) const {
  constexpr size_t kMaxPending = 8;
  const bool all = !touch || pending.size() >= kMaxPending;
  std::vector<int64_t> wait;
  std::vector<Pending> still;
  for (Pending& p : pending) {
    if (all || conflict(p.touch, *touch)) {
      wait.push_back(p.node);
      wait.push_back(p.parts);
    } else {
      still.push_back(std::move(p));
    }
  }
  pending = std::move(still);
  return wait;
}

std::vector<const lir::Instruction*> Generator::collectSteps() {
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
  return steps;
}

GeneratedModule Generator::run() {
  const auto t0 = std::chrono::steady_clock::now();
  checkSupported();
  layoutIo();
  out_.context = std::make_unique<llvm::LLVMContext>();
  out_.module = loadLibjit(*out_.context);
  llvm::Module& m = *out_.module;
  llvm::LLVMContext& c = *out_.context;
  inlineKernels(m);
  auto* i64 = llvm::Type::getInt64Ty(c);
  auto* ptr = llvm::PointerType::get(c, 0);
  auto* voidTy = llvm::Type::getVoidTy(c);
  // ember_run(env, tid, nth); a part of a node: (env, chunk, chunks, scratch).
  auto* runTy = llvm::FunctionType::get(voidTy, {ptr, i64, i64}, false);
  auto* partTy = llvm::FunctionType::get(voidTy, {ptr, i64, i64, ptr}, false);
  auto* runNodeTy =
      llvm::FunctionType::get(voidTy, {ptr, ptr, i64, i64, ptr, ptr, i64, i64}, false);
  // Each thread's scratch is scratchPerThread bytes, known once every unit has asked.
  auto* stride = new llvm::GlobalVariable(m, i64, true, llvm::GlobalValue::InternalLinkage, nullptr,
                                          "ember_scratch_stride");
  auto* runFn = llvm::Function::Create(runTy, llvm::GlobalValue::ExternalLinkage, kRunSymbol, m);
  llvm::IRBuilder<> rb(llvm::BasicBlock::Create(c, "entry", runFn));
  CodegenContext rctx(m, rb, *this, runFn->getArg(0), runFn->getArg(1), runFn->getArg(2));
  // A thread's own scratch: env[scratch] + tid * stride.
  auto scratchOf = [&](CodegenContext& ctx) {
    llvm::IRBuilder<>& b = ctx.builder();
    return b.CreateGEP(b.getInt8Ty(), ctx.field(kEnvScratch),
                       b.CreateMul(ctx.tid(), b.CreateLoad(i64, stride)));
  };
  auto runNode = [&](CodegenContext& ctx, int64_t node, int64_t parts, llvm::Function* fn,
                     llvm::Value* scratch) {
    ctx.builder().CreateCall(runNodeTy, ctx.field(kEnvRunNode),
                             {ctx.field(kEnvTeam), ctx.env(), ctx.i64(node), ctx.i64(parts), fn,
                              scratch, ctx.tid(), ctx.nth()});
  };
  llvm::Value* runScratch = scratchOf(rctx);
  CodegenContext::InstanceCache instances;
  const std::vector<const lir::Instruction*> steps = collectSteps();
  // Nodes some part of which may still be running: a node waits for those it conflicts
  // with; every node is waited for by the end of ember_run.
  std::vector<Pending> pending;
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
    const int64_t node = int64_t(index);
    const std::string name = "op." + std::to_string(index) + "." + in->name();
    ++index;
    auto* fn = llvm::Function::Create(partTy, llvm::GlobalValue::InternalLinkage, name, m);
    fn->addFnAttr(llvm::Attribute::NoInline);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", fn));
    CodegenContext ctx(m, b, *this, fn->getArg(0), fn->getArg(1), fn->getArg(2), nullptr, nullptr,
                       &instances);
    ctx.setScratch(fn->getArg(3));
    int64_t limit = 0;
    if (k == lir::ValueKind::Copy)
      emitCopy(*in, ctx);
    else
      limit = emitCompute(*in, ctx, instances, add);
    b.CreateRetVoid();
    const int64_t parts = limit == 1 ? 1 : partsOf(*in, add, limit);
    Touch touch = touchOf(*in, add);
    const std::vector<int64_t> wait = takeWaits(pending, &touch);
    // Before a node of several parts the helpers wait for what they noted, so the wait
    // is there even when empty.
    if (!wait.empty() || parts > 1)
      emitWait(rctx, wait, parts > 1 ? ThreadTeam::kBeforeParts : ThreadTeam::kBeforeOnePart);
    runNode(rctx, node, parts, fn, runScratch);
    pending.push_back(Pending{node, parts, std::move(touch)});
    if (exportOps_) {
      // Profiling: the node alone, as `void(env, tid, nth)`, finished when it returns.
      const std::string symbol = "ember_op_" + std::to_string(node);
      auto* step = llvm::Function::Create(runTy, llvm::GlobalValue::ExternalLinkage, symbol, m);
      llvm::IRBuilder<> sb(llvm::BasicBlock::Create(c, "entry", step));
      CodegenContext sctx(m, sb, *this, step->getArg(0), step->getArg(1), step->getArg(2));
      runNode(sctx, node, parts, fn, scratchOf(sctx));
      emitWait(sctx, {node, parts}, ThreadTeam::kAtEnd);
      sb.CreateRetVoid();
      out_.ops.push_back(opEntry(symbol, *in, add, parts));
    }
  }
  const std::vector<int64_t> last = takeWaits(pending, nullptr);
  if (!last.empty())
    emitWait(rctx, last, ThreadTeam::kAtEnd);
  rb.CreateRetVoid();
  stride->setInitializer(llvm::ConstantInt::get(i64, out_.scratchPerThread));
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
