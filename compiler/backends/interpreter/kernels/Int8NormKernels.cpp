// The int8 Softmax and LayerNormalization kernels (docs/numerics.md sections 4.10 and
// 4.11). The per-line integer arithmetic is ember/quantization/IntegerLines.h, shared with
// the CPU backend's libjit; the parameters come from ember/quantization/NormNumerics.h.
#include "Int8Util.h"

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
  const Shape& dims = x.dims();
  const int64_t axis = normalizeAxis(node.attrs().getInt("axis", -1), dims.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= dims[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < dims.size(); ++d)
    inner *= dims[d];
  const int64_t len = dims[size_t(axis)];
  const std::array<int32_t, 256> table = quant::softmaxExpTable(xq.scale);
  const quant::Multiplier m = quant::softmaxMultiplier(yq.scale);
  const quant::Bounds bd = quant::activationBounds(node, out[0].type().quant);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      qline::softmaxLine(x.data<int8_t>() + base, out[0].data<int8_t>() + base, len, inner,
                         table.data(), m.M, m.S, yq.zp, bd.lo, bd.hi);
    }
}

/// The float scale or bias operand `i` of an int8 LayerNormalization: n values or one.
const Tensor* normParameter(const std::vector<const Tensor*>& in, size_t i, int64_t n,
                            const char* what) {
  if (i >= in.size() || !in[i])
    return nullptr;
  const Tensor* t = in[i];
  if (t->kind() != ElemKind::Float32 || (t->size() != n && t->size() != 1))
    throw Error(std::string(what) + " is " + t->type().toString() + ", expected float32 of " +
                std::to_string(n) + " values (or one) for an int8 LayerNormalization");
  return t;
}

/// LayerNormalization over the dimensions from `axis` on (each row contiguous).
void layerNormKernel(const Node& node, const std::vector<const Tensor*>& in,
                     std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const TensorQ xq = perTensor(x.type(), "the input"), yq = perTensor(out[0].type(), "the result");
  const Shape& dims = x.dims();
  const int64_t axis = normalizeAxis(node.attrs().getInt("axis", -1), dims.size());
  int64_t n = 1;
  for (size_t d = size_t(axis); d < dims.size(); ++d)
    n *= dims[d];
  const Tensor* gamma = normParameter(in, 1, n, "the scale");
  const Tensor* beta = normParameter(in, 2, n, "the bias");
  if (!gamma)
    throw Error("an int8 LayerNormalization needs its scale");
  const quant::LayerNormTables t = quant::layerNormTables(
      xq.scale, yq.scale, n, node.attrs().getFloat("epsilon", 1e-5), gamma->data<float>(),
      size_t(gamma->size()), beta ? beta->data<float>() : nullptr, beta ? size_t(beta->size()) : 0);
  const int64_t rows = n ? x.size() / n : 0;
  for (int64_t r = 0; r < rows; ++r)
    qline::layerNormLine(x.data<int8_t>() + r * n, out[0].data<int8_t>() + r * n, n, xq.zp, t.E,
                         t.M.data(), t.S.data(), t.B.data(), yq.zp);
  // The Mean and InvStdDev results are not computed by the int8 form (the quantizer
  // makes it only when nothing reads them): zeros.
  for (size_t r = 1; r < out.size(); ++r)
    std::fill(out[r].data<float>(), out[r].data<float>() + out[r].size(), 0.f);
}

} // namespace

void registerInt8NormKernels() {
  registerQuantizedKernel(NodeKind::Softmax, softmaxKernel);
  registerQuantizedKernel(NodeKind::LayerNormalization, layerNormKernel);
}

} // namespace ember
