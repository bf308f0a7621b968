// The fold-qdq pass (see ember/quantization/FoldQdq.h).
#include "ember/quantization/FoldQdq.h"
#include "ember/graph/OpInfo.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/ResizeNearest.h"
#include "ember/quantization/BilinearUpsample.h"
#include "ember/quantization/NormNumerics.h"
#include "ember/quantization/Numerics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>

namespace ember {
namespace quant {

namespace {

using K = NodeKind;

/// The parameters a DequantizeLinear applies: its attributes, else its input's type.
std::optional<QuantParams> dqParams(const Node& dq) {
  const QuantAttrs v = quantOf(dq.attrs());
  const QuantParams q = v.perTensor() || v.perAxis() ? v.params() : dq.input(0).type().quant;
  if (!q.isQuantized())
    return std::nullopt;
  return q;
}

bool perTensor(const QuantParams& q) {
  return q.scales.size() == 1 && q.axis < 0;
}

class Folder {
public:
  explicit Folder(Function& f) : f_(f) {}

  /// The int8 (or int32) value a DequantizeLinear output stands for, typed with its
  /// parameters; nullopt when `v` is not such a value.
  std::optional<NodeValue> quantOperand(NodeValue v) {
    if (!v || v.node->kind() != K::DequantizeLinear)
      return std::nullopt;
    const Node& dq = *v.node;
    std::optional<QuantParams> q = dqParams(dq);
    NodeValue x = dq.input(0);
    if (!q)
      return std::nullopt;
    if (x.type().quant == *q)
      return x;
    if (x.node->kind() == K::Constant) {
      auto key = std::make_pair(x.node, dq.name());
      auto it = retyped_.find(key);
      if (it != retyped_.end())
        return it->second;
      Tensor t = x.node->payload();
      t.mutableType().quant = *q;
      NodeValue c = f_.module().createConstant(x.node->name() + "_q", std::move(t))->result();
      retyped_[key] = c;
      return c;
    }
    if (x.node->kind() == K::Placeholder && !x.type().quant.isQuantized() &&
        x.type().kind == ElemKind::Int8 && perTensor(*q)) {
      Type t = x.type();
      t.quant = *q;
      x.node->setResultType(0, t);
      return x;
    }
    return std::nullopt;
  }

  /// Float constant weights quantized per channel along `axis` (section 4.8).
  std::optional<NodeValue> constantWeights(NodeValue v, int axis) {
    const Tensor& w = v.node->payload();
    if (axis < 0 || size_t(axis) >= w.dims().size())
      return std::nullopt;
    return f_.module().createConstant(v.node->name() + "_int8", quantizeWeights(w, axis))->result();
  }

  /// A float constant operand (an addend) quantized per tensor over its range.
  std::optional<NodeValue> constantActivation(NodeValue v) {
    const Tensor& t = v.node->payload();
    if (t.size() == 0)
      return std::nullopt;
    const float* d = t.data<float>();
    const float lo = *std::min_element(d, d + t.size()), hi = *std::max_element(d, d + t.size());
    if (!std::isfinite(lo) || !std::isfinite(hi))
      return std::nullopt;
    return f_.module()
        .createConstant(v.node->name() + "_q", quantizeTensor(t, chooseActivationParams(lo, hi)))
        ->result();
  }

  /// Tries to replace QuantizeLinear `qn` (see the header); true if it did.
  bool fold(Node& qn) {
    const NodeValue src = qn.input(0);
    const QuantParams& yq = qn.resultType().quant;
    if (!perTensor(yq))
      return false;
    if (src.node->kind() == K::DequantizeLinear)
      return foldPair(qn, src);
    Node& p = *src.node;
    if (p.kind() == K::LayerNormalization || p.kind() == K::ChannelLayerNormalization)
      return foldLayerNorm(qn, p);
    if (p.kind() == K::PRelu)
      return foldPRelu(qn, p);
    if (p.isStorage() || p.numResults() != 1 || f_.numUses(&p) != 1)
      return false;
    const bool weighted = p.kind() == K::Conv || p.kind() == K::Gemm || p.kind() == K::MatMul;
    std::vector<NodeValue> ins;
    std::vector<QuantParams> params;
    const Tensor* floatBias = nullptr;
    for (size_t i = 0; i < p.numInputs(); ++i) {
      const NodeValue v = p.input(i);
      if (!v || v.type().kind != ElemKind::Float32) { // absent, indices, shapes: as they are
        ins.push_back(v);
        continue;
      }
      std::optional<NodeValue> q = quantOperand(v);
      if (!q && v.node->kind() == K::Constant) {
        // The importer evaluates DequantizeLinear of a constant at once: such weights come
        // back as float constants and are re-quantized (per channel for weights, which
        // recovers symmetric exported codes; after the weights for a bias).
        if (weighted && i == 2) {
          floatBias = &v.node->payload();
          ins.push_back(NodeValue());
          continue;
        }
        q = weighted && i == 1 ? constantWeights(v, weightAxis(p)) : constantActivation(v);
      }
      if (!q)
        return false;
      ins.push_back(*q);
      params.push_back(q->type().quant);
    }
    if (floatBias) {
      if (params.size() < 2 || floatBias->size() != int64_t(params[1].scales.size()) ||
          !perTensor(params[0]))
        return false;
      ins[2] = f_.module()
                   .createConstant(p.input(2).node->name() + "_int32",
                                   quantizeBias(floatBias->reshaped({floatBias->size()}),
                                                params[0].scales[0], params[1].scales))
                   ->result();
    }
    if (params.empty() || !accepts(p, params, yq))
      return false;
    if (p.kind() == K::Concat)
      for (size_t i = 0; i < ins.size(); ++i)
        if (ins[i].type().quant != yq)
          ins[i] = f_.create(K::Rescale, p.name() + "_rescale" + std::to_string(i), {ins[i]}, {},
                             std::vector<Type>{Type(ElemKind::Int8, ins[i].dims(), yq)})
                       ->result();
    NodeKind kind = p.kind();
    Attrs attrs = p.attrs();
    if (std::function<double(double)> fn = lutFunctionOf(p)) {
      const std::vector<int8_t> table = buildLut(fn, params[0], yq);
      ins = {ins[0],
             f_.module()
                 .createConstant(p.name() + "_table", Tensor::fromVector<int8_t>({256}, table))
                 ->result()};
      attrs = Attrs();
      attrs.set("function", std::string(p.kindName()));
      kind = K::Lut;
    }
    Node* made = f_.create(kind, p.name(), ins, attrs, std::vector<Type>{qn.resultType()});
    f_.replaceAllUsesOf(qn.result(), made->result());
    return true;
  }

private:
  /// Q(LayerNormalization(DQ(x), scale, bias)) with float constant scale and bias and the
  /// Mean / InvStdDev results unread: the int8 LayerNormalization (numerics.md 4.11),
  /// which keeps its float scale and bias; ChannelLayerNormalization likewise.
  bool foldLayerNorm(Node& qn, Node& p) {
    const std::optional<NodeValue> x = quantOperand(p.input(0));
    if (!x || x->type().kind != ElemKind::Int8 || !perTensor(x->type().quant) ||
        f_.numUses(&p) != 1 || x->dims().empty())
      return false;
    const NormAttrs na = normOf(p.attrs());
    const int64_t n = layerNormLines(p.kind(), x->dims(), p.attrs()).len;
    std::vector<const Tensor*> params;
    for (size_t i = 1; i < p.numInputs(); ++i) {
      const NodeValue v = p.input(i);
      if (!v)
        continue;
      if (v.node->kind() != K::Constant || v.type().kind != ElemKind::Float32)
        return false; // (layerNormTables checks the counts)
      params.push_back(&v.node->payload());
    }
    if (params.empty() || !p.input(1))
      return false;
    const Tensor* beta = params.size() > 1 ? params[1] : nullptr;
    if (!valid([&] {
          layerNormTables(x->type().quant.scales[0], qn.resultType().quant.scales[0], n, na.epsilon,
                          params[0]->data<float>(), size_t(params[0]->size()),
                          beta ? beta->data<float>() : nullptr, beta ? size_t(beta->size()) : 0);
        }))
      return false;
    std::vector<NodeValue> ins(p.inputs());
    ins[0] = *x;
    std::vector<Type> types = p.resultTypes();
    types[0] = qn.resultType();
    Node* made = f_.create(p.kind(), p.name(), ins, p.attrs(), types);
    f_.replaceAllUsesOf(qn.result(), made->result());
    return true;
  }

  /// Q(PRelu(DQ(x), slope)) with a float constant slope: one slope for every element a
  /// Lut (numerics.md 4.6), a slope per channel the int8 PRelu of numerics.md 4.12, which
  /// keeps its float slope.
  bool foldPRelu(Node& qn, Node& p) {
    const std::optional<NodeValue> x = quantOperand(p.input(0));
    const NodeValue s = p.input(1);
    if (!x || x->type().kind != ElemKind::Int8 || !perTensor(x->type().quant) ||
        f_.numUses(&p) != 1 || s.node->kind() != K::Constant ||
        s.type().kind != ElemKind::Float32 || s.type().size() < 1 ||
        p.resultType().dims != x->dims())
      return false;
    const Tensor& t = s.node->payload();
    const float* a = t.data<float>();
    const QuantParams& yq = qn.resultType().quant;
    Node* made = nullptr;
    if (std::all_of(a, a + t.size(), [&](float v) { return v == a[0]; })) {
      const double a0 = a[0];
      const std::vector<int8_t> table =
          buildLut([a0](double v) { return v < 0 ? a0 * v : v; }, x->type().quant, yq);
      Attrs attrs;
      attrs.set("function", std::string(p.kindName()));
      made = f_.create(
          K::Lut, p.name(),
          {*x, f_.module()
                   .createConstant(p.name() + "_table", Tensor::fromVector<int8_t>({256}, table))
                   ->result()},
          attrs, std::vector<Type>{qn.resultType()});
    } else {
      const std::vector<float> slopes = preluChannelSlopes(x->dims(), t);
      if (slopes.empty() ||
          !valid([&] { preluMultipliers(x->type().quant.scales[0], yq.scales[0], slopes); }))
        return false;
      made = f_.create(K::PRelu, p.name(), {*x, s}, p.attrs(), std::vector<Type>{qn.resultType()});
    }
    f_.replaceAllUsesOf(qn.result(), made->result());
    return true;
  }

  /// Q(DQ(x)): x itself when the parameters agree, else a Rescale.
  bool foldPair(Node& qn, NodeValue dqOut) {
    std::optional<NodeValue> x = quantOperand(dqOut);
    if (!x || x->type().kind != ElemKind::Int8 || !perTensor(x->type().quant))
      return false;
    const QuantParams& yq = qn.resultType().quant;
    NodeValue to = *x;
    if (x->type().quant != yq) {
      if (!valid([&] { averageMultiplier(x->type().quant.scales[0], yq.scales[0], 1); }))
        return false;
      to = f_.create(K::Rescale, qn.name(), {*x}, {}, std::vector<Type>{qn.resultType()})->result();
    }
    f_.replaceAllUsesOf(qn.result(), to);
    return true;
  }

  template <typename F> static bool valid(F&& f) {
    try {
      f();
      return true;
    } catch (const Error&) {
      return false;
    }
  }

  /// The output-channel axis the int8 kernel of p expects of its weights.
  static int weightAxis(const Node& p) {
    if (p.kind() == K::Conv)
      return 0;
    if (p.kind() == K::Gemm)
      return gemmOf(p.attrs()).transB ? 0 : 1;
    return int(p.input(1).dims().size()) - 1;
  }

  /// Whether kind p can be int8 with operand parameters `in` and result `yq`.
  bool accepts(const Node& p, const std::vector<QuantParams>& in, const QuantParams& yq) const {
    const float sy = yq.scales[0];
    switch (p.kind()) {
    case K::Conv:
    case K::Gemm:
    case K::MatMul:
      return perTensor(in[0]) && in.size() >= 2 &&
             (perTensor(in[1]) || in[1].axis == weightAxis(p)) && valid([&] {
               for (float s : in[1].scales)
                 productMultiplier(in[0].scales[0], s, sy);
             });
    case K::Add:
      return in.size() == 2 && perTensor(in[0]) && perTensor(in[1]) &&
             valid([&] { addMultipliers(in[0].scales[0], in[1].scales[0], sy); });
    case K::Mul:
      return in.size() == 2 && perTensor(in[0]) && perTensor(in[1]) &&
             valid([&] { productMultiplier(in[0].scales[0], in[1].scales[0], sy); });
    case K::AveragePool:
    case K::GlobalAveragePool:
      return perTensor(in[0]) && valid([&] { averageMultiplier(in[0].scales[0], sy, 1); });
    case K::Softmax:
      return in.size() == 1 && perTensor(in[0]) && valid([&] { softmaxMultiplier(sy); });
    case K::ReduceMean: {
      const int64_t outs = p.resultType().size();
      return in.size() == 1 && perTensor(in[0]) && outs > 0 && valid([&] {
               averageMultiplier(in[0].scales[0], sy, p.input(0).type().size() / outs);
             });
    }
    case K::Concat:
      for (const QuantParams& q : in)
        if (!perTensor(q) || !valid([&] { averageMultiplier(q.scales[0], sy, 1); }))
          return false;
      return true;
    default:
      // Codes moved or selected keep their parameters (OpTrait::KeepsQuantization);
      // anything else element-wise becomes a Lut.
      // A Resize keeps codes only as a nearest or bilinear upsampling by whole factors
      // (numerics.md 4.4).
      if (hasTrait(p.kind(), OpTrait::KeepsQuantization))
        return in.size() == 1 && in[0] == yq &&
               (p.kind() != K::Resize ||
                quant::isInt8Resize(p.attrs(), p.input(0).dims(), p.resultType(0).dims));
      return in.size() == 1 && perTensor(in[0]) && bool(lutFunctionOf(p));
    }
  }

  Function& f_;
  std::map<std::pair<const Node*, std::string>, NodeValue> retyped_;
};

} // namespace

size_t runFoldQdq(Function& f, const PassContext&) {
  Folder folder(f);
  std::vector<Node*> quantizes;
  for (const auto& n : f.nodes())
    if (n->kind() == K::QuantizeLinear)
      quantizes.push_back(n.get());
  size_t changed = 0;
  for (Node* q : quantizes) // in order: a fold's result feeds the next DQ
    changed += folder.fold(*q);
  if (changed) {
    f.topoSort();
    f.eraseDeadNodes();
  }
  f.module().eraseUnusedConstants(); // also those of folds that were given up
  return changed;
}

void registerQuantPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerPass({"fold-qdq",
                  "QuantizeLinear(op(DequantizeLinear...)) -> the int8 op; Q(DQ(x)) -> x or a "
                  "Rescale",
                  [](Function& f, const PassContext& ctx) { return runFoldQdq(f, ctx); }});
  });
}

} // namespace quant
} // namespace ember
