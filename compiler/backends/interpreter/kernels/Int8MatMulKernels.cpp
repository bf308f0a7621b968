// The int8 Gemm and MatMul kernels (docs/numerics.md 4.1):
//   acc[i, j] = wrap32(c[j] + sum over k of (a[i, k] - zp_a) * (b[k, j] - zp_b[j]))
//   y[i, j]   = requantize(acc; s_a * s_b[j] / s_y, zp_y, activation bounds)
// Gemm: a [M, K]; b [K, N] per channel along axis 1 (the normalize-gemm form) or, with
// transB = 1, [N, K] along axis 0; c int32 [N] (or one value). MatMul: a [..., M, K] (the
// batch folds into rows), b [K, N] per tensor or per channel along axis 1. Weights from
// the quantizer have zero point 0; a per-tensor b of another zero point (two activations,
// or an imported QLinearMatMul) is handled by the expansion
//   sum (a - za)(b - zb) = sum ab - za * colsum(b) - zb * rowsum(a) + K * za * zb,
// exact modulo 2^32 like the direct sum.
#include "Int8GemmCore.h"
#include "Int8Util.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/interpreter/Kernels.h"

#include <algorithm>

namespace ember {

namespace {

using namespace kernels;

/// The scales and zero points of b ([K, N] after any transposition) per column j.
struct ColumnParams {
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
};

ColumnParams columnParams(const Type& t, int64_t n, int axis) {
  const QuantParams& q = t.quant;
  const bool perTensor = q.scales.size() == 1 && q.zeroPoints.size() == 1 && q.axis < 0;
  const bool perChannel =
      int64_t(q.scales.size()) == n && int64_t(q.zeroPoints.size()) == n && q.axis == axis;
  if (t.kind != ElemKind::Int8 || !(perTensor || perChannel))
    throw Error("b is " + t.toString() + ", expected int8 with one scale or one per column " +
                "along axis " + std::to_string(axis));
  return {q.scales, q.zeroPoints};
}

/// y[rows, n] = requantized product of a[rows, k] and b[k, n] (see the file comment);
/// `batches` consecutive (a, b, y) matrices when b is batched (b of [batches, k, n]).
void productRequant(const Node& node, int64_t rows, int64_t k, int64_t n, const Tensor& a,
                    const int8_t* b, const ColumnParams& bq, const Tensor* bias, Tensor& y,
                    int64_t batches = 1) {
  const TensorQ aq = perTensor(a.type(), "a"), yq = perTensor(y.type(), "result");
  if (bias && (bias->kind() != ElemKind::Int32 || (bias->size() != n && bias->size() != 1)))
    throw Error("bias is " + bias->type().toString() + ", expected int32[" + std::to_string(n) +
                "]");
  const quant::Bounds bd = quant::activationBounds(node, y.type().quant);
  const int32_t* cp = bias ? bias->data<int32_t>() : nullptr;
  auto col = [](const auto& v, int64_t j) { return v.size() == 1 ? v[0] : v[size_t(j)]; };
  std::vector<quant::Multiplier> mult(static_cast<size_t>(n));
  std::vector<int32_t> zb(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    mult[size_t(j)] = quant::productMultiplier(aq.scale, col(bq.scales, j), yq.scale);
    zb[size_t(j)] = col(bq.zeroPoints, j);
  }
  thread_local std::vector<int32_t> acc;
  if (acc.size() < size_t(rows * n))
    acc.resize(size_t(rows * n));
  std::vector<int32_t> colFold(static_cast<size_t>(n));
  for (int64_t bt = 0; bt < batches; ++bt) {
    const int8_t* ap = a.data<int8_t>() + bt * rows * k;
    const int8_t* bb = b + bt * k * n;
    int8_t* yp = y.data<int8_t>() + bt * rows * n;
    for (int64_t j = 0; j < n; ++j) {
      int32_t colSum = 0;
      for (int64_t i = 0; i < k; ++i)
        colSum = wrapAdd(colSum, bb[i * n + j]);
      // c[j] - za * colsum(b) + K * za * zb
      int32_t f = cp ? cp[bias->size() == 1 ? 0 : j] : 0;
      f = wrapAdd(f, wrapMul(-aq.zp, colSum));
      f = wrapAdd(f, wrapMul(wrapMul(int32_t(k), aq.zp), zb[size_t(j)]));
      colFold[size_t(j)] = f;
    }
    igemm(rows, n, k, ap, k, bb, n, acc.data(), n);
    for (int64_t i = 0; i < rows; ++i) {
      int32_t rowSum = 0;
      for (int64_t t = 0; t < k; ++t)
        rowSum += ap[i * k + t];
      for (int64_t j = 0; j < n; ++j) {
        int32_t v = wrapAdd(acc[size_t(i * n + j)], colFold[size_t(j)]);
        v = wrapAdd(v, wrapMul(-zb[size_t(j)], rowSum));
        yp[i * n + j] = quant::requantize(v, mult[size_t(j)], yq.zp, bd.lo, bd.hi);
      }
    }
  }
}

void gemmKernel(const Node& node, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const GemmAttrs g = gemmOf(node.attrs());
  if (!g.normalized())
    throw Error("an int8 Gemm needs transA = 0 and alpha = beta = 1 (the normalize-gemm form)");
  const bool tb = g.transB;
  const Tensor &a = *in[0], &b = *in[1];
  const int64_t m = a.dims()[0], k = a.dims()[1], n = out[0].dims()[1];
  const ColumnParams bq = columnParams(b.type(), n, tb ? 0 : 1);
  const int8_t* bp = b.data<int8_t>();
  std::vector<int8_t> bt;
  if (tb) { // [N, K] -> [K, N]
    bt.resize(size_t(k * n));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < k; ++i)
        bt[size_t(i * n + j)] = bp[j * k + i];
    bp = bt.data();
  }
  productRequant(node, m, k, n, a, bp, bq, in.size() > 2 ? in[2] : nullptr, out[0]);
}

void matMulKernel(const Node& node, const std::vector<const Tensor*>& in,
                  std::vector<Tensor>& out) {
  const Tensor &a = *in[0], &b = *in[1];
  const size_t rb = b.dims().size();
  if (rb < 2)
    throw Error("an int8 MatMul needs b of rank >= 2, has " + shapeToString(b.dims()));
  const int64_t k = b.dims()[rb - 2], n = b.dims()[rb - 1];
  const ColumnParams bq = columnParams(b.type(), n, int(rb) - 1);
  if (rb == 2) { // one matrix: a's batch folds into rows
    const int64_t rows = k ? a.size() / k : 0;
    productRequant(node, rows, k, n, a, b.data<int8_t>(), bq, nullptr, out[0]);
    return;
  }
  // Batched b: a must have the same batch dimensions (no broadcasting).
  if (!isUnbroadcastMatMul(a.dims(), b.dims()))
    throw Error("an int8 MatMul with a batched b needs a of the same batch dimensions: a " +
                shapeToString(a.dims()) + ", b " + shapeToString(b.dims()));
  const int64_t batches = b.size() / (k * n);
  productRequant(node, a.dims()[rb - 2], k, n, a, b.data<int8_t>(), bq, nullptr, out[0], batches);
}

} // namespace

void registerInt8MatMulKernels() {
  registerQuantizedKernel(NodeKind::Gemm, gemmKernel);
  registerQuantizedKernel(NodeKind::MatMul, matMulKernel);
}

} // namespace ember
