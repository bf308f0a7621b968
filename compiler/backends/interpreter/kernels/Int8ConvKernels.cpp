// The int8 Conv kernel (docs/numerics.md 4.1), 1-D to 3-D, any stride, padding,
// dilation and group:
//   acc[k] = wrap32(b[k] + sum over taps and the group's input channels of (x - zp_x) * w)
//   y      = requantize(acc[k]; s_x * s_w[k] / s_y, zp_y, activation bounds)
// Per image and group: im2col of the int8 codes with padding zp_x (1x1 unit-stride
// filters read the input directly), the int8 GEMM core, then -zp_x * sum w[k] folded into
// the bias (exact modulo 2^32, as the NPU computes it). Depthwise convolutions run a
// direct loop on (x - zp_x), taps outside the input skipped (they contribute 0).
//
// Weights from the quantizer have zero point 0. An imported model (QLinearConv, QDQ) may
// carry weight zero points zp_w[k] != 0: the interpreter then computes
// sum (x - zp_x) * (w - zp_w[k]), the GEMM path subtracting zp_w[k] * sum (x - zp_x) per
// output position from the column sums.
#include "ConvWindow.h"
#include "Int8GemmCore.h"
#include "Int8Util.h"

#include "ember/graph/AttrViews.h"
#include "ember/interpreter/Kernels.h"

#include <cstring>

namespace ember {

namespace {

using namespace kernels;

/// Direct depthwise accumulation of one plane: acc += sum over taps of (x - zp) * (f - zpw).
void depthwisePlane(const int8_t* x, int32_t zp, const int8_t* filt, int32_t zpw, const Window3& w,
                    int32_t* acc) {
  forEachTapRow(w, [&](int64_t tap, int64_t so, int64_t dOff, int64_t lo, int64_t hi) {
    const int32_t f = filt[tap] - zpw;
    const int8_t* src = x + so;
    int32_t* dst = acc + dOff;
    for (int64_t ow = lo; ow < hi; ++ow)
      dst[ow] += f * (src[ow * w.s[2]] - zp);
  });
}

/// The scales and zero points of an int8 filter, one per output channel.
struct FilterParams {
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
};

FilterParams filterParams(const Type& t, int64_t channels) {
  const QuantParams& q = t.quant;
  const bool perTensorOk = q.scales.size() == 1 && q.zeroPoints.size() == 1 && q.axis < 0;
  const bool perChannelOk = int64_t(q.scales.size()) == channels &&
                            int64_t(q.zeroPoints.size()) == channels && q.axis == 0;
  if (t.kind != ElemKind::Int8 || !(perTensorOk || perChannelOk))
    throw Error("filter is " + t.toString() +
                ", expected int8 with one scale or one per output channel along axis 0");
  FilterParams f{q.scales, q.zeroPoints};
  f.scales.resize(size_t(channels), q.scales[0]);
  f.zeroPoints.resize(size_t(channels), q.zeroPoints[0]);
  return f;
}

void convKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor &x = *in[0], &filt = *in[1];
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  Tensor& y = out[0];
  const TensorQ xq = perTensor(x.type(), "input"), yq = perTensor(y.type(), "result");
  const Shape ks(filt.dims().begin() + 2, filt.dims().end());
  const Window3 w = makeWindow3(n, x.dims(), y.dims(), &ks);
  const int64_t batch = x.dims()[0], c = x.dims()[1], m = y.dims()[1];
  const int64_t group = groupOf(n.attrs()), cg = c / group, mg = m / group;
  const int64_t kdim = cg * w.kSize(), inPlane = w.inSize(), outPlane = w.outSize();
  const FilterParams fp = filterParams(filt.type(), m);
  if (bias && (bias->kind() != ElemKind::Int32 || bias->size() != m))
    throw Error("bias is " + bias->type().toString() + ", expected int32[" + std::to_string(m) +
                "]");
  const quant::Bounds bd = quant::activationBounds(n, y.type().quant);
  ChannelRequant rq;
  for (float s : fp.scales)
    rq.mult.push_back(quant::productMultiplier(xq.scale, s, yq.scale));
  bool weightZeroPoints = false;
  for (int32_t z : fp.zeroPoints)
    weightZeroPoints = weightZeroPoints || z != 0;
  const int8_t* xp = x.data<int8_t>();
  const int8_t* wp = filt.data<int8_t>();
  const int32_t* bp = bias ? bias->data<int32_t>() : nullptr;
  int8_t* yp = y.data<int8_t>();

  // Per channel: bias - zp_x * sum w[k] (the padded taps hold zp_x in the columns).
  std::vector<int32_t> fold(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) {
    int32_t sum = 0;
    for (int64_t i = 0; i < kdim; ++i)
      sum += wp[k * kdim + i];
    fold[size_t(k)] = wrapAdd(bp ? bp[k] : 0, wrapMul(-xq.zp, sum));
  }
  const bool depthwise = cg == 1 && group > 1;
  bool direct1x1 = w.kSize() == 1;
  for (int i = 0; i < 3; ++i)
    direct1x1 = direct1x1 && w.s[i] == 1 && w.pb[i] == 0 && w.pe[i] == 0;
  thread_local std::vector<int8_t> col;
  thread_local std::vector<int32_t> acc;
  std::vector<int32_t> colSum;
  if (!depthwise && !direct1x1 && col.size() < size_t(kdim * outPlane))
    col.resize(size_t(kdim * outPlane));
  if (acc.size() < size_t(mg * outPlane))
    acc.resize(size_t(mg * outPlane));

  for (int64_t b = 0; b < batch; ++b)
    for (int64_t g = 0; g < group; ++g) {
      const int8_t* xg = xp + (b * c + g * cg) * inPlane;
      const int8_t* wg = wp + g * mg * kdim;
      if (depthwise) {
        std::fill(acc.begin(), acc.begin() + mg * outPlane, 0);
        for (int64_t j = 0; j < mg; ++j)
          depthwisePlane(xg, xq.zp, wg + j * w.kSize(), fp.zeroPoints[size_t(g * mg + j)], w,
                         acc.data() + j * outPlane);
      } else {
        const int8_t* cols = xg;
        if (!direct1x1) {
          im2col(xg, cg, w, static_cast<int8_t>(xq.zp), col.data());
          cols = col.data();
        }
        igemm(mg, outPlane, kdim, wg, kdim, cols, outPlane, acc.data(), outPlane);
        if (weightZeroPoints) {
          // sum over k of (col - zp_x) per output position, then -zp_w[k] times it.
          colSum.assign(size_t(outPlane), wrapMul(-int32_t(kdim), xq.zp));
          for (int64_t r = 0; r < kdim; ++r)
            for (int64_t o = 0; o < outPlane; ++o)
              colSum[size_t(o)] += cols[r * outPlane + o];
          for (int64_t j = 0; j < mg; ++j) {
            const int32_t zw = fp.zeroPoints[size_t(g * mg + j)];
            int32_t* a = acc.data() + j * outPlane;
            for (int64_t o = 0; o < outPlane; ++o)
              a[o] = wrapAdd(a[o], wrapMul(-zw, colSum[size_t(o)]));
          }
        }
      }
      for (int64_t j = 0; j < mg; ++j) {
        const int64_t k = g * mg + j;
        // Depthwise sums already subtract zp_x: only the bias is added.
        const int32_t add = depthwise ? (bp ? bp[k] : 0) : fold[size_t(k)];
        const quant::Multiplier mk = rq.of(k);
        const int32_t* a = acc.data() + j * outPlane;
        int8_t* dst = yp + (b * m + k) * outPlane;
        for (int64_t o = 0; o < outPlane; ++o)
          dst[o] = quant::requantize(wrapAdd(a[o], add), mk, yq.zp, bd.lo, bd.hi);
      }
    }
}

} // namespace

void registerInt8ConvKernels() {
  registerQuantizedKernel(NodeKind::Conv, convKernel);
}

} // namespace ember
