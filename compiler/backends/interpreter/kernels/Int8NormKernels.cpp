// The int8 Softmax and LayerNormalization kernels (docs/numerics.md sections 4.10 and
// 4.11). The per-line integer arithmetic is ember/quantization/IntegerLines.h, shared with
// the CPU backend's libjit; the parameters come from ember/quantization/NormNumerics.h.
#include "Int8Util.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/interpreter/Kernels.h"
#include "ember/quantization/IntegerLines.h"
#include "ember/quantization/NormNumerics.h"

#include <algorithm>

namespace ember {

namespace {

using namespace kernels;

/// Softmax along attribute `axis`: every (outer, inner) line of the axis.
void softmaxKernel(const Node& node, const std::vector<const Tensor*>& in,
                   std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const TensorQ xq = perTensor(x.type(), "the input"), yq = perTensor(out[0].type(), "the result");
  const AxisSplit s = splitAtAxis(x.dims(), softmaxOf(node.attrs()).axis);
  const std::array<int32_t, 256> table = quant::softmaxExpTable(xq.scale);
  const quant::Multiplier m = quant::softmaxMultiplier(yq.scale);
  const quant::Bounds bd = quant::activationBounds(node, out[0].type().quant);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t base = o * s.len * s.inner + i;
      qline::softmaxLine(x.data<int8_t>() + base, out[0].data<int8_t>() + base, s.len, s.inner,
                         table.data(), m.M, m.S, yq.zp, bd.lo, bd.hi);
    }
}

/// The float scale or bias operand `i` of an int8 LayerNormalization, or null (its count
/// is layerNormTables' to check).
const Tensor* normParameter(const std::vector<const Tensor*>& in, size_t i, const char* what) {
  if (i >= in.size() || !in[i])
    return nullptr;
  const Tensor* t = in[i];
  if (t->kind() != ElemKind::Float32)
    throw Error(std::string(what) + " is " + t->type().toString() +
                ", expected float32 for an int8 LayerNormalization");
  return t;
}

/// LayerNormalization and ChannelLayerNormalization: every line of layerNormLines
/// (`len` codes `inner` apart) by section 4.11's line.
void layerNormKernel(const Node& node, const std::vector<const Tensor*>& in,
                     std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const TensorQ xq = perTensor(x.type(), "the input"), yq = perTensor(out[0].type(), "the result");
  const AxisSplit l = layerNormLines(node.kind(), x.dims(), node.attrs());
  const Tensor* gamma = normParameter(in, 1, "the scale");
  const Tensor* beta = normParameter(in, 2, "the bias");
  if (!gamma)
    throw Error("an int8 LayerNormalization needs its scale");
  const quant::LayerNormTables t = quant::layerNormTables(
      xq.scale, yq.scale, l.len, normOf(node.attrs()).epsilon, gamma->data<float>(),
      size_t(gamma->size()), beta ? beta->data<float>() : nullptr, beta ? size_t(beta->size()) : 0);
  for (int64_t r = 0; r < l.outer * l.inner; ++r) {
    const int64_t base = (r / l.inner) * l.len * l.inner + r % l.inner;
    qline::layerNormLine(x.data<int8_t>() + base, out[0].data<int8_t>() + base, l.len, l.inner,
                         xq.zp, t.E, t.M.data(), t.S.data(), t.B.data(), yq.zp);
  }
  // The Mean and InvStdDev results are not computed by the int8 form (the quantizer
  // makes it only when nothing reads them): zeros.
  for (size_t r = 1; r < out.size(); ++r)
    std::fill(out[r].data<float>(), out[r].data<float>() + out[r].size(), 0.f);
}

} // namespace

void registerInt8NormKernels() {
  registerQuantizedKernel(NodeKind::Softmax, softmaxKernel);
  registerQuantizedKernel(NodeKind::LayerNormalization, layerNormKernel);
  registerQuantizedKernel(NodeKind::ChannelLayerNormalization, layerNormKernel);
}

} // namespace ember
