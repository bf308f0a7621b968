// Interpreter kernels of MatMul (numpy semantics: 1-D operands, batch broadcasting)
// and Gemm (transA, transB, alpha, beta, optional C broadcast to M x N), both on the
// blocked GEMM core.
#include "GemmCore.h"
#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/interpreter/Kernels.h"

#include <vector>

namespace ember {

namespace {

/// Element offsets, in a tensor of batch shape `own` (right-aligned against `full`,
/// broadcasting size-1 dimensions), of each index of `full`; each scaled by `matrix`.
std::vector<int64_t> batchOffsets(const Shape& full, const Shape& own, int64_t matrix) {
  const int64_t count = numElements(full);
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  const size_t lead = full.size() - own.size();
  for (int64_t i = 0; i < count; ++i) {
    int64_t rem = i, off = 0, stride = matrix;
    for (size_t d = full.size(); d-- > 0;) {
      const int64_t coord = rem % full[d];
      rem /= full[d];
      if (d >= lead) {
        const int64_t ext = own[d - lead];
        off += (ext == 1 ? 0 : coord) * stride;
        stride *= ext;
      }
    }
    offsets[static_cast<size_t>(i)] = off;
  }
  return offsets;
}

void matMulProduct(const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  Shape a = in[0]->dims(), b = in[1]->dims();
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  const Shape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  const float* ap = in[0]->data<float>();
  const float* bp = in[1]->data<float>();
  float* yp = out[0].data<float>();
  if (numElements(batchB) == 1) {
    // B is one matrix: fold A's batch into its rows (one large product).
    const int64_t rows = numElements(batchA) * m;
    sgemm(rows, n, k, 1.f, {ap, k, 1}, {bp, n, 1}, 0.f, yp, n);
    return;
  }
  const size_t rank = std::max(batchA.size(), batchB.size());
  Shape full(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t da = d < rank - batchA.size() ? 1 : batchA[d - (rank - batchA.size())];
    const int64_t db = d < rank - batchB.size() ? 1 : batchB[d - (rank - batchB.size())];
    full[d] = da == 1 ? db : da;
  }
  const std::vector<int64_t> offA = batchOffsets(full, batchA, m * k);
  const std::vector<int64_t> offB = batchOffsets(full, batchB, k * n);
  for (size_t i = 0; i < offA.size(); ++i)
    sgemm(m, n, k, 1.f, {ap + offA[i], k, 1}, {bp + offB[i], n, 1}, 0.f,
          yp + static_cast<int64_t>(i) * m * n, n);
}

void gemmKernel(const Node& node, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const GemmAttrs g = gemmOf(node.attrs());
  const bool ta = g.transA, tb = g.transB;
  const float alpha = static_cast<float>(g.alpha);
  const float beta = static_cast<float>(g.beta);
  const Tensor &a = *in[0], &b = *in[1];
  const Tensor* c = in.size() > 2 ? in[2] : nullptr;
  const int64_t m = out[0].dims()[0], n = out[0].dims()[1];
  const int64_t k = ta ? a.dims()[0] : a.dims()[1];
  float* yp = out[0].data<float>();
  float gemmBeta = 0.f;
  if (c && beta != 0.f) {
    // Y = beta * C broadcast to M x N, then accumulate the product into it.
    const Shape& cs = c->dims();
    const int64_t cm = cs.size() == 2 ? cs[0] : 1, cn = cs.empty() ? 1 : cs.back();
    const float* cp = c->data<float>();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        yp[i * n + j] = beta * cp[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
    gemmBeta = 1.f;
  }
  sgemmRowMajor(ta, tb, m, n, k, alpha, a.data<float>(), a.dims()[1], b.data<float>(), b.dims()[1],
                gemmBeta, yp, n);
  applyFusedActivation(node, out[0]);
}

void matMulKernel(const Node& node, const std::vector<const Tensor*>& in,
                  std::vector<Tensor>& out) {
  matMulProduct(in, out);
  applyFusedActivation(node, out[0]);
}

} // namespace

void registerMatMulKernels() {
  registerKernel(NodeKind::MatMul, matMulKernel);
  registerKernel(NodeKind::Gemm, gemmKernel);
}

} // namespace ember
