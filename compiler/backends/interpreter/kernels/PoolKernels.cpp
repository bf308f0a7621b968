// Interpreter kernels of the pools (float32, 1-D to 3-D): MaxPool (with dilations),
// AveragePool (count_include_pad counts the padding inside the padded input, as
// PyTorch and ONNX do), GlobalAveragePool and GlobalMaxPool.
#include "ConvWindow.h"
#include "ember/interpreter/Kernels.h"

#include <limits>

namespace ember {

namespace {

/// Calls f(od, oh, ow, id0, ih0, iw0) for each output position with the window's
/// first input coordinates (possibly negative, in the padding).
template <typename F> void forEachWindow(const Window3& w, F&& f) {
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh)
      for (int64_t ow = 0; ow < w.out[2]; ++ow)
        f((od * w.out[1] + oh) * w.out[2] + ow, od * w.s[0] - w.pb[0], oh * w.s[1] - w.pb[1],
          ow * w.s[2] - w.pb[2]);
}

/// Runs `plane(x, y, w)` on every (image, channel) plane of a pool node.
template <typename PlaneFn>
void poolPlanes(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out,
                PlaneFn&& plane) {
  const Tensor& x = *in[0];
  Tensor& y = out[0];
  const Window3 w = makeWindow3(n, x.dims(), y.dims(), nullptr);
  const int64_t planes = x.dims()[0] * x.dims()[1];
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t p = 0; p < planes; ++p)
    plane(xp + p * w.inSize(), yp + p * w.outSize(), w);
}

void maxPoolKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  poolPlanes(n, in, out, [](const float* x, float* y, const Window3& w) {
    forEachWindow(w, [&](int64_t o, int64_t d0, int64_t h0, int64_t w0) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t kd = 0; kd < w.k[0]; ++kd) {
        const int64_t id = d0 + kd * w.d[0];
        if (id < 0 || id >= w.in[0])
          continue;
        for (int64_t kh = 0; kh < w.k[1]; ++kh) {
          const int64_t ih = h0 + kh * w.d[1];
          if (ih < 0 || ih >= w.in[1])
            continue;
          const float* row = x + (id * w.in[1] + ih) * w.in[2];
          for (int64_t kw = 0; kw < w.k[2]; ++kw) {
            const int64_t iw = w0 + kw * w.d[2];
            if (iw >= 0 && iw < w.in[2] && (row[iw] > m || row[iw] != row[iw]))
              m = row[iw];
          }
        }
      }
      y[o] = m;
    });
  });
}

void averagePoolKernel(const Node& n, const std::vector<const Tensor*>& in,
                       std::vector<Tensor>& out) {
  const bool includePad = n.attrs().getInt("count_include_pad", 0) != 0;
  poolPlanes(n, in, out, [includePad](const float* x, float* y, const Window3& w) {
    forEachWindow(w, [&](int64_t o, int64_t d0, int64_t h0, int64_t w0) {
      float sum = 0.f;
      int64_t count = 0, padded = 1;
      for (int dim = 0; dim < 3; ++dim) {
        // Window positions inside the padded input [-pb, in + pe).
        const int64_t start = dim == 0 ? d0 : dim == 1 ? h0 : w0;
        int64_t inside = 0;
        for (int64_t k = 0; k < w.k[dim]; ++k) {
          const int64_t i = start + k * w.d[dim];
          inside += i >= -w.pb[dim] && i < w.in[dim] + w.pe[dim];
        }
        padded *= inside;
      }
      for (int64_t kd = 0; kd < w.k[0]; ++kd) {
        const int64_t id = d0 + kd * w.d[0];
        if (id < 0 || id >= w.in[0])
          continue;
        for (int64_t kh = 0; kh < w.k[1]; ++kh) {
          const int64_t ih = h0 + kh * w.d[1];
          if (ih < 0 || ih >= w.in[1])
            continue;
          const float* row = x + (id * w.in[1] + ih) * w.in[2];
          for (int64_t kw = 0; kw < w.k[2]; ++kw) {
            const int64_t iw = w0 + kw * w.d[2];
            if (iw >= 0 && iw < w.in[2]) {
              sum += row[iw];
              ++count;
            }
          }
        }
      }
      const int64_t divisor = includePad ? padded : count;
      y[o] = divisor > 0 ? sum / static_cast<float>(divisor) : 0.f;
    });
  });
}

template <bool IsMax>
void globalPoolKernel(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const int64_t planes = x.dims()[0] * x.dims()[1];
  const int64_t size = planes ? x.size() / planes : 0;
  const float* xp = x.data<float>();
  float* yp = out[0].data<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float* v = xp + p * size;
    if (IsMax) {
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < size; ++i)
        if (v[i] > m || v[i] != v[i])
          m = v[i];
      yp[p] = m;
    } else {
      double s = 0;
      for (int64_t i = 0; i < size; ++i)
        s += v[i];
      yp[p] = static_cast<float>(s / static_cast<double>(size));
    }
  }
}

} // namespace

void registerPoolKernels() {
  registerKernel(NodeKind::MaxPool, maxPoolKernel);
  registerKernel(NodeKind::AveragePool, averagePoolKernel);
  registerKernel(NodeKind::GlobalMaxPool, globalPoolKernel<true>);
  registerKernel(NodeKind::GlobalAveragePool, globalPoolKernel<false>);
}

} // namespace ember
