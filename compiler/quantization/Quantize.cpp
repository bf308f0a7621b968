// The quantize pass driver: walks the float function in order, asks each node's rule
// (QuantizeRules.cpp) for an int8 form, copies the node in float otherwise, and makes
// QuantizeLinear / DequantizeLinear nodes only where a value crosses between the two.
#include "Quantizer.h"

#include "ember/graph/Verifier.h"
#include "ember/passes/Pass.h"
#include "ember/quantization/FoldQdq.h"

#include <algorithm>
#include <cmath>

namespace ember {
namespace quant {

Quantizer::Quantizer(const Function& src, Function& dst, const Profile& profile,
                     const QuantizeOptions& options)
    : src_(src), dst_(dst), profile_(profile), options_(options) {}

std::optional<QuantParams> Quantizer::paramsOf(NodeValue v) {
  auto q8 = int8_.find(v);
  if (q8 != int8_.end())
    return q8->second.type().quant;
  auto known = params_.find(v);
  if (known != params_.end())
    return known->second;
  if (v.type().kind != ElemKind::Float32)
    return std::nullopt;
  std::pair<float, float> range;
  if (v.node->kind() == NodeKind::Constant) {
    const Tensor& t = v.node->payload();
    if (t.size() == 0)
      return std::nullopt;
    const float* p = t.data<float>();
    range = {*std::min_element(p, p + t.size()), *std::max_element(p, p + t.size())};
    if (!std::isfinite(range.first) || !std::isfinite(range.second))
      return std::nullopt;
  } else {
    const std::string key =
        v.node->kind() == NodeKind::Placeholder ? v.node->name() : profileKey(*v.node, v.resNo);
    const TensorProfile* tp = profile_.find(key);
    if (!tp)
      return std::nullopt;
    range = chooseRange(*tp, options_.method, options_.percentile);
  }
  QuantParams q = chooseActivationParams(range.first, range.second);
  params_[v] = q;
  return q;
}

bool Quantizer::isUsed(NodeValue v) const {
  if (!readersOf(v).empty())
    return true;
  for (const auto& o : src_.outputs())
    if (o.value == v)
      return true;
  return false;
}

std::vector<const Node*> Quantizer::readersOf(NodeValue v) const {
  std::vector<const Node*> out;
  for (const auto& n : src_.nodes())
    for (const NodeValue& in : n->inputs())
      if (in == v) {
        out.push_back(n.get());
        break;
      }
  return out;
}

NodeValue Quantizer::int8Of(NodeValue v) {
  auto it = int8_.find(v);
  if (it != int8_.end())
    return it->second;
  std::optional<QuantParams> q = paramsOf(v);
  if (!q)
    throw Error(v.node->name(), "the quantizer has no parameters for this value");
  NodeValue made;
  if (v.node->kind() == NodeKind::Constant) {
    // A float constant operand (an Add's addend, a Concat piece): quantized with
    // QuantizeLinear's formula at compile time.
    Tensor c = quantizeTensor(v.node->payload(), *q);
    made = constant(v.node->name() + "_q", std::move(c))->result();
  } else {
    Node* qn = dst_.create(NodeKind::QuantizeLinear, v.node->name() + "_quantize", {origOf(v)}, {},
                           std::vector<Type>{int8Type(v.dims(), *q)});
    made = qn->result();
  }
  int8_[v] = made;
  return made;
}

NodeValue Quantizer::origOf(NodeValue v) {
  if (v.node->isStorage())
    return v;
  auto it = orig_.find(v);
  if (it != orig_.end())
    return it->second;
  auto q8 = int8_.find(v);
  if (q8 == int8_.end())
    throw Error(v.node->name(), "used before it was translated");
  Node* dq = dst_.create(NodeKind::DequantizeLinear, v.node->name() + "_dequantize", {q8->second},
                         {}, std::vector<Type>{v.type()});
  orig_[v] = dq->result();
  return dq->result();
}

Node* Quantizer::createInt8(NodeKind kind, const std::string& name, std::vector<NodeValue> inputs,
                            Attrs attrs, std::vector<Type> results) {
  return dst_.create(kind, name, std::move(inputs), std::move(attrs), std::move(results));
}

Node* Quantizer::constant(const std::string& name, Tensor t) {
  return dst_.module().createConstant(name, std::move(t));
}

NodeValue Quantizer::rescaled(NodeValue int8Value, const QuantParams& to, const std::string& name) {
  if (int8Value.type().quant == to)
    return int8Value;
  return createInt8(NodeKind::Rescale, name, {int8Value}, {}, {int8Type(int8Value.dims(), to)})
      ->result();
}

void Quantizer::copyFloat(const Node& n) {
  std::vector<NodeValue> ins;
  for (const NodeValue& v : n.inputs())
    ins.push_back(v ? origOf(v) : NodeValue());
  Node* c = dst_.create(n.kind(), n.name(), ins, n.attrs(), n.resultTypes());
  for (unsigned r = 0; r < n.numResults(); ++r)
    orig_[NodeValue(const_cast<Node*>(&n), r)] = c->result(r);
}

void Quantizer::translate(const Node& n) {
  if (!options_.keepFloat.count(n.name()))
    if (const RuleFn* rule = findRule(n.kind())) {
      bool done = false;
      try {
        done = (*rule)(n, *this);
      } catch (const Error& e) {
        throw Error(std::string(n.kindName()) + " '" + n.name() + "'",
                    std::string("quantizing: ") + e.what());
      }
      if (done)
        return;
    }
  copyFloat(n);
}

void Quantizer::shareConcatParams() {
  // A Concat input made only for the Concat by a kind with its own output parameters
  // (Conv, Add, a pool's average, a Lut, another Concat, ...) is produced directly with
  // the Concat's parameters (whose range contains the input's under minmax), so the
  // Concat needs no Rescale for it.
  for (const auto& n : src_.nodes()) {
    if (n->kind() != NodeKind::Concat || options_.keepFloat.count(n->name()))
      continue;
    std::optional<QuantParams> out = paramsOf(n->result());
    if (!out)
      continue;
    for (const NodeValue& v : n->inputs()) {
      if (!v || v.node->isStorage() || v.node->numResults() != 1 || src_.numUses(v.node) != 1 ||
          !ownsOutputParams(v.node->kind()) || options_.keepFloat.count(v.node->name()))
        continue;
      params_[v] = *out;
    }
  }
}

void Quantizer::run() {
  shareConcatParams();
  for (const auto& n : src_.nodes())
    translate(*n);
  for (const auto& o : src_.outputs()) {
    NodeValue v = o.value;
    // A float graph input passed straight to an output goes through int8 like every
    // other output (Quantize, then Dequantize), so an int8 target (the NPU) gets an
    // output it can place: the input's own bytes.
    if (v.node->kind() == NodeKind::Placeholder && v.kind() == ElemKind::Float32 && paramsOf(v)) {
      const NodeValue q = int8Of(v);
      Node* dq = dst_.create(NodeKind::DequantizeLinear, o.name + "_dequantize", {q}, {},
                             std::vector<Type>{v.type()});
      dst_.addOutput(o.name, dq->result());
      continue;
    }
    dst_.addOutput(o.name, origOf(v));
  }
  dst_.eraseDeadNodes();
  stats_ = QuantizeStats();
  for (const auto& n : dst_.nodes()) {
    const Type& t = n->resultType(0);
    if (n->kind() == NodeKind::QuantizeLinear)
      ++stats_.quantizes;
    else if (n->kind() == NodeKind::DequantizeLinear)
      ++stats_.dequantizes;
    else if (t.kind == ElemKind::Int8 && t.quant.isQuantized())
      ++stats_.int8Nodes;
    else
      ++stats_.floatNodes;
    stats_.rescales += n->kind() == NodeKind::Rescale;
  }
}

Function* quantize(const Function& floatFn, const Profile& profile, const QuantizeOptions& options,
                   QuantizeStats* stats) {
  registerQuantPasses();
  Module& m = floatFn.module();
  const std::string name =
      options.functionName.empty() ? floatFn.name() + "_int8" : options.functionName;
  Function* dst = m.createFunction(name);
  Quantizer q(floatFn, *dst, profile, options);
  q.run();
  verifyOrThrow(*dst);
  if (stats)
    *stats = q.stats();
  return dst;
}

Function* quantizeModel(Function& f, const std::vector<TensorMap>& calibration,
                        const QuantizeOptions& options, Profile* profileOut, QuantizeStats* stats) {
  runPipeline(f, defaultPipeline());
  Profile p = profileFunction(f, calibration);
  Function* q = quantize(f, p, options, stats);
  if (profileOut)
    *profileOut = std::move(p);
  return q;
}

} // namespace quant
} // namespace ember
