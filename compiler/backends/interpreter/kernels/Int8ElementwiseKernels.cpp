// Int8 kernels of the elementwise kinds and of the operators that move int8 codes
// (docs/numerics.md sections 4.2-4.4, 4.6, 4.7):
//   Add      rescaled add: t = (a - zp_a) * M_a + (b - zp_b) * M_b, requantize(t, {1, S})
//   Mul      acc = (a - zp_a) * (b - zp_b), requantize(acc; s_a * s_b / s_y)
//   Relu     the codes clamped to [zp, 127] (result parameters = input parameters)
//   Clip     the codes clamped to the quantized bounds
//   Lut      y = table[x + 128]
//   Rescale  requantize(x - zp_x; s_x / s_y)
//   PRelu    t = max(d, 0) * Mp + min(d, 0) * Mn[c] with d = x - zp_x, requantize(t, {1, S})
//            (section 4.12; a float32 constant slope per channel)
//   Pad      the generic kernel with the pad value quantized with the result's params
//   Resize   nearest: codes picked; linear: bilinear by whole factors (BilinearUpsample.h)
//   data movement (Reshape, Transpose, Slice, Concat, Split, Gather, ...): the generic
//            kernels, after checking that the codes keep their meaning (equal params).
// Numpy broadcasting as the float kernels (Broadcast.h).
#include "Broadcast.h"
#include "Int8Util.h"

#include "ember/graph/AttrViews.h"
#include "ember/interpreter/Kernels.h"
#include "ember/quantization/BilinearUpsample.h"

namespace ember {

namespace {

using namespace kernels;
using Ins = std::vector<const Tensor*>;
using Outs = std::vector<Tensor>;

void addKernel(const Node& n, const Ins& in, Outs& out) {
  const TensorQ a = perTensor(in[0]->type(), "a"), b = perTensor(in[1]->type(), "b");
  const TensorQ y = perTensor(out[0].type(), "result");
  const quant::AddMultipliers m = quant::addMultipliers(a.scale, b.scale, y.scale);
  const quant::Bounds bd = quant::activationBounds(n, out[0].type().quant);
  const quant::Multiplier shift{1, m.S};
  const int8_t* ap = in[0]->data<int8_t>();
  const int8_t* bp = in[1]->data<int8_t>();
  int8_t* yp = out[0].data<int8_t>();
  forEachBroadcast<2>(out[0].dims(), {&in[0]->dims(), &in[1]->dims()},
                      [&](int64_t o, const std::array<int64_t, 2>& i) {
                        const int32_t t = (ap[i[0]] - a.zp) * m.Ma + (bp[i[1]] - b.zp) * m.Mb;
                        yp[o] = quant::requantize(t, shift, y.zp, bd.lo, bd.hi);
                      });
}

void mulKernel(const Node& n, const Ins& in, Outs& out) {
  const TensorQ a = perTensor(in[0]->type(), "a"), b = perTensor(in[1]->type(), "b");
  const TensorQ y = perTensor(out[0].type(), "result");
  const quant::Multiplier m = quant::productMultiplier(a.scale, b.scale, y.scale);
  const quant::Bounds bd = quant::activationBounds(n, out[0].type().quant);
  const int8_t* ap = in[0]->data<int8_t>();
  const int8_t* bp = in[1]->data<int8_t>();
  int8_t* yp = out[0].data<int8_t>();
  forEachBroadcast<2>(out[0].dims(), {&in[0]->dims(), &in[1]->dims()},
                      [&](int64_t o, const std::array<int64_t, 2>& i) {
                        const int32_t acc = (ap[i[0]] - a.zp) * (bp[i[1]] - b.zp);
                        yp[o] = quant::requantize(acc, m, y.zp, bd.lo, bd.hi);
                      });
}

/// Relu and Clip: codes clamped to activationBounds (parameters unchanged).
void clampKernel(const Node& n, const Ins& in, Outs& out) {
  perTensor(out[0].type(), "result");
  requireSameParams(in[0]->type(), out[0].type(), n.kindName());
  const quant::Bounds bd = quant::activationBounds(n, out[0].type().quant);
  const int8_t* x = in[0]->data<int8_t>();
  int8_t* y = out[0].data<int8_t>();
  for (int64_t i = 0, e = out[0].size(); i < e; ++i)
    y[i] = static_cast<int8_t>(std::min<int32_t>(bd.hi, std::max<int32_t>(bd.lo, x[i])));
}

void lutKernel(const Node&, const Ins& in, Outs& out) {
  if (in[1]->kind() != ElemKind::Int8 || in[1]->size() != 256)
    throw Error("table is " + in[1]->type().toString() + ", expected int8[256]");
  const int8_t* x = in[0]->data<int8_t>();
  const int8_t* t = in[1]->data<int8_t>();
  int8_t* y = out[0].data<int8_t>();
  for (int64_t i = 0, e = out[0].size(); i < e; ++i)
    y[i] = t[x[i] + 128];
}

void rescaleKernel(const Node& n, const Ins& in, Outs& out) {
  const TensorQ x = perTensor(in[0]->type(), "input");
  const TensorQ y = perTensor(out[0].type(), "result");
  const quant::Multiplier m = quant::averageMultiplier(x.scale, y.scale, 1);
  const quant::Bounds bd = quant::activationBounds(n, out[0].type().quant);
  const int8_t* xp = in[0]->data<int8_t>();
  int8_t* yp = out[0].data<int8_t>();
  for (int64_t i = 0, e = out[0].size(); i < e; ++i)
    yp[i] = quant::requantize(xp[i] - x.zp, m, y.zp, bd.lo, bd.hi);
}

/// PRelu (section 4.12): the slope, a float32 tensor, varies along axis 1 only.
void preluKernel(const Node& n, const Ins& in, Outs& out) {
  const TensorQ x = perTensor(in[0]->type(), "input");
  const TensorQ y = perTensor(out[0].type(), "result");
  const Shape& d = in[0]->dims();
  const std::vector<float> slopes = quant::preluChannelSlopes(d, *in[1]);
  if (slopes.empty() || out[0].dims() != d)
    throw Error("int8 PRelu: the slope " + in[1]->type().toString() +
                " must be float32 and vary along the channel axis (1) of " + shapeToString(d) +
                " only");
  const quant::PReluMultipliers m = quant::preluMultipliers(x.scale, y.scale, slopes);
  const quant::Bounds bd = quant::activationBounds(n, out[0].type().quant);
  const quant::Multiplier shift{1, m.S};
  int64_t inner = 1;
  for (size_t i = 2; i < d.size(); ++i)
    inner *= d[i];
  const int64_t C = d[1];
  const int8_t* xp = in[0]->data<int8_t>();
  int8_t* yp = out[0].data<int8_t>();
  for (int64_t i = 0, e = out[0].size(); i < e; ++i) {
    const int32_t v = xp[i] - x.zp, c = int32_t(i / inner % C);
    const int32_t t = std::max(v, 0) * m.Mp + std::min(v, 0) * m.Mn[size_t(c)];
    yp[i] = quant::requantize(t, shift, y.zp, bd.lo, bd.hi);
  }
}

void padKernel(const Node& n, const Ins& in, Outs& out) {
  requireSameParams(in[0]->type(), out[0].type(), "Pad");
  const TensorQ y = perTensor(out[0].type(), "result");
  (void)y;
  Tensor value(ElemKind::Int8, {});
  if (in.size() > 1 && in[1])
    value = *in[1];
  else
    value.data<int8_t>()[0] =
        static_cast<int8_t>(quant::quantizeBound(padOf(n.attrs()).value, out[0].type().quant));
  const KernelFn* generic = findKernel(NodeKind::Pad);
  (*generic)(n, {in[0], &value}, out);
}

/// A kind that moves codes: its generic kernel, once the parameters of operand 0 (and
/// of every further int8 operand when `allOperands`) equal the result's.
KernelFn movingKernel(NodeKind k, bool allOperands) {
  return [k, allOperands](const Node& n, const Ins& in, Outs& out) {
    for (size_t i = 0; i < (allOperands ? in.size() : 1); ++i)
      if (in[i])
        for (const Tensor& o : out)
          requireSameParams(in[i]->type(), o.type(), n.kindName());
    (*findKernel(k))(n, in, out);
  };
}

/// Bilinear Resize by whole factors (section 4.4, ember/quantization/BilinearUpsample.h):
/// integer weights per output coordinate, one requantization by 1 / (4 fH fW).
void bilinearResizeKernel(const Node& n, const Ins& in, Outs& out) {
  requireSameParams(in[0]->type(), out[0].type(), "Resize");
  const Shape& x = in[0]->dims();
  const std::vector<int64_t> f = quant::bilinearUpsampleFactors(n.attrs(), x, out[0].dims());
  if (f.empty())
    throw Error(std::string("Resize '") + n.name() +
                "': an int8 linear Resize must upsample H and W of an NCHW value by whole factors "
                "(at most " +
                std::to_string(quant::kMaxBilinearFactor) +
                ") under half_pixel or pytorch_half_pixel (docs/numerics.md 4.4)");
  const std::vector<quant::BilinearTap> th = quant::bilinearTaps(x[2], f[0]),
                                        tw = quant::bilinearTaps(x[3], f[1]);
  const quant::Multiplier m = quant::bilinearMultiplier(f[0], f[1]);
  const int32_t zp = perTensor(out[0].type(), "result").zp;
  const int8_t* xp = in[0]->data<int8_t>();
  int8_t* yp = out[0].data<int8_t>();
  const int64_t OH = int64_t(th.size()), OW = int64_t(tw.size());
  for (int64_t p = 0; p < x[0] * x[1]; ++p)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j)
        yp[(p * OH + i) * OW + j] =
            quant::bilinearCode(xp + p * x[2] * x[3], x[3], th[size_t(i)], tw[size_t(j)], zp, m);
}

} // namespace

void registerInt8ElementwiseKernels() {
  using K = NodeKind;
  registerQuantizedKernel(K::Add, addKernel);
  registerQuantizedKernel(K::Mul, mulKernel);
  registerQuantizedKernel(K::Relu, clampKernel);
  registerQuantizedKernel(K::Clip, clampKernel);
  registerQuantizedKernel(K::Pad, padKernel);
  registerKernel(K::Rescale, rescaleKernel);
  registerKernel(K::Lut, lutKernel);
  registerQuantizedKernel(K::PRelu, preluKernel);
  for (K k : {K::Reshape, K::Transpose, K::Slice, K::Split, K::Gather, K::Expand, K::Tile,
              K::DepthToSpace, K::SpaceToDepth})
    registerQuantizedKernel(k, movingKernel(k, false));
  registerQuantizedKernel(K::Concat, movingKernel(K::Concat, true));
  // Nearest-neighbour Resize picks codes (docs/numerics.md section 4.4; the quantizer makes
  // it for whole factors only, this kernel runs any); a linear one is the integer rule of
  // bilinearResizeKernel; an int8 cubic Resize has no integer rule.
  registerQuantizedKernel(K::Resize, [moving = movingKernel(K::Resize, false)](
                                         const Node& n, const Ins& in, Outs& out) {
    if (resizeOf(n.attrs()).mode == "linear")
      return bilinearResizeKernel(n, in, out);
    if (resizeOf(n.attrs()).mode != "nearest")
      throw Error(std::string("Resize '") + n.name() + "': an int8 Resize must be nearest (mode '" +
                  resizeOf(n.attrs()).mode + "' has no integer rule, docs/numerics.md 4.4)");
    moving(n, in, out);
  });
}

} // namespace ember
