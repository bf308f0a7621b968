// Segments of a placement: their order, their boundary values and their functions.
#include "SegmentBuild.h"

#include "ember/support/Error.h"

#include <algorithm>

namespace ember::partition::detail {

std::string valueKey(const NodeValue& v) {
  return v.resNo ? v.node->name() + ":" + std::to_string(v.resNo) : v.node->name();
}

std::vector<Segment> formSegments(const Function& f,
                                  const std::map<const Node*, std::string>& hostBackend) {
  std::vector<Segment> segs;
  std::map<const Node*, int> segOf;
  std::map<std::string, int> newest;
  for (const auto& up : f.nodes()) {
    const Node* n = up.get();
    auto host = hostBackend.find(n);
    const std::string backend = host == hostBackend.end() ? "npu" : host->second;
    int after = -1;
    for (const NodeValue& v : n->inputs())
      if (v && !v.node->isStorage())
        after = std::max(after, segOf.at(v.node));
    auto it = newest.find(backend);
    int s = it == newest.end() ? -1 : it->second;
    if (s < 0 || s < after) {
      s = static_cast<int>(segs.size());
      segs.emplace_back();
      segs.back().backend = backend;
      newest[backend] = s;
    }
    segs[size_t(s)].nodes.push_back(n);
    segOf[n] = s;
  }
  return segs;
}

void findBoundaries(Plan& plan) {
  const Function& f = *plan.function;
  std::map<const Node*, int> segOf;
  for (size_t s = 0; s < plan.segments.size(); ++s)
    for (const Node* n : plan.segments[s].nodes)
      segOf[n] = static_cast<int>(s);
  plan.values.clear();
  plan.outputs.clear();
  std::map<NodeValue, size_t> index;
  auto valueOf = [&](const NodeValue& v) {
    auto it = index.find(v);
    if (it != index.end())
      return it->second;
    BoundaryValue b;
    b.key = valueKey(v);
    b.value = v;
    b.type = v.type();
    b.producer = v.node->isStorage() ? -1 : segOf.at(v.node);
    if (v.node->kind() == NodeKind::Placeholder)
      b.input = v.node->name();
    if (v.node->kind() == NodeKind::Constant)
      b.constant = std::make_shared<const Tensor>(v.node->payload());
    if (plan.whole && v.node->kind() == NodeKind::DequantizeLinear)
      b.dequantizedFrom = v.node->input(0).type().quant;
    plan.values.push_back(b);
    index[v] = plan.values.size() - 1;
    return plan.values.size() - 1;
  };
  auto addOnce = [](std::vector<size_t>& list, size_t i) {
    if (std::find(list.begin(), list.end(), i) == list.end())
      list.push_back(i);
  };
  for (Segment& s : plan.segments) {
    s.inputs.clear();
    s.outputs.clear();
  }
  // Inputs in node order, so that a segment's function is the same on every compile.
  for (size_t s = 0; s < plan.segments.size(); ++s)
    for (const Node* n : plan.segments[s].nodes)
      for (const NodeValue& v : n->inputs()) {
        if (!v || v.node->kind() == NodeKind::Constant)
          continue;
        if (v.node->kind() == NodeKind::Placeholder || segOf.at(v.node) != int(s)) {
          const size_t i = valueOf(v);
          addOnce(plan.segments[s].inputs, i);
          if (plan.values[i].producer >= 0)
            addOnce(plan.segments[size_t(plan.values[i].producer)].outputs, i);
        }
      }
  for (const auto& o : f.outputs()) {
    const size_t i = valueOf(o.value);
    plan.outputs.emplace_back(o.name, i);
    if (plan.values[i].producer >= 0)
      addOnce(plan.segments[size_t(plan.values[i].producer)].outputs, i);
  }
  // Outputs in value order (the order of first use), independent of segment order.
  for (Segment& s : plan.segments)
    std::sort(s.outputs.begin(), s.outputs.end());
  // The names inside each segment: keys; a whole plan's function keeps the model's own
  // input and output names.
  for (Segment& s : plan.segments) {
    s.numNodes = s.nodes.size();
    s.macs = 0;
    s.elements = 0;
    for (const Node* n : s.nodes) {
      s.macs += nodeMacs(*n);
      s.elements += n->resultType().size();
    }
    s.inputNames.clear();
    s.outputNames.clear();
    for (size_t i : s.inputs)
      s.inputNames.push_back(plan.whole ? plan.values[i].input : plan.values[i].key);
    for (size_t i : s.outputs) {
      std::string name = plan.values[i].key;
      if (plan.whole)
        for (const auto& [out, k] : plan.outputs)
          if (k == i)
            name = out;
      s.outputNames.push_back(name);
    }
  }
  plan.inputs.clear();
  for (const Node* p : f.inputs())
    plan.inputs.emplace_back(p->name(), p->resultType());
}

std::map<const Node*, const Node*> buildSegmentFunction(const Plan& plan, Segment& s) {
  const Function& f = *plan.function;
  s.module = std::make_unique<Module>();
  s.module->setSource(f.module().source());
  Function* g = s.module->createFunction(f.name());
  s.function = g;
  const bool npu = s.backend == "npu";
  std::map<NodeValue, NodeValue> remap;
  std::map<const Node*, Node*> constants;
  std::map<const Node*, const Node*> original;
  for (size_t i : s.inputs) {
    const BoundaryValue& b = plan.values[i];
    if (npu) {
      // The NPU compiler's input form: a float placeholder quantized on the host; the
      // executor hands the int8 value over as it is (the I/O entry's own type).
      Node* p = s.module->createPlaceholder(b.key, Type(ElemKind::Float32, b.type.dims));
      Node* q = g->create(NodeKind::QuantizeLinear, b.key + "_quantize", {p->result()}, {},
                          std::vector<Type>{b.type});
      remap[b.value] = q->result();
    } else {
      remap[b.value] = s.module->createPlaceholder(b.key, b.type)->result();
    }
  }
  for (const Node* n : s.nodes) {
    std::vector<NodeValue> ins;
    for (const NodeValue& v : n->inputs()) {
      if (!v) {
        ins.emplace_back();
      } else if (v.node->kind() == NodeKind::Constant) {
        Node*& c = constants[v.node];
        if (!c)
          c = s.module->createConstant(v.node->name(), v.node->payload());
        ins.push_back(c->result(v.resNo));
      } else {
        auto it = remap.find(v);
        if (it == remap.end())
          throw InternalError(std::string(n->kindName()) + " '" + n->name() + "'",
                              "partition: an input of the node is in no segment before it");
        ins.push_back(it->second);
      }
    }
    Node* c = g->create(n->kind(), n->name(), ins, n->attrs(), n->resultTypes());
    original[c] = n;
    for (unsigned r = 0; r < n->numResults(); ++r)
      remap[NodeValue(const_cast<Node*>(n), r)] = c->result(r);
  }
  for (size_t i : s.outputs) {
    const BoundaryValue& b = plan.values[i];
    NodeValue v = remap.at(b.value);
    if (npu && b.type.kind != ElemKind::Float32) {
      // The NPU compiler's output form: a DequantizeLinear producing the output; the
      // executor takes the int8 value the NPU stores.
      Node* dq = g->create(NodeKind::DequantizeLinear, b.key + "_dequantize", {v}, {},
                           std::vector<Type>{Type(ElemKind::Float32, b.type.dims)});
      v = dq->result();
    }
    g->addOutput(b.key, v);
  }
  return original;
}

} // namespace ember::partition::detail
