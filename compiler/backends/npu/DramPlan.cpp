#include "DramPlan.h"

#include "ember/lir/MemoryPlanner.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <tuple>

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

/// A buffer of the scratch region with its lifetime in node positions.
struct Interval {
  uint64_t offset, size;
  size_t def, lastUse;
};

} // namespace

DramPlan planDram(const Function& f, const Target& t, const std::vector<const Node*>& order,
                  const std::map<const Node*, const Node*>& emittedWith, const CompileOptions& opts,
                  const std::set<const Node*>& absorbed) {
  // Buffers start on a DMA burst boundary (hardware.dma.burst_bytes), so a row run never
  // costs an extra burst at its start.
  const uint64_t kAlign = std::max<uint64_t>(1, t.isa().hw().dma.burst_bytes);
  const int64_t L = t.lanes();
  DramPlan plan;
  std::map<const Node*, size_t> pos;
  size_t i = 0;
  for (const Node* n : order)
    pos[n] = i++;
  if (pos.size() != f.nodes().size())
    throw Error("NPU backend", "internal: the layer order does not hold every node once");
  const std::map<const Node*, size_t> orderPos = pos; // ties of the placement order below
  for (const auto& [node, place] : emittedWith)
    pos[node] = pos.at(place);
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

  // Intermediate values: roots (aliases share their input's buffer) with lifetimes.
  std::map<NodeValue, NodeValue> root;
  std::map<NodeValue, Interval> life;
  std::map<const Node*, NodeValue> tempKeys;
  for (const Node* n : order) {
    const Node& node = *n;
    if (node.kind() == NodeKind::QuantizeLinear || node.kind() == NodeKind::DequantizeLinear)
      continue;
    const size_t p = pos[&node];
    for (const auto& in : node.inputs()) {
      if (!in || !root.count(in))
        continue;
      Interval& iv = life[root[in]];
      iv.lastUse = std::max(iv.lastUse, p);
    }
    const Layer* l = findLayer(node.kind());
    const NodeValue v = resultOf(node), src = node.input(0);
    // Whether the result can share its input's bytes: an intermediate input, or a graph
    // input that is not also an output (an output value or a constant has no buffer to
    // share). An absorbed node that cannot is emitted as usual (Compile.cpp).
    const bool shareable =
        !plan.tensors.count(v) &&
        (root.count(src) || (plan.tensors.count(src) && !outputValues.count(src)));
    const bool alias = shareable && (absorbed.count(&node) || (l && l->aliasesInput(node, t)));
    if (l) {
      if (const uint64_t tb = hostPacked.count(&node) || (alias && absorbed.count(&node))
                                  ? 0
                                  : l->tempBytes(node, t)) {
        // A temporary alive only while its layer runs: keyed by a result index no node
        // has (the node's numResults()).
        const NodeValue key(const_cast<Node*>(&node), unsigned(node.numResults()));
        life[key] = Interval{0, roundUp(tb, kAlign), p, p};
        tempKeys[&node] = key;
      }
    }
    if (plan.tensors.count(v))
      continue; // an output
    if (alias && absorbed.count(&node))
      plan.absorbed.insert(&node);
    if (alias && root.count(src)) {
      // Alias of an intermediate value: shares (and extends the life of) its buffer.
      root[v] = root[src];
      plan.aliased.insert(&node);
      continue;
    }
    if (alias) {
      // Alias of a graph input: same bytes, new shape.
      DramTensor d = dramTensorOf(v, L);
      d.offset = plan.tensors[src].offset;
      plan.tensors[v] = d;
      plan.aliased.insert(&node);
      continue;
    }
    root[v] = v;
    // A layer fused into the residual Add after it writes the Add's result: its own
    // result never reaches DRAM and needs no bytes.
    const uint64_t bytes =
        emittedWith.count(&node) ? 0 : roundUp(bytesOf(dramTensorOf(v, L), L), kAlign);
    life[v] = Interval{0, bytes, p, p};
  }
  // Values read after an alias extend their root's life (done above through root[]).
  // The buffers go to the low-level IR's memory planner in definition order (its
  // placement orders break ties by that index). A layer's temporary and its result share
  // a definition position, and so do a layer emitted at a fused Add's place and that
  // Add: the node's place in the order, then the result index (the temporary's is
  // numResults()) break the tie. Never the map's order, which is the order of node
  // addresses and so differs from run to run.
  std::vector<NodeValue> buffers;
  for (auto& kv : life)
    buffers.push_back(kv.first);
  auto key = [&](const NodeValue& v) {
    return std::make_tuple(life[v].def, orderPos.at(v.node), v.resNo);
  };
  std::sort(buffers.begin(), buffers.end(),
            [&](const NodeValue& a, const NodeValue& b) { return key(a) < key(b); });
  std::vector<lir::BufferInterval> intervals;
  for (const NodeValue& v : buffers)
    intervals.push_back({size_t(life[v].size), life[v].def, life[v].lastUse});
  lir::MemoryPlanOptions mo;
  mo.alignment = size_t(kAlign);
  const lir::MemoryPlan placed = lir::planIntervals(intervals, mo);
  for (size_t b = 0; b < buffers.size(); ++b)
    life[buffers[b]].offset = placed.offsets[b];
  const uint64_t scratchEnd = placed.arenaBytes;
  for (auto& kv : root) {
    DramTensor d = dramTensorOf(kv.first, L);
    d.offset = scratchBase + life[kv.second].offset;
    plan.tensors[kv.first] = d;
  }
  for (auto& kv : tempKeys)
    plan.temps[kv.first] = scratchBase + life[kv.second].offset;
  plan.scratchBytes = scratchEnd;
  if (scratchEnd > 0)
    plan.regions.push_back(
        {"scratch", isa::RegionKind::Scratch, scratchBase, roundUp(scratchEnd, kRegion)});
  plan.constBase = scratchBase + roundUp(scratchEnd, kRegion);
  return plan;
}

} // namespace ember::npu
