// Codegen of the matrix products (float32): Gemm in the normalised form (no
// transposition, alpha = beta = 1; C broadcast onto [M, N] by strides) and MatMul whose
// batch dimensions are either all equal to the output's or all broadcast for each
// operand (1-D operands as numpy promotes them).
#include "Codegen.h"
#include "Strides.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"

namespace ember::cpu {

namespace {

bool plainFloat(const Type& t) {
  return t.kind == ElemKind::Float32 && !t.quant.isQuantized();
}

bool supportsGemm(const Op& n) {
  const GemmAttrs g = gemmOf(n.attrs());
  if (!g.normalized() || g.transB)
    return false;
  for (const OpInput& v : n.inputs())
    if (v && !plainFloat(v.type()))
      return false;
  return plainFloat(n.resultType()) && n.input(0).dims().size() == 2 &&
         n.input(1).dims().size() == 2;
}

/// A constant B [K, N] in the column panels of ember_gemm_f32 (libjit/MatMul.cpp): blocks
/// of 64 columns, then of 16, then the rest, each a [K][width] panel at column n * K.
std::vector<float> packColumnPanels(const float* b, int64_t K, int64_t N) {
  std::vector<float> out(static_cast<size_t>(K * N));
  for (int64_t n = 0; n < N;) {
    const int64_t w = n + 64 <= N ? 64 : n + 16 <= N ? 16 : N - n;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < w; ++j)
        out[static_cast<size_t>(n * K + k * w + j)] = b[k * N + n + j];
    n += w;
  }
  return out;
}

void emitGemm(const Op& n, CodegenContext& ctx) {
  const int64_t M = n.input(0).dims()[0], K = n.input(0).dims()[1], N = n.input(1).dims()[1];
  const OpInput c = n.optionalInput(2);
  int64_t cr = 0, cc = 0;
  if (c) {
    const std::vector<int64_t> st = broadcastStrides(c.dims(), {M, N});
    cr = st[0];
    cc = st[1];
  }
  const FusedActivation act = FusedActivation::of(n.node());
  // A constant B is read a panel at a time: in place, a block of columns takes a piece
  // of every row of B (MobileNetV2's classifier: 1280 pieces 4000 bytes apart).
  const OpInput b = n.input(1);
  llvm::Value* bAddr =
      b.isConstant() ? ctx.keep(packColumnPanels(b.constantData<float>(), K, N)) : ctx.addr(b);
  ctx.call("ember_gemm_f32", {ctx.addr(n.input(0)), bAddr, ctx.i32(b.isConstant() ? 1 : 0),
                              ctx.addr(c), ctx.i64(cr), ctx.i64(cc), ctx.result(n), ctx.i64(M),
                              ctx.i64(N), ctx.i64(K), ctx.i32(static_cast<int>(act.kind)),
                              ctx.f32(act.lo), ctx.f32(act.hi), ctx.tid(), ctx.nth()});
}

/// The operands' shapes as [batch..., M, K] and [batch..., K, N] (numpy's promotion of
/// 1-D operands), and their batch strides: the matrix size, or 0 when broadcast.
struct MatMulShape {
  int64_t batch = 1, M = 1, N = 1, K = 1, sa = 0, sb = 0;
  bool ok = false;
};

MatMulShape shapeOf(const Op& n) {
  MatMulShape s;
  Shape a = n.input(0).dims(), b = n.input(1).dims();
  if (a.empty() || b.empty())
    return s;
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  s.M = a[a.size() - 2];
  s.K = a.back();
  s.N = b.back();
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  const size_t rank = std::max(ab.size(), bb.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i + ab.size() >= rank ? ab[i + ab.size() - rank] : 1;
    const int64_t db = i + bb.size() >= rank ? bb[i + bb.size() - rank] : 1;
    out[i] = std::max(da, db);
  }
  s.batch = numElements(out);
  const int64_t na = numElements(ab), nb = numElements(bb);
  if ((na != 1 && na != s.batch) || (nb != 1 && nb != s.batch))
    return s; // partial broadcasting of the batch dimensions
  // Equal counts must also be equal shapes (after leading ones).
  auto sameAsOut = [&](const Shape& d) {
    return numElements(d) == 1 || broadcastStrides(d, out) == contiguousStrides(out) ||
           numElements(d) == s.batch;
  };
  if (!sameAsOut(ab) || !sameAsOut(bb))
    return s;
  s.sa = na == 1 ? 0 : s.M * s.K;
  s.sb = nb == 1 ? 0 : s.K * s.N;
  s.ok = true;
  return s;
}

bool supportsMatMul(const Op& n) {
  if (!plainFloat(n.input(0).type()) || !plainFloat(n.input(1).type()) ||
      !plainFloat(n.resultType()))
    return false;
  return shapeOf(n).ok;
}

void emitMatMul(const Op& n, CodegenContext& ctx) {
  const MatMulShape s = shapeOf(n);
  const FusedActivation act = FusedActivation::of(n.node());
  ctx.call("ember_matmul_f32", {ctx.addr(n.input(0)), ctx.addr(n.input(1)), ctx.result(n),
                                ctx.i64(s.batch), ctx.i64(s.sa), ctx.i64(s.sb), ctx.i64(s.M),
                                ctx.i64(s.N), ctx.i64(s.K), ctx.i32(static_cast<int>(act.kind)),
                                ctx.f32(act.lo), ctx.f32(act.hi), ctx.tid(), ctx.nth()});
}

} // namespace

void registerMatMulCodegen() {
  registerCodegenUnit(NodeKind::Gemm, {"matmul", supportsGemm, emitGemm});
  registerCodegenUnit(NodeKind::MatMul, {"matmul", supportsMatMul, emitMatMul});
}

} // namespace ember::cpu
