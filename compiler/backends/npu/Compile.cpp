// The NPU compiler driver: classify nodes (I/O boundaries, layers, unsupported), lower
// to the low-level IR and plan DRAM (inputs, outputs, the scratch region by the low-level
// IR's memory planner, constants), emit a layer per compute instruction in its order and
// assemble the binary and its summary.
#include "ActMatMul.h"
#include "BlockTranspose.h"
#include "DramPlan.h"
#include "Layer.h"
#include "Stream.h"
#include "ember/graph/AttrViews.h"
#include "ember/isa/roles.h"
#include "ember/lir/Schedule.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace ember::npu {

namespace {

bool isInputBoundary(const Node& n) {
  return n.kind() == NodeKind::QuantizeLinear && n.input(0).node->kind() == NodeKind::Placeholder;
}

/// Whether every use of `n`'s result is a function output.
bool onlyFeedsOutputs(const Function& f, const Node& n) {
  size_t asOutput = 0;
  for (const auto& o : f.outputs())
    if (o.value.node == &n)
      ++asOutput;
  return asOutput > 0 && f.numUses(&n) == asOutput;
}

/// "" when the NPU runs node `n` of `f`, else the reason.
std::string whyUnsupported(const Function& f, const Node& n, const Target& t) {
  if (n.kind() == NodeKind::QuantizeLinear) {
    if (!isInputBoundary(n))
      return "only QuantizeLinear of a graph input runs on the host (a float value in the "
             "middle of the graph)";
    return checkActivation(resultOf(n), "the quantized input");
  }
  if (n.kind() == NodeKind::DequantizeLinear) {
    if (!onlyFeedsOutputs(f, n))
      return "only a DequantizeLinear producing a graph output runs on the host";
    return checkActivation(n.input(0), "the dequantized value");
  }
  const Layer* l = findLayer(n.kind());
  if (!l)
    return "no NPU layer for this kind";
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (n.input(i) && n.input(i).kind() == ElemKind::Float32 &&
        !(n.input(i).node->kind() == NodeKind::Constant && l->takesFloatConstant(i)))
      return "float32 operand (the node was not quantized)";
  if (std::string why = l->check(n, t); !why.empty())
    return why;
  if (l->needsHostLayout(n, t) && f.numUses(n.input(0).node) != 1)
    return "it runs only on its input laid out by the host (patches), which the host writes "
           "only for a graph input this node alone reads; here the input has " +
           std::to_string(f.numUses(n.input(0).node)) + " readers";
  return "";
}

/// The row copy of an output that is an input unchanged (DMA in, DMA out).
LayerInfo emitCopy(const OutputCopy& c, LayerCtx& ctx) {
  LayerInfo info;
  emitRowCopy(c.from.offset, c.to.offset, c.to.rows(), ctx, info);
  return info;
}

/// Residual Adds fused into the layer producing one of their operands (producer -> Add):
/// an Add of two equal-shape operands, one of which is the result of a layer that takes
/// a residual (Layer::checkResidual) and that nothing else reads. The producer is then
/// emitted at the Add's place, after the Add's other operand exists.
std::map<const Node*, const Node*> residualFusions(const Function& f, const Target& t,
                                                   const CompileOptions& opts) {
  std::map<const Node*, const Node*> out;
  if (!opts.fuseResidual || !t.quantizedAdd())
    return out;
  for (const auto& n : f.nodes()) {
    if (n->kind() != NodeKind::Add || n->input(0) == n->input(1))
      continue;
    const Shape& y = n->resultType(0).dims;
    if (n->input(0).dims() != y || n->input(1).dims() != y)
      continue;
    for (unsigned i = 0; i < 2; ++i) {
      const Node* p = n->input(i).node;
      const Layer* l = findLayer(p->kind());
      if (!l || f.numUses(p) != 1 || !l->checkResidual(*p, t).empty())
        continue;
      out[p] = n.get();
      break;
    }
  }
  return out;
}

/// Luts fused into the layer producing their input (producer -> Lut): the producer's
/// requantize is followed by the table (Layer::checkEpilogueLut) and it writes the Lut's
/// result; nothing else may read its own. Added to `out` (the residual fusions), which
/// takes a producer once.
void addLutFusions(const Function& f, const Target& t, const CompileOptions& opts,
                   std::map<const Node*, const Node*>& out) {
  if (!opts.fuseLut)
    return;
  for (const auto& n : f.nodes()) {
    if (n->kind() != NodeKind::Lut)
      continue;
    const Node* p = n->input(0).node;
    const Layer* l = findLayer(p->kind());
    if (!l || out.count(p) || f.numUses(p) != 1 || !l->checkEpilogueLut(*p, t).empty())
      continue;
    out[p] = n.get();
  }
}

/// Transposes that a MatMul of two activations reads through (its b, used by nothing
/// else): the MatMul gathers its weight blocks from the Transpose's input directly
/// (ActMatMul.cpp), since b transposed back is that input. Attention's keys.
std::set<const Node*> absorbedTransposes(const Function& f, const Target& t) {
  std::set<const Node*> out;
  for (const auto& n : f.nodes()) {
    if (!isActMatMul(*n))
      continue;
    const Node* b = n->input(1).node;
    if (b->kind() == NodeKind::Transpose && f.numUses(b) == 1 && transposeJobOf(*b, t.lanes()))
      out.insert(b);
  }
  return out;
}

/// A layer as the compile loop emits it: a node, with the residual Add or the Lut fused
/// into it (at most one of them).
struct LayerJob {
  const Node* node;
  const Node* residualAdd;
  const Node* lut = nullptr;
  /// The value the layer writes: the fused node's result, else its own.
  NodeValue result() const { return resultOf(residualAdd ? *residualAdd : lut ? *lut : *node); }
};

/// The estimated cycles of layer `l` alone reading resident value `in` and writing
/// resident value `out` (null: through DRAM), emitted into a scratch program, constants
/// and tensor map (a layer may place a constant operand on first use); infinity when the
/// emission refuses it.
double layerTrial(const LayerJob& l, const LayerCtx& ctx, Residency* in, Residency* out) {
  Program scratch(ctx.t, ctx.prog.depth(), ctx.opts.maxInstructions);
  ConstPool consts(0);
  std::map<NodeValue, DramTensor> tensors = ctx.tensors;
  LayerCtx trial{ctx.t, scratch, consts, ctx.opts, tensors, ctx.temp, l.residualAdd, ctx.absorbed};
  trial.readsResident = in;
  trial.writesResident = out;
  trial.epilogueLut = l.lut;
  try {
    scratch.beginLayer("trial");
    findLayer(l.node->kind())->emit(*l.node, trial);
    return scratch.endLayer().cycles;
  } catch (const Error&) {
    return std::numeric_limits<double>::infinity();
  }
}

/// The padding a convolution `n` reads around its input (none for other kinds): the
/// border a resident input needs.
std::array<int64_t, 4> paddingOf(const Node& n) {
  if (n.kind() != NodeKind::Conv || n.input(0).dims().size() != 4)
    return {0, 0, 0, 0};
  const Shape filter(n.input(1).dims().begin() + 2, n.input(1).dims().end());
  const WindowAttrs w = windowOf(n.attrs(), 2, &filter);
  return {w.padBegin(0), w.padBegin(1), w.padEnd(0), w.padEnd(1)};
}

/// Extra columns right of a resident value's lines for a depthwise reader `n` whose
/// lines are `width` rows apart: the fewest (0 .. banks - 1) that minimise its window's
/// act bank conflicts (rule DW1: a 3 x 3 window over lines 16 rows apart puts its taps
/// in 3 banks of 16, three cycles an output, where 19 rows apart puts them in 9). 0 for
/// other readers, which read one act row a cycle.
int64_t residentWidthPad(const Node& n, int64_t width, const Target& t) {
  if (n.kind() != NodeKind::Conv || n.input(0).dims().size() != 4 || !t.depthwise())
    return 0;
  const Shape filter(n.input(1).dims().begin() + 2, n.input(1).dims().end());
  const WindowAttrs w = windowOf(n.attrs(), 2, &filter);
  const int64_t C = n.input(0).dims()[1];
  if (w.group == 1 || w.group != C || w.kernel[1] > t.lanes())
    return 0;
  // Kernel rows per depthwise instruction (ConvCore's depthwiseRows, whole rows).
  const int64_t rows = std::max<int64_t>(1, std::min(w.kernel[0], t.lanes() / w.kernel[1]));
  auto cost = [&](int64_t pitch) {
    double c = 0;
    for (int64_t kh0 = 0; kh0 < w.kernel[0]; kh0 += rows)
      c += t.depthwiseCycles(1024, std::min(rows, w.kernel[0] - kh0), w.kernel[1], w.dilations[1],
                             w.dilations[0] * pitch);
    return c;
  };
  int64_t best = 0;
  const int64_t banks = int64_t(t.isa().memory(isa::mem::kAct).banks);
  for (int64_t e = 1; e < banks; ++e)
    if (cost(width + e) < cost(width + best))
      best = e;
  return best;
}

/// Cross-layer residency (docs/compiler/npu-layers.md, "Cross-layer residency"): when
/// layer `c` is the one reader of layer `p`'s result, both are MAC-array layers and that
/// result (one image, with the border c's padding reads) and what `p` itself reads
/// resident (`in`) take at most 7/8 of the act SRAM, the pair is emitted on trial with the
/// result kept at the top of the act SRAM or just below `in` (p writes it there, c reads
/// it there, no DRAM round trip) and without, and the residency is taken when it is
/// faster. Returns it (c reads the same region). `tempP` / `tempC` are the layers' DRAM
/// temporaries.
std::optional<Residency> residencyOf(const Function& f, const LayerJob& p, const LayerJob& c,
                                     LayerCtx& ctx, std::optional<Residency> in, uint64_t tempP,
                                     uint64_t tempC) {
  auto macLayer = [](const Node& n) {
    return n.kind() == NodeKind::Conv || n.kind() == NodeKind::Gemm || n.kind() == NodeKind::MatMul;
  };
  const NodeValue v = p.result();
  if (!ctx.opts.crossLayerResidency || p.residualAdd || !macLayer(*p.node) || !macLayer(*c.node) ||
      f.numUses(v.node) != 1 || c.node->input(0) != v)
    return std::nullopt;
  const DramTensor& d = ctx.tensor(v);
  const std::array<int64_t, 4> pad = paddingOf(*c.node);
  Residency r{v, ActResident{0, d.CB, d.H, d.W, pad[0], pad[1], pad[2], pad[3]}};
  r.at.padR += residentWidthPad(*c.node, r.at.width(), ctx.t);
  // At the top of the act SRAM, unless that overlaps the region p reads: then just below
  // it. The layers' tiles use the rows below the lowest region (ConvTiling's fits).
  const int64_t A = ctx.t.rows(Mem::Act), n = r.at.rows();
  r.at.base = !in || A - n >= in->at.base + in->at.rows() ? A - n : in->at.base - n;
  const int64_t lowest = std::min(r.at.base, in ? in->at.base : A);
  // The regions may take 7/8 of the act SRAM: the trials below refuse a pair whose tiles
  // do not fit under them or run slower. At half (before 2026-12-07) MobileNetV2's 14 x 14
  // expansion (16 x 19 x 24 rows with its border) could not stay for its depthwise layer.
  if (d.N != 1 || r.at.base < 0 || 8 * (A - lowest) > 7 * A)
    return std::nullopt;
  auto trial = [&](const LayerJob& l, uint64_t temp, std::optional<Residency> reads,
                   std::optional<Residency> writes) {
    ctx.temp = temp;
    Residency* rd = reads ? &*reads : nullptr;
    Residency* wr = writes ? &*writes : nullptr;
    const double cycles = layerTrial(l, ctx, rd, wr);
    return (rd && !rd->held()) || (wr && !wr->held()) ? std::numeric_limits<double>::infinity()
                                                      : cycles;
  };
  const double resident = trial(p, tempP, in, r);
  if (resident == std::numeric_limits<double>::infinity())
    return std::nullopt; // p cannot write it there (no tiling fits, a field overflows)
  const double pair = resident + trial(c, tempC, r, std::nullopt);
  if (!(pair < trial(p, tempP, in, std::nullopt) + trial(c, tempC, std::nullopt, std::nullopt)))
    return std::nullopt;
  return r;
}

/// The nodes the compile loop emits as layers: the compute instructions of the NPU's
/// low-level IR in its order (aliases are views there and emit nothing; the host converts
/// at the I/O boundaries; a layer fused into a residual Add is emitted at the Add's place).
std::vector<const Node*> layerNodes(const DramPlan& plan,
                                    const std::map<const Node*, const Node*>& fused) {
  std::vector<const Node*> work;
  for (const auto& in : plan.lir->instructions()) {
    const Node* n = in->valueKind() == lir::ValueKind::Compute ? in->origin() : nullptr;
    if (n && n->kind() != NodeKind::QuantizeLinear && n->kind() != NodeKind::DequantizeLinear &&
        !fused.count(n))
      work.push_back(n);
  }
  return work;
}

/// Emits item `i` of the `total` the compile loop emits (node `n`'s layer, or from
/// `layers` on an output's row copy) into the layer begun, and ends that layer. Checks
/// that the layer took the residency its trial took, and hands on what it left in SRAM
/// (`reads` = `writes`, for the next layer). A ProgramTooLong gains the layer's place
/// and a hint.
std::pair<LayerInfo, LayerTiming> emitLayer(const Node& n, size_t i, size_t layers, size_t total,
                                            const DramPlan& plan, LayerCtx& ctx,
                                            std::optional<Residency>& reads,
                                            const std::optional<Residency>& writes) {
  Program& prog = ctx.prog;
  LayerInfo info;
  try {
    info = i < layers ? findLayer(n.kind())->emit(n, ctx) : emitCopy(plan.copies[i - layers], ctx);
    for (const auto* r : {ctx.readsResident, ctx.writesResident})
      if (r && !r->held())
        throw Error(nodeRef(n), "NPU backend: internal: the layer did not take the residency "
                                "its trial took");
    reads = writes; // the next layer reads what this one left in SRAM
    if (reads) {
      reads->applied = false;
      reads->jobs = 0;
    }
    ctx.readsResident = ctx.writesResident = nullptr;
    if (prog.layerDepthLowered()) // whichever layer lowered it, the summary says so
      info.tiling += " single-buffered";
    return {info, prog.endLayer(i + 1 == total)};
  } catch (const ProgramTooLong& e) {
    throw ProgramTooLong(e.where() + " (layer " + std::to_string(i + 1) + " of " +
                             std::to_string(total) + ")",
                         e.reason() + ": this description's SRAMs are too small for the "
                                      "model's tiles to be few (larger SRAMs make larger "
                                      "tiles; ember-dse names the sizes at which it compiles)");
  }
}

/// The summary row of layer `name` (node `n`, "+Add" / "+Lut" when a residual Add or a Lut
/// is fused in).
LayerSummary layerSummary(const std::string& name, const Node& n, const LayerCtx& ctx,
                          const LayerInfo& info, const LayerTiming& lt) {
  LayerSummary ls;
  ls.name = name;
  ls.kind =
      std::string(n.kindName()) + (ctx.residualAdd ? "+Add" : "") + (ctx.epilogueLut ? "+Lut" : "");
  ls.tiles = lt.steps;
  ls.instructions = lt.instructions;
  ls.cycles = lt.cycles;
  ls.macs = info.macs;
  ls.tiling = info.tiling;
  return ls;
}

/// Fills `bin` with the finished program, its constants and the plan's I/O table and
/// memory map (the constant region added when there are constants); returns its ELF.
std::vector<uint8_t> assemble(Program& prog, ConstPool& pool, const DramPlan& plan,
                              const isa::IsaDescription& isa, isa::Binary& bin) {
  bin = isa::Binary::forIsa(isa);
  bin.code = std::move(prog.code());
  bin.debug = std::move(prog.debug());
  bin.constants = std::move(pool.bytes());
  bin.io = plan.io;
  bin.memmap = plan.regions;
  if (!bin.constants.empty())
    bin.memmap.push_back(
        {"const", isa::RegionKind::Const, plan.constBase, roundUp(bin.constants.size(), 64)});
  return isa::serializeElf(bin, isa);
}

/// The program-wide figures of the summary: instructions, cycles, each SRAM's peak rows
/// `peak` against its size, the DRAM and binary sizes, and the compile time since `t0`.
void summarize(CompileSummary& sum, const isa::Binary& bin, size_t elfBytes, const Program& prog,
               const int64_t (&peak)[4], const DramPlan& plan, const Target& t,
               const isa::IsaDescription& isa, std::chrono::steady_clock::time_point t0) {
  sum.instructions = static_cast<int64_t>(bin.code.size());
  sum.cycles = prog.cycles();
  const char* names[4] = {isa::mem::kAct, isa::mem::kWeight, isa::mem::kAcc, isa::mem::kParam};
  const Mem mems[4] = {Mem::Act, Mem::Weight, Mem::Acc, Mem::Param};
  for (int m = 0; m < 4; ++m)
    sum.sram.push_back({names[m], peak[m], t.rows(mems[m])});
  sum.constantBytes = bin.constants.size();
  sum.scratchBytes = plan.scratchBytes;
  sum.ioBytes = plan.ioBytes;
  sum.binaryBytes = elfBytes;
  sum.peakMacsPerCycle = isa.peakMacsPerCycle();
  sum.clockHz = isa.hw().clock_hz;
  sum.compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

std::vector<std::string> unsupportedNodes(const Function& f, const isa::IsaDescription& isa) {
  const Target t(isa);
  std::vector<std::string> out;
  for (const auto& n : f.nodes()) {
    std::string why;
    try {
      why = whyUnsupported(f, *n, t);
    } catch (const Error& e) {
      why = e.what();
    }
    if (!why.empty())
      out.push_back(nodeRef(*n) + ": " + why);
  }
  return out;
}

RegionSupport::RegionSupport(const isa::IsaDescription& isa)
    : target_(std::make_unique<Target>(isa)) {}
RegionSupport::~RegionSupport() = default;

std::string RegionSupport::layerReason(const Function& f, const Node& n) const {
  if (n.kind() == NodeKind::QuantizeLinear || n.kind() == NodeKind::DequantizeLinear)
    return "converts between float and int8, which the host does in a partitioned model";
  try {
    return whyUnsupported(f, n, *target_);
  } catch (const Error& e) {
    return e.what();
  }
}

std::string RegionSupport::boundaryReason(const NodeValue& v) const {
  return checkActivation(v, "the value");
}

std::vector<std::string> unsupportedNodes(const Function& f) {
  return unsupportedNodes(f, isa::IsaDescription::loadDefault());
}

void throwUnsupported(const Function& f, const std::vector<std::string>& bad,
                      const std::string& note) {
  std::string msg = std::to_string(bad.size()) + " node(s) of the quantized model (function '" +
                    f.name() + "') cannot run on the NPU" + (note.empty() ? "" : " " + note) + ":";
  for (const auto& b : bad)
    msg += "\n  " + b;
  throw Unsupported(
      f.module().source().empty() ? "npu backend" : f.module().source() + ": npu backend", msg);
}

CompileResult compile(const Function& f, const isa::IsaDescription& isa,
                      const CompileOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  const Target t(isa);
  if (const std::vector<std::string> bad = unsupportedNodes(f, isa); !bad.empty())
    throwUnsupported(f, bad);

  std::map<const Node*, const Node*> fused = residualFusions(f, t, opts);
  addLutFusions(f, t, opts, fused);
  std::map<const Node*, const Node*> producerOf; // fused Add -> its producer
  for (const auto& [producer, add] : fused)
    producerOf[add] = producer;
  // The low-level IR's schedule (shared with the CPU backend): the lowest-peak of its
  // orders, never worse than the function's own.
  const lir::NodeOrder order = lir::memoryMinimizingOrder(f);
  DramPlan plan = planDram(f, t, order, fused, opts, absorbedTransposes(f, t));
  ConstPool pool(plan.constBase);
  Program prog(t, opts.doubleBuffer ? 2 : 1, opts.maxInstructions);
  LayerCtx ctx{t, prog, pool, opts, plan.tensors};
  ctx.absorbed = &plan.absorbed;
  CompileResult res;
  CompileSummary& sum = res.summary;
  sum.isaName = isa.name();
  int64_t peak[4] = {};
  std::vector<const Node*> work = layerNodes(plan, fused);
  // Outputs that are inputs unchanged: one row copy each, after the layers.
  const size_t layers = work.size();
  for (const OutputCopy& c : plan.copies)
    work.push_back(c.node);
  // A fused residual Add or Lut is emitted as its producer, which writes its result.
  auto jobOf = [&](size_t i) {
    const auto fusedWith = producerOf.find(work[i]);
    if (fusedWith == producerOf.end())
      return LayerJob{work[i], nullptr};
    if (work[i]->kind() == NodeKind::Lut)
      return LayerJob{fusedWith->second, nullptr, work[i]};
    return LayerJob{fusedWith->second, work[i]};
  };
  auto tempOf = [&](const Node* n) { return plan.temps.count(n) ? plan.temps.at(n) : 0; };
  std::optional<Residency> reads; // the resident value this layer reads
  for (size_t i = 0; i < work.size(); ++i) {
    const LayerJob job = jobOf(i);
    const Node& n = *job.node;
    std::optional<Residency> writes;
    if (i + 1 < layers)
      writes = residencyOf(f, job, jobOf(i + 1), ctx, reads, tempOf(&n), tempOf(jobOf(i + 1).node));
    ctx.readsResident = reads ? &*reads : nullptr;
    ctx.writesResident = writes ? &*writes : nullptr;
    ctx.residualAdd = job.residualAdd;
    ctx.epilogueLut = job.lut;
    const Node* with = job.residualAdd ? job.residualAdd : job.lut;
    const std::string name = n.name() + (with ? " + " + with->name() : "");
    prog.beginLayer(name);
    ctx.temp = tempOf(&n);
    const auto [info, lt] = emitLayer(n, i, layers, work.size(), plan, ctx, reads, writes);
    sum.layers.push_back(layerSummary(name, n, ctx, info, lt));
    sum.macs += info.macs;
    for (int m = 0; m < 4; ++m)
      peak[m] = std::max(peak[m], info.sram[m]);
  }
  prog.finish();
  res.lir = std::move(plan.lir);
  const std::vector<uint8_t> elf = assemble(prog, pool, plan, isa, res.binary);
  summarize(sum, res.binary, elf.size(), prog, peak, plan, t, isa, t0);
  return res;
}

} // namespace ember::npu
