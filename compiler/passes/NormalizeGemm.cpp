// normalize-gemm: every Gemm into one form, Y = A * B + C (alpha = beta = 1, no
// transposition flags), with B [K, N] laid out as MatMul's, so quantization and the
// backends handle a single form of fully connected layer.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

namespace ember {

using namespace passes;

namespace {

/// The transpose of a 2-D constant, times `scale`.
Tensor transposed(const Tensor& t, double scale, bool transpose) {
  const int64_t r = t.dims()[0], c = t.dims()[1];
  Tensor out(ElemKind::Float32, transpose ? Shape{c, r} : Shape{r, c});
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      dst[transpose ? j * r + i : i * c + j] = static_cast<float>(double(src[i * c + j]) * scale);
  return out;
}

Tensor scaled(const Tensor& t, double scale) {
  Tensor out(ElemKind::Float32, t.dims());
  for (int64_t i = 0; i < t.size(); ++i)
    out.data<float>()[i] = static_cast<float>(double(t.data<float>()[i]) * scale);
  return out;
}

bool isPlainFloatConstant(const NodeValue& v) {
  return isConstant(v) && isPlainFloat(v.type());
}

/// Rewrites Gemm `n` into the normal form when its operands allow; false if it is in
/// normal form already or cannot be brought there.
bool normalize(Function& f, Node* n) {
  if (!allPlainFloat(*n))
    return false;
  const Attrs& at = n->attrs();
  const GemmAttrs ga = gemmOf(n->attrs());
  const bool ta = ga.transA, tb = ga.transB;
  const double alpha = ga.alpha, beta = ga.beta;
  NodeValue a = n->input(0), b = n->input(1), c = n->optionalInput(2);
  const bool bConst = isPlainFloatConstant(b);
  const bool cFoldable = !c || beta == 1.0 || beta == 0.0 || isPlainFloatConstant(c);
  // alpha needs a constant B to go into; so does transB.
  if ((!bConst && (tb || alpha != 1.0)) || !cFoldable)
    return false;
  if (!ta && !tb && alpha == 1.0 && (!c || beta == 1.0) && !ga.anyWritten)
    return false;
  const std::string name = n->name();
  if (ta) {
    Attrs t;
    t.set("perm", std::vector<int64_t>{1, 0});
    a = isPlainFloatConstant(a)
            ? makeConstant(f, name + ".a_t", transposed(a.node->payload(), 1.0, true))
            : f.create(NodeKind::Transpose, name + ".a_t", {a}, t)->result();
  }
  if (tb || alpha != 1.0)
    b = makeConstant(f, name + ".b_n", transposed(b.node->payload(), alpha, tb));
  std::vector<NodeValue> in = {a, b};
  if (c && beta != 0.0)
    in.push_back(beta == 1.0 ? c : makeConstant(f, name + ".c_n", scaled(c.node->payload(), beta)));
  Attrs attrs = at;
  for (const char* k : {"alpha", "beta", "transA", "transB"})
    attrs.erase(k);
  Node* g = f.create(NodeKind::Gemm, name, in, attrs);
  f.replaceAllUsesOf(n->result(), g->result());
  f.erase(n);
  g->setName(name);
  return true;
}

} // namespace

size_t runNormalizeGemm(Function& f, const PassContext&) {
  size_t changed = 0;
  for (Node* n : snapshot(f))
    if (n->kind() == NodeKind::Gemm)
      changed += normalize(f, n);
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
