// A pipeline as a plan of segments: what `emberc --system SYS -o OUT.pkg` packages.
#include "ember/driver/Estimate.h"
#include "ember/driver/Pipeline.h"

#include "SegmentBuild.h"

#include "ember/support/Error.h"

#include <map>

namespace ember::partition {

namespace {

bool quantizesInput(const Node& n) {
  return n.kind() == NodeKind::QuantizeLinear && n.input(0).node->kind() == NodeKind::Placeholder;
}

/// A DequantizeLinear whose every use is a model output.
bool dequantizesOutput(const Function& f, const Node& n) {
  if (n.kind() != NodeKind::DequantizeLinear)
    return false;
  size_t asOutput = 0;
  for (const auto& o : f.outputs())
    asOutput += o.value.node == &n ? 1 : 0;
  return asOutput > 0 && f.numUses(&n) == asOutput;
}

/// The segments: the model inputs' quantization on the host, one NPU segment per
/// stage, the model outputs' dequantization on the host.
std::vector<Segment> pipelineSegmentNodes(const Function& f, const PipelinePlan& pp) {
  const size_t k = pp.assignment.stages.size();
  std::map<std::string, size_t> stageOf;
  for (size_t s = 0; s < k; ++s)
    for (const std::string& name : pp.stageNodes(s))
      stageOf[name] = s;
  Segment in, out;
  in.backend = out.backend = "interp";
  std::vector<Segment> stages(k);
  std::map<const Node*, size_t> segOf; // 0: in, 1 + s: stage s, k + 1: out
  for (const auto& up : f.nodes()) {
    const Node* n = up.get();
    size_t seg = 0;
    if (quantizesInput(*n)) {
      in.nodes.push_back(n);
    } else if (dequantizesOutput(f, *n)) {
      out.nodes.push_back(n);
      seg = k + 1;
    } else {
      auto it = stageOf.find(n->name());
      if (it == stageOf.end())
        throw InternalError("pipeline", "node '" + n->name() + "' is in no stage");
      stages[it->second].backend = "npu";
      stages[it->second].nodes.push_back(n);
      seg = 1 + it->second;
    }
    for (const NodeValue& v : n->inputs())
      if (v && !v.node->isStorage() && segOf.at(v.node) > seg)
        throw InternalError("pipeline", "node '" + n->name() + "' reads a later stage's value");
    segOf[n] = seg;
  }
  std::vector<Segment> segs;
  if (!in.nodes.empty())
    segs.push_back(std::move(in));
  for (size_t s = 0; s < k; ++s) {
    if (stages[s].nodes.empty())
      throw Error("pipeline stage " + std::to_string(s),
                  "holds nothing but the model's input quantization or output dequantization, "
                  "which run on the host: the model has too few layers for the system");
    segs.push_back(std::move(stages[s]));
  }
  if (!out.nodes.empty())
    segs.push_back(std::move(out));
  return segs;
}

} // namespace

Plan pipelineSegments(const Function& quantized, const PipelinePlan& pp,
                      const isa::SystemDescription& sys, const npu::CompileOptions& opts) {
  // The package's description is the first device's; a stage on a device of another
  // description carries its own (Segment::isa), which the package records.
  const isa::IsaDescription& isa = sys.devices().front().isa;
  Plan p;
  p.function = &quantized;
  p.functionName = quantized.name();
  p.source = quantized.module().source();
  p.isaName = isa.name();
  p.segments = pipelineSegmentNodes(quantized, pp);
  detail::findBoundaries(p);
  size_t stage = 0;
  std::map<const Node*, int> segOf;
  for (size_t s = 0; s < p.segments.size(); ++s) {
    Segment& seg = p.segments[s];
    detail::buildSegmentFunction(p, seg);
    for (const Node* n : seg.nodes)
      segOf[n] = int(s);
    if (seg.backend != "npu")
      continue;
    const isa::SystemDevice& dev = sys.devices().at(stage);
    try {
      seg.npu = std::make_shared<npu::CompileResult>(npu::compile(*seg.function, dev.isa, opts));
    } catch (const Error& e) {
      throw Error(sys.file() + ": stage " + std::to_string(stage) + " (device " + dev.name + ")",
                  std::string("does not compile: ") + e.what());
    }
    if (dev.isa.hash() != isa.hash())
      seg.isa = std::make_shared<const isa::IsaDescription>(dev.isa);
    ++stage;
  }
  for (const auto& up : quantized.nodes()) {
    const Node* n = up.get();
    const int s = segOf.at(n);
    const std::string& backend = p.segments[size_t(s)].backend;
    p.nodes.push_back(NodePlacement{
        n->name(), n->kindName(), backend,
        backend == "npu" ? "" : "the model's input quantization / output dequantization (host)", s,
        nodeMacs(*n)});
  }
  p.estimate = estimatePlan(p, isa, PartitionOptions{});
  return p;
}

} // namespace ember::partition
