// Interpreter kernels of Conv and ConvTranspose (float32, 1-D to 3-D).
//
// Conv: per image and group, im2col then the blocked GEMM core (1x1 filters with unit
// strides and no padding use the input directly); depthwise convolution (one input
// channel per group) is a direct loop, as it is memory bound.
// ConvTranspose: per image and group, GEMM of the transposed filter with the input
// into columns, then col2im scatter-adds them into the output.
#include "ConvWindow.h"
#include "GemmCore.h"
#include "ember/graph/AttrViews.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/interpreter/Kernels.h"

#include <cstring>
#include <vector>

namespace ember {

namespace {

/// Fills each channel plane of `out` (channels x plane) with its bias (or zeros).
void fillBias(float* out, int64_t channels, int64_t plane, const Tensor* bias) {
  const float* b = bias ? bias->data<float>() : nullptr;
  for (int64_t c = 0; c < channels; ++c)
    std::fill(out + c * plane, out + (c + 1) * plane, b ? b[c] : 0.f);
}

/// Direct depthwise convolution of one input plane into one output plane (which
/// already holds the bias).
void depthwisePlane(const float* x, const float* filt, const Window3& w, float* y) {
  forEachTapRow(w, [&](int64_t tap, int64_t so, int64_t dOff, int64_t lo, int64_t hi) {
    const float f = filt[tap];
    const float* src = x + so;
    float* dst = y + dOff;
    if (w.s[2] == 1)
      for (int64_t ow = lo; ow < hi; ++ow)
        dst[ow] += f * src[ow];
    else
      for (int64_t ow = lo; ow < hi; ++ow)
        dst[ow] += f * src[ow * w.s[2]];
  });
}

Shape spatialOf(const Shape& s) {
  return Shape(s.begin() + 2, s.end());
}

void convKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor &x = *in[0], &filt = *in[1];
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  Tensor& y = out[0];
  const Shape ks = spatialOf(filt.dims());
  const Window3 w = makeWindow3(n, x.dims(), y.dims(), &ks);
  const int64_t batch = x.dims()[0], c = x.dims()[1], m = y.dims()[1];
  const int64_t group = groupOf(n.attrs()), cg = c / group, mg = m / group;
  const int64_t kdim = cg * w.kSize(), inPlane = w.inSize(), outPlane = w.outSize();
  const float* xp = x.data<float>();
  const float* wp = filt.data<float>();
  float* yp = y.data<float>();

  const bool depthwise = cg == 1 && group > 1;
  bool direct1x1 = w.kSize() == 1;
  for (int i = 0; i < 3; ++i)
    direct1x1 = direct1x1 && w.s[i] == 1 && w.pb[i] == 0 && w.pe[i] == 0;
  // The column buffer is kept per thread and only grows: no allocation (and no page
  // faults) per node once the largest layer has run.
  thread_local std::vector<float> col;
  if (!depthwise && !direct1x1 && col.size() < static_cast<size_t>(kdim * outPlane))
    col.resize(static_cast<size_t>(kdim * outPlane));

  for (int64_t b = 0; b < batch; ++b) {
    float* yb = yp + b * m * outPlane;
    fillBias(yb, m, outPlane, bias);
    for (int64_t g = 0; g < group; ++g) {
      const float* xg = xp + (b * c + g * cg) * inPlane;
      float* yg = yb + g * mg * outPlane;
      const float* wg = wp + g * mg * kdim;
      if (depthwise) {
        for (int64_t j = 0; j < mg; ++j)
          depthwisePlane(xg, wg + j * w.kSize(), w, yg + j * outPlane);
        continue;
      }
      const float* cols = xg;
      if (!direct1x1) {
        im2col(xg, cg, w, 0.0f, col.data());
        cols = col.data();
      }
      sgemm(mg, outPlane, kdim, 1.f, {wg, kdim, 1}, {cols, outPlane, 1}, 1.f, yg, outPlane);
    }
  }
  applyFusedActivation(n, y);
}

/// Scatter-adds columns (rows: channel, kd, kh, kw; columns: input positions) into the
/// output planes. Here w.in is the ConvTranspose input, w.out its output.
void col2im(const float* col, int64_t channels, const Window3& w, float* y) {
  const int64_t inPlane = w.inSize();
  for (int64_t c = 0; c < channels; ++c) {
    float* yc = y + c * w.outSize();
    for (int64_t kd = 0; kd < w.k[0]; ++kd)
      for (int64_t kh = 0; kh < w.k[1]; ++kh)
        for (int64_t kw = 0; kw < w.k[2]; ++kw) {
          for (int64_t id = 0; id < w.in[0]; ++id) {
            const int64_t od = id * w.s[0] + kd * w.d[0] - w.pb[0];
            if (od < 0 || od >= w.out[0])
              continue;
            for (int64_t ih = 0; ih < w.in[1]; ++ih) {
              const int64_t oh = ih * w.s[1] + kh * w.d[1] - w.pb[1];
              if (oh < 0 || oh >= w.out[1])
                continue;
              const float* src = col + (id * w.in[1] + ih) * w.in[2];
              float* dst = yc + (od * w.out[1] + oh) * w.out[2];
              for (int64_t iw = 0; iw < w.in[2]; ++iw) {
                const int64_t ow = iw * w.s[2] + kw * w.d[2] - w.pb[2];
                if (ow >= 0 && ow < w.out[2])
                  dst[ow] += src[iw];
              }
            }
          }
          col += inPlane;
        }
  }
}

void convTransposeKernel(const Node& n, const std::vector<const Tensor*>& in,
                         std::vector<Tensor>& out) {
  const Tensor &x = *in[0], &filt = *in[1];
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  Tensor& y = out[0];
  const Shape ks = spatialOf(filt.dims());
  const Window3 w = makeWindow3(n, x.dims(), y.dims(), &ks);
  const int64_t batch = x.dims()[0], c = x.dims()[1], m = y.dims()[1];
  const int64_t group = groupOf(n.attrs()), cg = c / group, mg = m / group;
  const int64_t rows = mg * w.kSize(), inPlane = w.inSize(), outPlane = w.outSize();
  const float* xp = x.data<float>();
  const float* wp = filt.data<float>();
  float* yp = y.data<float>();
  thread_local std::vector<float> col;
  if (col.size() < static_cast<size_t>(rows * inPlane))
    col.resize(static_cast<size_t>(rows * inPlane));
  for (int64_t b = 0; b < batch; ++b) {
    float* yb = yp + b * m * outPlane;
    fillBias(yb, m, outPlane, bias);
    for (int64_t g = 0; g < group; ++g) {
      const float* xg = xp + (b * c + g * cg) * inPlane;
      const float* wg = wp + g * cg * rows; // [cg, mg * k]: used transposed
      sgemm(rows, inPlane, cg, 1.f, {wg, 1, rows}, {xg, inPlane, 1}, 0.f, col.data(), inPlane);
      col2im(col.data(), mg, w, yb + g * mg * outPlane);
    }
  }
}

} // namespace

void registerConvKernels() {
  registerKernel(NodeKind::Conv, convKernel);
  registerKernel(NodeKind::ConvTranspose, convTransposeKernel);
}

} // namespace ember
