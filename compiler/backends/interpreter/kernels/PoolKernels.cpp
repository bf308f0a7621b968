// Interpreter kernels of the pools (float32, 1-D to 3-D): MaxPool (with dilations),
// AveragePool (count_include_pad counts the padding inside the padded input, as
// PyTorch and ONNX do), GlobalAveragePool and GlobalMaxPool.
#include "ConvWindow.h"
#include "ember/graph/AttrViews.h"
#include "ember/interpreter/Kernels.h"

#include <limits>

namespace ember {

namespace {

/// The kernel taps [lo, hi) of one dimension whose input position start + k * dil lies
/// inside [0, in).
inline void tapRange(int64_t start, int64_t in, int64_t k, int64_t dil, int64_t* lo, int64_t* hi) {
  *lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  *hi = start >= in ? 0 : std::min(k, (in - start + dil - 1) / dil);
  if (*lo > *hi)
    *lo = *hi;
}

/// Calls f(out, value) once per input element inside the window of every output
/// position, after begin(out) and before end(out, taps inside the padded input); the
/// window bounds are computed once per output, so the inner loop has no tests.
template <typename Begin, typename Acc, typename End>
void forEachWindow(const Window3& w, const float* x, Begin&& begin, Acc&& acc, End&& end) {
  int64_t o = 0;
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh)
      for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
        const int64_t st[3] = {od * w.s[0] - w.pb[0], oh * w.s[1] - w.pb[1], ow * w.s[2] - w.pb[2]};
        int64_t lo[3], hi[3], padded = 1;
        for (int dim = 0; dim < 3; ++dim) {
          tapRange(st[dim], w.in[dim], w.k[dim], w.d[dim], &lo[dim], &hi[dim]);
          // Taps inside the padded input [-pb, in + pe), for count_include_pad.
          int64_t plo, phi;
          tapRange(st[dim] + w.pb[dim], w.in[dim] + w.pb[dim] + w.pe[dim], w.k[dim], w.d[dim], &plo,
                   &phi);
          padded *= phi - plo;
        }
        begin(o);
        for (int64_t kd = lo[0]; kd < hi[0]; ++kd) {
          const int64_t id = st[0] + kd * w.d[0];
          for (int64_t kh = lo[1]; kh < hi[1]; ++kh) {
            const float* row = x + (id * w.in[1] + st[1] + kh * w.d[1]) * w.in[2] + st[2];
            for (int64_t kw = lo[2]; kw < hi[2]; ++kw)
              acc(o, row[kw * w.d[2]]);
          }
        }
        end(o, padded, (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
      }
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
    float m = 0.f;
    forEachWindow(
        w, x, [&](int64_t) { m = -std::numeric_limits<float>::infinity(); },
        [&](int64_t, float v) {
          if (v > m || v != v)
            m = m != m ? m : v;
        },
        [&](int64_t o, int64_t, int64_t) { y[o] = m; });
  });
}

void averagePoolKernel(const Node& n, const std::vector<const Tensor*>& in,
                       std::vector<Tensor>& out) {
  const bool includePad = windowOf(n.attrs(), in[0]->dims().size() - 2).countIncludePad;
  poolPlanes(n, in, out, [includePad](const float* x, float* y, const Window3& w) {
    float sum = 0.f;
    forEachWindow(
        w, x, [&](int64_t) { sum = 0.f; }, [&](int64_t, float v) { sum += v; },
        [&](int64_t o, int64_t padded, int64_t count) {
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
