// Interpreter kernels of NegativeLogLikelihoodLoss (ONNX semantics: weights, ignore_index,
// reductions none/sum/mean) and Einsum (any equation planEinsum accepts).
#include "Broadcast.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/Einsum.h"
#include "ember/interpreter/Kernels.h"

namespace ember {

namespace {

using namespace kernels;
using Ins = std::vector<const Tensor*>;
using Outs = std::vector<Tensor>;

/// loss[n, d] = -weight[t] * input[n, t, d] with t = target[n, d]; a target equal to
/// ignore_index contributes 0 and weighs 0. "mean" divides the sum by the total weight.
void nllKernel(const Node& n, const Ins& in, Outs& out) {
  const Shape& x = in[0]->dims();
  const int64_t batch = x[0], classes = x[1];
  const int64_t inner = classes ? in[0]->size() / (batch * classes) : 0;
  const NllLossAttrs nl = nllLossOf(n.attrs());
  const std::string& reduction = nl.reduction;
  const bool perElement = reduction == "none";
  const bool hasIgnore = nl.ignoreIndex.has_value();
  const int64_t ignore = nl.ignoreIndex.value_or(0);
  const Tensor* weight = in.size() > 2 ? in[2] : nullptr;
  dispatchKind<kF32 | kF64>(in[0]->kind(), "NegativeLogLikelihoodLoss", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = in[0]->data<T>();
    const T* w = weight ? weight->data<T>() : nullptr;
    T* y = out[0].data<T>();
    double sum = 0, weights = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = b * inner + i;
        const int64_t t = in[1]->getAsInt(at);
        double loss = 0, wt = 0;
        if (!(hasIgnore && t == ignore)) {
          if (t < 0 || t >= classes)
            throw Error("NegativeLogLikelihoodLoss: target " + std::to_string(t) +
                        " is out of range for " + std::to_string(classes) + " classes");
          wt = w ? double(w[t]) : 1.0;
          loss = -double(p[(b * classes + t) * inner + i]) * wt;
        }
        if (perElement)
          y[at] = static_cast<T>(loss);
        sum += loss;
        weights += wt;
      }
    if (reduction == "sum")
      y[0] = static_cast<T>(sum);
    else if (reduction == "mean")
      y[0] = static_cast<T>(sum / weights);
  });
}

/// Sums the product of the operands over every assignment of the labels: output labels
/// outermost, summed labels innermost. Floats accumulate in double, integers in int64
/// (wrapping).
void einsumKernel(const Node& n, const Ins& in, Outs& out) {
  std::vector<Shape> shapes;
  for (const Tensor* t : in)
    shapes.push_back(t->dims());
  const EinsumPlan plan = planEinsum(einsumOf(n.attrs()).equation, shapes);
  std::vector<int> order = plan.outputLabels;
  order.insert(order.end(), plan.summedLabels.begin(), plan.summedLabels.end());
  // Per operand and label: the stride the label advances (a label repeated in one
  // operand adds its strides: the diagonal); a broadcast dimension of 1 advances 0.
  std::vector<std::vector<int64_t>> step(in.size(), std::vector<int64_t>(order.size(), 0));
  for (size_t i = 0; i < in.size(); ++i) {
    const std::vector<int64_t> s = stridesOf(shapes[i]);
    for (size_t dim = 0; dim < plan.operandLabels[i].size(); ++dim)
      for (size_t j = 0; j < order.size(); ++j)
        if (order[j] == plan.operandLabels[i][dim] && shapes[i][dim] != 1)
          step[i][j] += s[dim];
  }
  Shape loop;
  for (int l : order)
    loop.push_back(plan.extents[size_t(l)]);
  const int64_t outSize = out[0].size();
  const int64_t inner = outSize ? numElements(loop) / outSize : 0;
  dispatchKind<kWideNumeric>(in[0]->kind(), "Einsum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
    T* y = out[0].data<T>();
    std::vector<const T*> data;
    for (const Tensor* t : in)
      data.push_back(t->data<T>());
    std::vector<int64_t> idx;
    for (int64_t o = 0; o < outSize; ++o) {
      Acc acc = 0;
      for (int64_t r = 0; r < inner; ++r) {
        unravel(o * inner + r, loop, idx);
        Acc prod = 1;
        for (size_t i = 0; i < in.size(); ++i) {
          int64_t off = 0;
          for (size_t j = 0; j < order.size(); ++j)
            off += idx[j] * step[i][j];
          prod = static_cast<Acc>(prod * static_cast<Acc>(data[i][off]));
        }
        acc = static_cast<Acc>(acc + prod);
      }
      y[o] = static_cast<T>(acc);
    }
  });
}

} // namespace

void registerLossEinsumKernels() {
  registerKernel(NodeKind::NegativeLogLikelihoodLoss, nllKernel);
  registerKernel(NodeKind::Einsum, einsumKernel);
}

} // namespace ember
