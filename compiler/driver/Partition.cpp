// The partitioner: placement with reasons, segments, NPU compiles, the cost model.
#include "ember/driver/Partition.h"

#include "PlacementCut.h"
#include "SegmentBuild.h"

#include "ember/backend/Backend.h"
#include "ember/driver/Estimate.h"
#include "ember/graph/AttrViews.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cstdio>

namespace ember::partition {

using detail::buildSegmentFunction;
using detail::findBoundaries;
using detail::formSegments;

const char* fallbackName(Fallback f) {
  switch (f) {
  case Fallback::Cpu:
    return "cpu";
  case Fallback::Interp:
    return "interp";
  case Fallback::None:
    return "none";
  }
  return "?";
}

Fallback parseFallback(const std::string& s) {
  if (s == "cpu") {
    const std::vector<std::string> names = backendNames();
    if (std::find(names.begin(), names.end(), "cpu") == names.end())
      throw UsageError("--fallback cpu", "this build has no cpu backend (EMBER_WITH_LLVM=OFF); "
                                         "use --fallback interp");
    return Fallback::Cpu;
  }
  if (s == "interp")
    return Fallback::Interp;
  if (s == "none")
    return Fallback::None;
  throw UsageError("--fallback", "expects cpu, interp or none, got '" + s + "'");
}

Fallback defaultFallback() {
  const std::vector<std::string> names = backendNames();
  return std::find(names.begin(), names.end(), "cpu") != names.end() ? Fallback::Cpu
                                                                     : Fallback::Interp;
}

int64_t nodeMacs(const Node& n) {
  auto outElems = [&] { return n.resultType().size(); };
  auto tail = [](const Shape& s, size_t from) {
    int64_t p = 1;
    for (size_t i = from; i < s.size(); ++i)
      p *= s[i];
    return p;
  };
  switch (n.kind()) {
  case NodeKind::Conv:
    return outElems() * tail(n.input(1).dims(), 1);
  case NodeKind::ConvTranspose:
    return n.input(0).type().size() * tail(n.input(1).dims(), 1);
  case NodeKind::MatMul:
    return n.input(0).dims().empty() ? 0 : outElems() * n.input(0).dims().back();
  case NodeKind::Gemm: {
    const Shape& a = n.input(0).dims();
    if (a.size() != 2)
      return 0;
    return outElems() * (gemmOf(n.attrs()).transA ? a[0] : a[1]);
  }
  default:
    return 0;
  }
}

const NodePlacement& Plan::placementOf(const std::string& name) const {
  for (const NodePlacement& n : nodes)
    if (n.name == name)
      return n;
  throw Error("node '" + name + "'", "not in the placement of '" + functionName + "'");
}

size_t Plan::npuNodes() const {
  size_t k = 0;
  for (const NodePlacement& n : nodes)
    k += n.backend == "npu";
  return k;
}

int64_t Plan::totalMacs() const {
  int64_t m = 0;
  for (const NodePlacement& n : nodes)
    m += n.macs;
  return m;
}

int64_t Plan::npuMacs() const {
  int64_t m = 0;
  for (const NodePlacement& n : nodes)
    if (n.backend == "npu")
      m += n.macs;
  return m;
}

size_t Plan::npuSegments() const {
  size_t k = 0;
  for (const Segment& s : segments)
    k += s.backend == "npu";
  return k;
}

uint64_t Plan::boundaryBytes() const {
  if (whole)
    return 0;
  uint64_t b = 0;
  for (const Segment& s : segments)
    if (s.backend == "npu") {
      for (size_t i : s.inputs)
        b += values[i].bytes();
      for (size_t i : s.outputs)
        b += values[i].bytes();
    }
  return b;
}

namespace {

std::string ref(const Node& n) {
  return std::string(n.kindName()) + " '" + n.name() + "'";
}

std::string fmtSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  return buf;
}

/// The partitioner's state: the nodes on the host, with their reasons.
class Partitioner {
public:
  Partitioner(const Function& f, const isa::IsaDescription& isa, const PartitionOptions& o)
      : f_(f), isa_(isa), o_(o), support_(isa), fallback_(createBackend(fallbackName(o.fallback))),
        interp_(createBackend("interp")) {}

  Plan run();

private:
  void placeInitially();
  std::map<const Node*, std::string> hostBackends() const;
  std::string hostBackendOf(const Node& n) const;
  std::string hostReason(const Node& n, const std::string& why) const;
  bool checkBoundaries(Plan& p);
  bool compileRegions(Plan& p);
  bool applyCosts(Plan& p);
  bool applyCut(const Plan& p);
  std::map<const Node*, double> npuNodeSeconds(const Plan& p) const;
  double boundarySeconds(const Type& t) const;
  void toHost(const Node* n, const std::string& why) {
    if (host_.emplace(n, why).second)
      changed_ = true;
  }

  const Function& f_;
  const isa::IsaDescription& isa_;
  const PartitionOptions& o_;
  npu::RegionSupport support_;
  std::unique_ptr<Backend> fallback_, interp_;
  std::map<const Node*, std::string> host_;
  bool changed_ = false;
};

void Partitioner::placeInitially() {
  for (const auto& up : f_.nodes()) {
    const Node* n = up.get();
    if (o_.hostNodes.count(n->name()))
      host_[n] = "placed on the host by name (--host-node)";
    else if (o_.hostKinds.count(n->kindName()))
      host_[n] = std::string("placed on the host by kind (--host-kind ") + n->kindName() + ")";
    else if (std::string why = support_.layerReason(f_, *n); !why.empty())
      host_[n] = why;
  }
}

/// The backend of every node on the host. Refuses (ember::Unsupported, every such node
/// listed at once) when a node placed there runs on neither the fallback nor the
/// interpreter: a package is never written with a segment its backend cannot run.
std::map<const Node*, std::string> Partitioner::hostBackends() const {
  std::map<const Node*, std::string> out;
  std::vector<std::string> none;
  for (const auto& up : f_.nodes()) { // in the function's order: a reproducible message
    auto it = host_.find(up.get());
    if (it == host_.end())
      continue;
    std::string b = hostBackendOf(*up);
    if (b.empty())
      none.push_back(ref(*up) + ": not on the NPU (" + it->second + "), and neither the " +
                     fallback_->name() + " backend nor the interpreter runs it");
    out.emplace(up.get(), std::move(b));
  }
  if (!none.empty()) {
    std::string msg = std::to_string(none.size()) + " node(s) of the quantized model (function '" +
                      f_.name() + "') run on no backend of this build:";
    for (const std::string& line : none)
      msg += "\n  " + line;
    const std::string& src = f_.module().source();
    throw Unsupported(src.empty() ? "partition" : src + ": partition", msg);
  }
  return out;
}

/// The fallback when it runs `n`, else the interpreter when it does, else "".
std::string Partitioner::hostBackendOf(const Node& n) const {
  if (fallback_->supports(n))
    return fallback_->name();
  return interp_->supports(n) ? interp_->name() : "";
}

/// A host node's reason, with why it runs on the interpreter rather than the fallback.
std::string Partitioner::hostReason(const Node& n, const std::string& why) const {
  if (fallback_->supports(n) || fallback_->name() == interp_->name())
    return why;
  return why + "; on the interpreter: the " + fallback_->name() + " backend cannot run it";
}

/// Boundary values the NPU cannot take: their NPU consumers and producers go to the host.
bool Partitioner::checkBoundaries(Plan& p) {
  changed_ = false;
  for (const Segment& s : p.segments) {
    if (s.backend != "npu")
      continue;
    for (size_t i : s.inputs) {
      const BoundaryValue& b = p.values[i];
      const std::string why = support_.boundaryReason(b.value);
      if (why.empty())
        continue;
      for (const Node* n : s.nodes)
        for (const NodeValue& v : n->inputs())
          if (v == b.value)
            toHost(n, "its input '" + b.key + "' cannot enter the NPU: " + why);
    }
    for (size_t i : s.outputs) {
      const BoundaryValue& b = p.values[i];
      if (const std::string why = support_.boundaryReason(b.value); !why.empty())
        toHost(b.value.node, "its result cannot leave the NPU: " + why);
    }
  }
  return changed_;
}

/// Builds and compiles every NPU segment; nodes the NPU refuses in context, and regions
/// that do not compile, go to the host.
bool Partitioner::compileRegions(Plan& p) {
  changed_ = false;
  for (Segment& s : p.segments) {
    if (s.backend != "npu")
      continue;
    // Layers the NPU refuses in the region's context go to the host; anything else
    // wrong (an edge the NPU cannot take, a plan that does not fit) fails the compile.
    bool refused = false;
    for (const auto& [copy, orig] : buildSegmentFunction(p, s))
      if (std::string why = support_.layerReason(*s.function, *copy); !why.empty()) {
        toHost(orig, why);
        refused = true;
      }
    if (refused)
      continue;
    try {
      s.npu = std::make_shared<npu::CompileResult>(npu::compile(*s.function, isa_, o_.npu));
    } catch (const Error& e) {
      for (const Node* n : s.nodes)
        toHost(n, std::string("its NPU region does not compile: ") + e.what());
    }
  }
  return changed_;
}

/// Regions too small, or slower on the NPU than on the host (estimated), go to the host.
bool Partitioner::applyCosts(Plan& p) {
  changed_ = false;
  const double clock = double(isa_.hw().clock_hz);
  for (Segment& s : p.segments) {
    if (s.backend != "npu")
      continue;
    double transfers = 0;
    for (size_t i : s.inputs)
      transfers += boundarySeconds(p.values[i].type);
    for (size_t i : s.outputs)
      transfers += boundarySeconds(p.values[i].type);
    s.npuSeconds = s.npu->summary.cycles / clock + o_.npuLaunchSeconds + transfers;
    s.hostSeconds = hostSeconds(o_, s.macs, s.elements);
    if (s.nodes.size() < o_.minRegionNodes) {
      for (const Node* n : s.nodes)
        toHost(n, "its NPU region has " + std::to_string(s.nodes.size()) +
                      " layer(s), fewer than --min-region " + std::to_string(o_.minRegionNodes));
    } else if (o_.costModel && s.npuSeconds >= s.hostSeconds) {
      for (const Node* n : s.nodes)
        toHost(n, "its NPU region (" + std::to_string(s.nodes.size()) +
                      " layer(s)) is estimated at " + fmtSeconds(s.npuSeconds) +
                      " on the NPU with its boundary, " + fmtSeconds(s.hostSeconds) +
                      " on the host");
    }
  }
  return changed_;
}

/// One value between host and NPU: over the host link and converted by the host. A float
/// value crosses as the int8 codes the NPU reads or writes (the host quantizes and
/// dequantizes), so its bytes are its elements.
double Partitioner::boundarySeconds(const Type& t) const {
  const uint64_t bytes = t.kind == ElemKind::Float32 ? uint64_t(t.size()) : t.sizeInBytes();
  return transferSeconds(isa_, o_, bytes);
}

/// Every NPU node's share of its region's estimated cycles, in seconds: the cycles of the
/// compiled layer of its name (a fused layer, "CONV + ADD", counting for its producer:
/// npu::cyclesByNode), and the cycles no layer names (edge conversions) spread over the
/// region's nodes by their result elements.
std::map<const Node*, double> Partitioner::npuNodeSeconds(const Plan& p) const {
  std::map<const Node*, double> out;
  const double clock = double(isa_.hw().clock_hz);
  for (const Segment& s : p.segments) {
    if (s.backend != "npu" || !s.npu)
      continue;
    const std::map<std::string, double> byName = npu::cyclesByNode(s.npu->summary);
    double named = 0, elems = 0;
    for (const Node* n : s.nodes) {
      auto it = byName.find(n->name());
      out[n] = it == byName.end() ? 0 : it->second / clock;
      named += out[n];
      elems += double(n->resultType().size());
    }
    const double rest = std::max(0.0, s.npu->summary.cycles / clock - named);
    for (const Node* n : s.nodes)
      out[n] += elems > 0 ? rest * double(n->resultType().size()) / elems : 0;
  }
  return out;
}

/// The placement of least estimated time over the compiled regions (a minimum cut of NPU
/// time, host time and boundary transfers, PlacementCut.h): NPU nodes it puts on the host
/// go there. Only NPU -> host moves, as every other step.
bool Partitioner::applyCut(const Plan& p) {
  changed_ = false;
  if (!o_.costModel)
    return false;
  detail::CutCosts c;
  c.npu = npuNodeSeconds(p);
  c.host = [this](const Node& n) { return hostSeconds(o_, nodeMacs(n), n.resultType().size()); };
  c.transfer = [this](const Type& t) { return boundarySeconds(t); };
  for (const Node* n : detail::nodesBetterOnHost(f_, c))
    toHost(n, "the placement of least estimated time puts it on the host (" +
                  fmtSeconds(c.npu.at(n)) + " on the NPU, " + fmtSeconds(c.host(*n)) +
                  " on the host, weighed with the host-link transfers around it)");
  return changed_;
}

Plan Partitioner::run() {
  Plan p;
  p.function = &f_;
  p.functionName = f_.name();
  p.source = f_.module().source();
  p.isaName = isa_.name();
  placeInitially();
  // Every pass moves nodes to the host only, so this ends after at most one pass per node.
  for (size_t pass = 0;; ++pass) {
    if (pass > f_.numNodes() + 2)
      throw InternalError("partition", "placement did not converge");
    p.segments = formSegments(f_, hostBackends());
    findBoundaries(p);
    if (checkBoundaries(p) || compileRegions(p) || applyCosts(p) || applyCut(p))
      continue;
    break;
  }
  std::map<const Node*, int> segOf;
  for (size_t s = 0; s < p.segments.size(); ++s) {
    Segment& seg = p.segments[s];
    if (seg.backend != "npu")
      buildSegmentFunction(p, seg);
    for (const Node* n : seg.nodes)
      segOf[n] = int(s);
  }
  for (const auto& up : f_.nodes()) {
    const Node* n = up.get();
    auto it = host_.find(n);
    const int s = segOf.at(n);
    p.nodes.push_back(NodePlacement{n->name(), n->kindName(), p.segments[size_t(s)].backend,
                                    it == host_.end() ? "" : hostReason(*n, it->second), s,
                                    nodeMacs(*n)});
  }
  return p;
}

} // namespace

Plan partition(const Function& f, const isa::IsaDescription& isa, const PartitionOptions& opts) {
  bool forced = false;
  for (const auto& n : f.nodes())
    forced = forced || opts.hostNodes.count(n->name()) || opts.hostKinds.count(n->kindName());
  for (const std::string& name : opts.hostNodes)
    if (!f.findNode(name))
      throw Error("--host-node " + name, "the quantized model has no node of this name");
  for (const std::string& kind : opts.hostKinds) {
    NodeKind k;
    if (!parseNodeKind(kind, &k))
      throw Error("--host-kind " + kind, "no such node kind (see docs/compiler/operators.md)");
  }
  const std::vector<std::string> bad = npu::unsupportedNodes(f, isa);
  if (bad.empty() && !forced) {
    Plan p;
    p.function = &f;
    p.functionName = f.name();
    p.source = f.module().source();
    p.isaName = isa.name();
    p.whole = true;
    Segment s;
    s.backend = "npu";
    for (const auto& n : f.nodes())
      s.nodes.push_back(n.get());
    s.npu = std::make_shared<npu::CompileResult>(npu::compile(f, isa, opts.npu));
    p.segments.push_back(std::move(s));
    findBoundaries(p);
    for (const Node* n : p.segments[0].nodes)
      p.nodes.push_back(NodePlacement{n->name(), n->kindName(), "npu", "", 0, nodeMacs(*n)});
    p.estimate = estimatePlan(p, isa, opts);
    return p;
  }
  if (opts.fallback == Fallback::None) {
    std::vector<std::string> all = bad;
    for (const auto& n : f.nodes())
      if (opts.hostNodes.count(n->name()) || opts.hostKinds.count(n->kindName()))
        all.push_back(ref(*n) + ": placed on the host by --host-node/--host-kind");
    npu::throwUnsupported(f, all, "(--fallback none)");
  }
  Plan p = Partitioner(f, isa, opts).run();
  p.estimate = estimatePlan(p, isa, opts);
  return p;
}

std::string placementSummaryLine(const Plan& p) {
  const size_t nodes = p.nodes.size(), onNpu = p.npuNodes();
  const int64_t macs = p.totalMacs(), npuMacs = p.npuMacs();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "placement: %zu of %zu nodes (%.1f%%) and %.1f%% of MACs on the NPU, %zu "
                "segment(s) (%zu on the NPU), %llu boundary bytes",
                onNpu, nodes, nodes ? 100.0 * double(onNpu) / double(nodes) : 0.0,
                macs ? 100.0 * double(npuMacs) / double(macs) : 0.0, p.segments.size(),
                p.npuSegments(), static_cast<unsigned long long>(p.boundaryBytes()));
  return buf;
}

std::string formatPlacementReport(const Plan& p) {
  std::string out = "placement of '" + p.functionName + "' for " + p.isaName +
                    (p.whole ? " (the whole model runs on the NPU)" : "") + "\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-4s %-7s %-20s %-40s %s\n", "seg", "backend", "kind", "node",
                "reason");
  out += buf;
  for (const NodePlacement& pl : p.nodes) {
    std::snprintf(buf, sizeof buf, "  %-4d %-7s %-20s %-40s ", pl.segment, pl.backend.c_str(),
                  pl.kind.c_str(), pl.name.c_str());
    out += buf + pl.reason + "\n";
  }
  out += "segments:\n";
  for (size_t s = 0; s < p.segments.size(); ++s) {
    const Segment& seg = p.segments[s];
    uint64_t in = 0, outB = 0;
    for (size_t i : seg.inputs)
      in += p.values[i].bytes();
    for (size_t i : seg.outputs)
      outB += p.values[i].bytes();
    std::snprintf(buf, sizeof buf,
                  "  %zu: %-6s %5zu node(s), %zu input(s) %llu bytes, %zu output(s) %llu bytes", s,
                  seg.backend.c_str(), seg.numNodes, seg.inputs.size(),
                  static_cast<unsigned long long>(in), seg.outputs.size(),
                  static_cast<unsigned long long>(outB));
    out += buf;
    if (seg.npu) {
      std::snprintf(buf, sizeof buf, ", %.0f estimated cycles, %lld MACs", seg.npu->summary.cycles,
                    static_cast<long long>(seg.macs));
      out += buf;
    }
    out += "\n";
  }
  out += placementSummaryLine(p) + "\n";
  if (!p.estimate.segments.empty())
    out += formatEstimate(p.estimate);
  return out;
}

} // namespace ember::partition
