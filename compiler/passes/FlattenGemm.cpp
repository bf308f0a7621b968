// flatten-gemm-to-conv: a fully connected layer on a flattened feature map,
// Gemm(Reshape(x [N, C, H, W] -> [N, C*H*W]), B [C*H*W, M], c) with H*W > 1 (the
// classic LeNet/VGG classifier head), becomes Reshape(Conv(x, W [M, C, H, W], c) [N, M,
// 1, 1] -> [N, M]): the same sums, with the constant weight's rows permuted at compile
// time instead of the activations moved at run time. A backend then needs no Flatten of
// a spatial map (on the NPU that Reshape moves channels across NCHWc blocks).
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

namespace ember {

using namespace passes;

namespace {

/// W[m, c, h, w] = B[(c * H + h) * W + w, m].
Tensor convWeight(const Tensor& b, const Shape& x) {
  const int64_t c = x[1], h = x[2], w = x[3], m = b.dims()[1];
  Tensor out(ElemKind::Float32, {m, c, h, w});
  const float* src = b.data<float>();
  float* dst = out.data<float>();
  const int64_t k = c * h * w;
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < k; ++i)
      dst[o * k + i] = src[i * m + o];
  return out;
}

/// Rewrites Gemm `n` when it is a normal-form fully connected layer on a flattened
/// rank-4 value with a spatial extent; false otherwise.
bool rewrite(Function& f, Node* n) {
  if (!allPlainFloat(*n) || FusedActivation::present(n->attrs()) || gemmOf(n->attrs()).anyWritten)
    return false;
  const NodeValue a = n->input(0), b = n->input(1), c = n->optionalInput(2);
  if (a.node->kind() != NodeKind::Reshape || !isConstant(b))
    return false;
  const NodeValue x = a.node->input(0);
  const Shape& xd = x.dims();
  if (xd.size() != 4 || xd[2] * xd[3] <= 1 || a.dims() != Shape{xd[0], xd[1] * xd[2] * xd[3]} ||
      !isPlainFloat(x.type()))
    return false;
  const int64_t m = b.dims()[1];
  Tensor bias;
  if (c) {
    // Only a constant bias of M values (shape [M] or [1, M]) is a Conv bias.
    if (!isConstant(c) || c.type().size() != m || (c.dims() != Shape{m} && c.dims() != Shape{1, m}))
      return false;
    bias = c.node->payload().reshaped({m});
  }
  const std::string name = n->name();
  std::vector<NodeValue> in = {
      x, makeConstant(f, name + ".w_conv", convWeight(b.node->payload(), xd))};
  if (c)
    in.push_back(makeConstant(f, name + ".b_conv", std::move(bias)));
  Attrs attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{xd[2], xd[3]});
  attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("group", int64_t(1));
  Node* conv = f.create(NodeKind::Conv, name + ".conv", in, attrs);
  Attrs flat;
  flat.set("shape", std::vector<int64_t>{xd[0], m});
  Node* out = f.create(NodeKind::Reshape, name + ".flatten", {conv->result()}, flat);
  f.replaceAllUsesOf(n->result(), out->result());
  f.erase(n);
  takeNameIfFree(f, out, name);
  return true;
}

} // namespace

size_t runFlattenGemmToConv(Function& f, const PassContext&) {
  size_t changed = 0;
  for (Node* n : snapshot(f))
    if (n->kind() == NodeKind::Gemm)
      changed += rewrite(f, n);
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
