// convtranspose-to-depthtospace: a transposed convolution of stride s (both axes), any
// kernel k (per axis), padding and output padding, dilation 1, one group, constant
// weights, becomes one Conv producing s * s * Cout channels, a DepthToSpace(s, DCR) and,
// only when an output length is not a multiple of s, a Slice that keeps its first pixels.
//
// The algebra, per spatial axis (input length L, pads pb / pe, output length Lout): the
// ConvTranspose writes y[o] = sum over i, t with o + pb = s i + t of x[i] W[t]. Split the
// output by phase, o = s q + a (0 <= a < s): then t = (a + pb) mod s + s j and i = q + f_a
// - j with f_a = floor((a + pb) / s), for the T_a taps j = 0, 1, ... with t < k. So phase a
// is an ordinary correlation of x with a sub-kernel reading x[q + e] for e in [f_a - T_a +
// 1, f_a]. Over the union [emin, emax] of these windows (emin <= 0, widened so the pads
// are >= 0) every phase is one convolution of kernel Tc = emax - emin + 1, pads -emin
// (begin) and Q - L + emax (end), Q = ceil(Lout / s) outputs; its taps outside a phase's
// window are 0. Channel (a_h s + a_w) Cout + co of the Conv is phase (a_h, a_w) of output
// channel co, which DepthToSpace(s, DCR) puts at pixel (s q_h + a_h, s q_w + a_w). k = s,
// no pads (the U-Net's k = s = 2) gives a 1 x 1 Conv; k = 4, s = 2, pads 1 (GAN/U-Net
// upsampling) a 3 x 3 Conv, pads 1; k = 3, s = 2, pads 1, output_padding 1 a 2 x 2 Conv,
// pads (0, 1). The sums are the ConvTranspose's (a float sum up to rounding order); the
// quantizer then makes an int8 Conv and a DepthToSpace that moves codes, which the NPU runs
// on its MAC array and by DMA (npu-layers.md, "Upsampling"). The crop Slice (e.g. k = 3,
// s = 2, pads 1, no output padding) is a constant spatial Slice, which the NPU runs by
// strided DMA too (ChannelSelectLayer).
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

namespace ember {

using namespace passes;

namespace {

/// The phase split of one spatial axis (file comment).
struct AxisPlan {
  int64_t k = 0;            ///< The ConvTranspose's kernel.
  int64_t emin = 0, tc = 0; ///< The Conv's window: x[q + emin ...], Tc taps.
  int64_t padBegin = 0, padEnd = 0;
  int64_t q = 0;                   ///< Conv outputs: ceil(Lout / s).
  std::vector<int64_t> r, f, taps; ///< Per phase a: first tap, input offset, tap count.
};

AxisPlan planAxis(int64_t s, int64_t k, int64_t pb, int64_t len, int64_t outLen) {
  AxisPlan p;
  p.k = k;
  p.q = (outLen + s - 1) / s;
  int64_t emin = 0, emax = len - p.q; // pads >= 0 (file comment)
  for (int64_t a = 0; a < s; ++a) {
    const int64_t r = (a + pb) % s, f = (a + pb) / s;
    const int64_t t = r < k ? (k - r + s - 1) / s : 0;
    p.r.push_back(r);
    p.f.push_back(f);
    p.taps.push_back(t);
    if (t) {
      emin = std::min(emin, f - t + 1);
      emax = std::max(emax, f);
    }
  }
  p.emin = emin;
  p.tc = emax - emin + 1;
  p.padBegin = -emin;
  p.padEnd = p.q - len + emax;
  return p;
}

/// The ConvTranspose tap of Conv tap u for phase a, or -1 when that tap is 0.
int64_t tapOf(const AxisPlan& p, int64_t s, int64_t a, int64_t u) {
  const int64_t j = p.f[size_t(a)] - (p.emin + u);
  return j >= 0 && j < p.taps[size_t(a)] ? p.r[size_t(a)] + s * j : -1;
}

/// The stride s when `n` is a ConvTranspose of the form in the file comment (with its two
/// axis plans in `plan`), else 0.
int64_t strideOfConvTranspose(const Node& n, AxisPlan plan[2]) {
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
  const int64_t s = win.strides[0];
  if (s < 2 || win.strides[1] != s || win.group != 1 || win.autoPad != "NOTSET")
    return 0;
  const Shape& x = n.input(0).dims();
  const Shape& y = n.resultType(0).dims;
  if (y.size() != 4 || y[0] != x[0] || y[1] != w[1])
    return 0;
  for (size_t d = 0; d < 2; ++d) {
    const int64_t k = w[2 + d], len = x[2 + d], outLen = y[2 + d];
    if (win.dilations[d] != 1 ||
        outLen != s * (len - 1) + k + win.outputPadding[d] - win.padBegin(d) - win.padEnd(d))
      return 0;
    plan[d] = planAxis(s, k, win.padBegin(d), len, outLen);
    if (plan[d].tc > k || plan[d].padEnd < 0) // a wider Conv than the ConvTranspose: leave it
      return 0;
  }
  return s;
}

/// The Conv's weights [s s Cout, Cin, Tc_h, Tc_w] from the ConvTranspose's [Cin, Cout, k_h, k_w].
Tensor phaseWeights(const Tensor& wt, int64_t s, const AxisPlan plan[2]) {
  const Shape& wd = wt.dims();
  const int64_t cin = wd[0], cout = wd[1], kh = wd[2], kw = wd[3];
  const int64_t th = plan[0].tc, tw = plan[1].tc;
  Tensor cw(ElemKind::Float32, {s * s * cout, cin, th, tw});
  float* dst = cw.data<float>();
  std::fill(dst, dst + cw.size(), 0.0f);
  const float* w = wt.data<float>();
  for (int64_t ah = 0; ah < s; ++ah)
    for (int64_t aw = 0; aw < s; ++aw)
      for (int64_t uh = 0; uh < th; ++uh)
        for (int64_t uw = 0; uw < tw; ++uw) {
          const int64_t h = tapOf(plan[0], s, ah, uh), v = tapOf(plan[1], s, aw, uw);
          if (h < 0 || v < 0)
            continue;
          for (int64_t co = 0; co < cout; ++co)
            for (int64_t ci = 0; ci < cin; ++ci)
              dst[((((ah * s + aw) * cout + co) * cin + ci) * th + uh) * tw + uw] =
                  w[((ci * cout + co) * kh + h) * kw + v];
        }
  return cw;
}

bool rewrite(Function& f, Node* n) {
  AxisPlan plan[2];
  const int64_t s = strideOfConvTranspose(*n, plan);
  if (!s)
    return false;
  const int64_t cout = n->input(1).dims()[1], k = s * s * cout;
  const std::string name = n->name();
  std::vector<NodeValue> in = {
      n->input(0),
      makeConstant(f, name + ".w_conv", phaseWeights(n->input(1).node->payload(), s, plan))};
  if (const NodeValue bias = n->optionalInput(2)) {
    Tensor cb(ElemKind::Float32, {k});
    const float* src = bias.node->payload().data<float>();
    for (int64_t g = 0; g < s * s; ++g)
      for (int64_t co = 0; co < cout; ++co)
        cb.data<float>()[g * cout + co] = src[co];
    in.push_back(makeConstant(f, name + ".b_conv", std::move(cb)));
  }
  Attrs attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{plan[0].tc, plan[1].tc});
  attrs.set("pads", std::vector<int64_t>{plan[0].padBegin, plan[1].padBegin, plan[0].padEnd,
                                         plan[1].padEnd});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("group", int64_t(1));
  Node* conv = f.create(NodeKind::Conv, name + ".conv", in, attrs);
  Attrs d2s;
  d2s.set("blocksize", s);
  d2s.set("mode", std::string("DCR"));
  Node* out = f.create(NodeKind::DepthToSpace, name + ".depth_to_space", {conv->result()}, d2s);
  const Type want = n->resultType(0);
  if (out->resultType(0).dims != want.dims) { // crop the last rows / columns
    Attrs a;
    a.set("starts", std::vector<int64_t>{0, 0, 0, 0});
    a.set("ends", std::vector<int64_t>(want.dims.begin(), want.dims.end()));
    a.set("steps", std::vector<int64_t>{1, 1, 1, 1});
    out = f.create(NodeKind::Slice, name + ".crop", {out->result()}, std::move(a),
                   std::vector<Type>{want});
  }
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
