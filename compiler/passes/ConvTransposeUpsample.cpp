// convtranspose-to-depthtospace: a transposed convolution whose kernel equals its stride
// (b x b, stride b, no padding, dilation 1, no output padding, one group: the U-Net's
// k = s = 2 upsampling) writes every output pixel from exactly one input pixel and one
// kernel tap: output (co, h b + i, w b + j) = bias[co] + sum over ci of x[ci, h, w] *
// W[ci, co, i, j]. That is a 1 x 1 Conv producing b * b * Cout channels, channel (i b +
// j) Cout + co with weights W[., co, i, j] and bias[co], followed by DepthToSpace(b,
// DCR), which moves each channel group to its pixel of the b x b block: the same sums,
// on kinds every backend already runs (the NPU's MAC array and DMA).
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

namespace ember {

using namespace passes;

namespace {

/// The block size b when `n` is a ConvTranspose of the form in the file comment, else 0.
int64_t blockOfConvTranspose(const Node& n) {
  if (!allPlainFloat(n) || FusedActivation::present(n.attrs()) || n.input(0).dims().size() != 4 ||
      !isPlainFloat(n.input(0).type()) || !isConstant(n.input(1)) ||
      n.input(1).kind() != ElemKind::Float32 || n.input(1).dims().size() != 4)
    return 0;
  const NodeValue bias = n.optionalInput(2);
  if (bias && (!isConstant(bias) || bias.kind() != ElemKind::Float32))
    return 0;
  const Shape& w = n.input(1).dims();
  const Shape filter{w[2], w[3]};
  const WindowAttrs win = windowOf(n.attrs(), 2, &filter);
  const int64_t b = w[2];
  if (w[3] != b || b < 2 || win.group != 1 || win.autoPad != "NOTSET")
    return 0;
  for (int64_t s : win.strides)
    if (s != b)
      return 0;
  for (int64_t d : win.dilations)
    if (d != 1)
      return 0;
  for (int64_t p : win.pads)
    if (p != 0)
      return 0;
  for (int64_t p : win.outputPadding)
    if (p != 0)
      return 0;
  const Shape& x = n.input(0).dims();
  if (n.resultType(0).dims != Shape{x[0], w[1], x[2] * b, x[3] * b})
    return 0;
  return b;
}

bool rewrite(Function& f, Node* n) {
  const int64_t b = blockOfConvTranspose(*n);
  if (!b)
    return false;
  const Shape& wd = n->input(1).dims();
  const int64_t cin = wd[0], cout = wd[1], k = b * b * cout;
  const float* w = n->input(1).node->payload().data<float>();
  Tensor cw(ElemKind::Float32, {k, cin, 1, 1});
  float* dst = cw.data<float>();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t co = 0; co < cout; ++co)
        for (int64_t ci = 0; ci < cin; ++ci)
          dst[((i * b + j) * cout + co) * cin + ci] = w[((ci * cout + co) * b + i) * b + j];
  const std::string name = n->name();
  std::vector<NodeValue> in = {n->input(0), makeConstant(f, name + ".w_conv", std::move(cw))};
  if (const NodeValue bias = n->optionalInput(2)) {
    Tensor cb(ElemKind::Float32, {k});
    const float* src = bias.node->payload().data<float>();
    for (int64_t g = 0; g < b * b; ++g)
      for (int64_t co = 0; co < cout; ++co)
        cb.data<float>()[g * cout + co] = src[co];
    in.push_back(makeConstant(f, name + ".b_conv", std::move(cb)));
  }
  Attrs attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{1, 1});
  attrs.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("group", int64_t(1));
  Node* conv = f.create(NodeKind::Conv, name + ".conv", in, attrs);
  Attrs d2s;
  d2s.set("blocksize", b);
  d2s.set("mode", std::string("DCR"));
  Node* out = f.create(NodeKind::DepthToSpace, name + ".depth_to_space", {conv->result()}, d2s);
  f.replaceAllUsesOf(n->result(), out->result());
  f.erase(n);
  takeNameIfFree(f, out, name);
  return true;
}

} // namespace

size_t runConvTransposeToDepthToSpace(Function& f, const PassContext&) {
  size_t changed = 0;
  for (Node* n : snapshot(f))
    if (n->kind() == NodeKind::ConvTranspose)
      changed += rewrite(f, n);
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
