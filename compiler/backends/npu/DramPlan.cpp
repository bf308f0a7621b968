#include "DramPlan.h"

#include "NpuLir.h"

#include "ember/lir/MemoryPlanner.h"
#include "ember/lir/Passes.h"
#include "ember/support/Error.h"

#include <algorithm>

namespace ember::npu {

namespace {

constexpr uint64_t kRegion = 4096; // region boundaries

uint64_t bytesOf(const DramTensor& d, int64_t L) {
  return uint64_t(d.rows() * L);
}

isa::IoEntry ioEntry(const std::string& name, isa::IoDir dir, const NodeValue& v,
                     const DramTensor& d, int64_t L) {
  isa::IoEntry e;
  e.name = name;
  e.dir = dir;
  e.dtype = isa::DType::Int8;
  e.layout = d.packing.pixels     ? isa::Layout::Packed
             : d.patches.kernel_h ? isa::Layout::Patches
                                  : isa::Layout::Nchwc;
  e.packing = d.packing;
  e.patches = d.patches;
  // A rank-2 [N, C] value is laid out as [N, C, 1, 1]; the I/O table says so explicitly
  // (the binary format's Nchwc layout is defined on rank-4 shapes).
  e.shape = nchwOf(v.dims());
  e.scale = d.scale;
  e.zero_point = d.zp;
  e.dram_offset = d.offset;
  e.size_bytes = bytesOf(d, L);
  return e;
}

/// The scratch region: the NPU's low-level IR of `f` (NpuLir.h) with aliases as views
/// and temporaries as allocations, placed from `scratchBase` by the low-level IR's memory
/// planner over the NPU's buffer sizes; fills plan.lir, the intermediate tensors, temps,
/// aliased, absorbed, the scratch region and constBase.
void planScratch(const Function& f, const Target& t, const std::vector<const Node*>& order,
                 const std::map<const Node*, const Node*>& emittedWith,
                 const std::set<const Node*>& absorbed, const std::set<const Node*>& hostPacked,
                 const std::set<NodeValue>& outputValues, uint64_t scratchBase, DramPlan& plan) {
  const uint64_t kAlign = std::max<uint64_t>(1, t.isa().hw().dma.burst_bytes);
  const int64_t L = t.lanes();
  // Intermediate values: the low-level IR of the layers in emission order (NpuLir.h).
  plan.lir = generateNpuLir(f, order, emittedWith);
  lir::Function& fn = *plan.lir;
  const std::map<const Node*, lir::Instruction*> compute = computeInstructions(fn);
  // Layers whose result is their input's bytes become views of it, when the input has a
  // buffer to share: an intermediate value or a graph input, not an output (the I/O
  // table places it) nor a constant. An absorbed node that cannot is emitted as usual
  // (Compile.cpp).
  auto hasSharableBuffer = [&](const NodeValue& v) {
    return v && !outputValues.count(v) && v.node->kind() != NodeKind::Constant &&
           v.node->kind() != NodeKind::Placeholder;
  };
  for (const Node* n : order) {
    const Layer* l = findLayer(n->kind());
    if (!l || plan.tensors.count(resultOf(*n)) || !hasSharableBuffer(n->input(0)))
      continue;
    if (!absorbed.count(n) && !l->aliasesInput(*n, t))
      continue;
    replaceByView(fn, compute.at(n));
    plan.aliased.insert(n);
    if (absorbed.count(n))
      plan.absorbed.insert(n);
  }
  lir::runShrinkLiveRanges(fn);
  // A layer's DRAM temporary lives only while the layer runs.
  std::map<const lir::Value*, uint64_t> tempBytes;
  std::map<const Node*, const lir::Instruction*> temps;
  for (const Node* n : order) {
    const Layer* l = findLayer(n->kind());
    if (!l || plan.aliased.count(n) || hostPacked.count(n))
      continue;
    if (const uint64_t tb = l->tempBytes(*n, t)) {
      const lir::Instruction* a = addTemporary(fn, compute.at(n), tb);
      tempBytes[a] = roundUp(tb, kAlign);
      temps[n] = a;
    }
  }
  joinFusedLiveRanges(fn, emittedWith);
  // Which graph value each allocation and view holds.
  std::map<const lir::Value*, NodeValue> valueOf;
  for (const auto& in : fn.instructions()) {
    if (!in->origin())
      continue;
    if (in->valueKind() == lir::ValueKind::View)
      valueOf[in.get()] = resultOf(*in->origin());
    else if (in->valueKind() == lir::ValueKind::Compute)
      for (unsigned r = 0; r < in->numResults(); ++r)
        valueOf[in->operand(r).value] = NodeValue(const_cast<Node*>(in->origin()), r);
  }
  // The low-level IR's memory planner over the NPU's buffer sizes (NCHWc, channels
  // padded, aligned to a burst). Values the I/O table places, float results of the host's
  // DequantizeLinear, a layer's secondary results (which no layer reads) and layers fused
  // into a residual Add (their result never reaches DRAM) take no bytes.
  auto inScratch = [&](const NodeValue& v) {
    return !plan.tensors.count(v) && v.node->kind() != NodeKind::DequantizeLinear && v.resNo == 0;
  };
  auto bytesOfAlloc = [&](const lir::Instruction& a) -> size_t {
    if (const auto it = tempBytes.find(&a); it != tempBytes.end())
      return it->second;
    const NodeValue v = valueOf.at(&a);
    if (!inScratch(v) || emittedWith.count(v.node))
      return 0;
    return roundUp(bytesOf(dramTensorOf(v, L), L), kAlign);
  };
  lir::MemoryPlanOptions mo;
  mo.alignment = size_t(kAlign);
  const lir::FunctionMemoryPlan placed = lir::planMemory(fn, mo, bytesOfAlloc);
  std::map<const lir::Value*, uint64_t> offsetOf;
  for (size_t b = 0; b < placed.allocs.size(); ++b)
    offsetOf[placed.allocs[b]] = scratchBase + placed.plan.offsets[b];
  const uint64_t scratchEnd = placed.plan.arenaBytes;
  for (const auto& [value, v] : valueOf) {
    if (!inScratch(v))
      continue;
    const lir::Location at = lir::locate(const_cast<lir::Value*>(value));
    const auto io = plan.tensors.find(valueOf.at(at.root));
    DramTensor d = dramTensorOf(v, L);
    d.offset = (io != plan.tensors.end() ? io->second.offset : offsetOf.at(at.root)) + at.offset;
    plan.tensors[v] = d;
  }
  for (const auto& [n, a] : temps)
    plan.temps[n] = offsetOf.at(a);
  plan.scratchBytes = scratchEnd;
  if (scratchEnd > 0)
    plan.regions.push_back(
        {"scratch", isa::RegionKind::Scratch, scratchBase, roundUp(scratchEnd, kRegion)});
  plan.constBase = scratchBase + roundUp(scratchEnd, kRegion);
}

} // namespace

DramPlan planDram(const Function& f, const Target& t, const std::vector<const Node*>& order,
                  const std::map<const Node*, const Node*>& emittedWith, const CompileOptions& opts,
                  const std::set<const Node*>& absorbed) {
  // Buffers start on a DMA burst boundary (hardware.dma.burst_bytes), so a row run never
  // costs an extra burst at its start.
  const uint64_t kAlign = std::max<uint64_t>(1, t.isa().hw().dma.burst_bytes);
  const int64_t L = t.lanes();
  DramPlan plan;
  std::set<NodeValue> outputValues;
  for (const auto& o : f.outputs())
    if (o.value.node->kind() == NodeKind::DequantizeLinear)
      outputValues.insert(o.value.node->input(0));

  // Inputs: QuantizeLinear of a placeholder. One that a single layer reads, in the
  // layout it asks for (Layer::hostLayout), the host then writes so.
  uint64_t off = 0;
  std::set<std::string> names;
  std::set<const Node*> hostPacked; // layers whose input 0 is host-packed
  for (const auto& n : f.nodes()) {
    if (n->kind() != NodeKind::QuantizeLinear)
      continue;
    const NodeValue v = resultOf(*n);
    DramTensor d = dramTensorOf(v, L);
    if (opts.packInputsOnHost && f.numUses(n.get()) == 1 && !outputValues.count(v))
      for (const auto& u : f.nodes())
        if (u->numInputs() > 0 && u->input(0) == v)
          if (const Layer* l = findLayer(u->kind()))
            if (const auto hl = l->hostLayout(*u, t, opts)) {
              if (const isa::IoPacking& pk = hl->packing; pk.pixels) {
                d.C *= pk.pixels;
                d.W = pk.width;
                d.CB = 1;
              } else {
                const isa::IoPatches& pt = hl->patches;
                d.C *= int64_t(pt.kernel_h) * pt.kernel_w;
                d.H = pt.out_h;
                d.W = pt.out_w;
                d.CB = ceilDiv(d.C, L);
              }
              d.packing = hl->packing;
              d.patches = hl->patches;
              hostPacked.insert(u.get());
            }
    d.offset = off;
    plan.tensors[v] = d;
    std::string name = n->input(0).node->name();
    if (!names.insert(name).second)
      name = n->name();
    plan.io.push_back(ioEntry(name, isa::IoDir::Input, v, d, L));
    off = roundUp(off + bytesOf(d, L), kAlign);
  }
  if (off > 0)
    plan.regions.push_back({"input", isa::RegionKind::Input, 0, roundUp(off, kRegion)});
  const uint64_t outBase = roundUp(off, kRegion);
  off = outBase;
  for (const auto& o : f.outputs()) {
    if (names.count(o.name))
      throw Error(f.module().source().empty() ? "npu backend"
                                              : f.module().source() + ": npu backend",
                  "graph output '" + o.name +
                      "' has the name of a graph input (the model returns its input under the "
                      "same name); the binary's I/O table names each entry once: give the "
                      "output another name (an Identity node)");
    if (o.value.node->kind() != NodeKind::DequantizeLinear)
      throw Unsupported(
          f.module().source().empty() ? "npu backend" : f.module().source() + ": npu backend",
          "graph output '" + o.name + "' is " + o.value.node->kindName() + " '" +
              o.value.node->name() + "', not an int8 value the NPU computes (a constant output?)");
    const NodeValue v = o.value.node->input(0);
    auto it = plan.tensors.find(v);
    if (it != plan.tensors.end() && v.node->kind() == NodeKind::QuantizeLinear) {
      // A graph input returned unchanged: a buffer of its own, filled by a row copy.
      DramTensor d = it->second;
      d.offset = off;
      off = roundUp(off + bytesOf(d, L), kAlign);
      plan.copies.push_back({o.value.node, it->second, d});
      plan.io.push_back(ioEntry(o.name, isa::IoDir::Output, v, d, L));
      continue;
    }
    if (it == plan.tensors.end()) {
      DramTensor d = dramTensorOf(v, L);
      d.offset = off;
      off = roundUp(off + bytesOf(d, L), kAlign);
      it = plan.tensors.emplace(v, d).first;
    }
    plan.io.push_back(ioEntry(o.name, isa::IoDir::Output, v, it->second, L));
  }
  if (off > outBase)
    plan.regions.push_back(
        {"output", isa::RegionKind::Output, outBase, roundUp(off - outBase, kRegion)});
  const uint64_t scratchBase = roundUp(off, kRegion);
  plan.ioBytes = scratchBase;

  planScratch(f, t, order, emittedWith, absorbed, hostPacked, outputValues, scratchBase, plan);
  return plan;
}

} // namespace ember::npu
