// The int8 pooling kernels, 1-D to 3-D (docs/numerics.md 4.4, 4.5):
//   MaxPool, GlobalMaxPool: the maximum code (padding -128, dilations honoured); the
//     result keeps the input's parameters.
//   AveragePool: acc = sum over the counted window of (x - zp_x), n = the window's count
//     (count_include_pad = 1: taps inside the padded input, padding holding zp_x; 0: taps
//     inside the input), y = requantize(acc; s_x / (s_y * n), zp_y).
//   GlobalAveragePool: the same over every spatial position; ReduceMean over its axes
//     (n = the elements reduced into one output).
#include "Broadcast.h"
#include "ConvWindow.h"
#include "Int8Util.h"

#include "ember/graph/AttrViews.h"
#include "ember/interpreter/Kernels.h"

#include <map>

namespace ember {

namespace {

using namespace kernels;

/// The taps [lo, hi) of one dimension whose position start + t * dil lies in [0, in).
inline void tapRange(int64_t start, int64_t in, int64_t k, int64_t dil, int64_t* lo, int64_t* hi) {
  *lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
  *hi = start >= in ? 0 : std::min(k, (in - start + dil - 1) / dil);
  if (*lo > *hi)
    *lo = *hi;
}

/// Calls f(outIndex, acc(visit), paddedCount, inputCount) per output position of one
/// plane, where visit(v) is called for each input code inside the window.
template <typename F> void forEachWindow(const Window3& w, const int8_t* x, F&& f) {
  int64_t o = 0;
  for (int64_t od = 0; od < w.out[0]; ++od)
    for (int64_t oh = 0; oh < w.out[1]; ++oh)
      for (int64_t ow = 0; ow < w.out[2]; ++ow, ++o) {
        const int64_t st[3] = {od * w.s[0] - w.pb[0], oh * w.s[1] - w.pb[1], ow * w.s[2] - w.pb[2]};
        int64_t lo[3], hi[3], padded = 1;
        for (int d = 0; d < 3; ++d) {
          tapRange(st[d], w.in[d], w.k[d], w.d[d], &lo[d], &hi[d]);
          int64_t plo, phi;
          tapRange(st[d] + w.pb[d], w.in[d] + w.pb[d] + w.pe[d], w.k[d], w.d[d], &plo, &phi);
          padded *= phi - plo;
        }
        auto visit = [&](auto&& use) {
          for (int64_t kd = lo[0]; kd < hi[0]; ++kd)
            for (int64_t kh = lo[1]; kh < hi[1]; ++kh) {
              const int8_t* row =
                  x + ((st[0] + kd * w.d[0]) * w.in[1] + st[1] + kh * w.d[1]) * w.in[2] + st[2];
              for (int64_t kw = lo[2]; kw < hi[2]; ++kw)
                use(row[kw * w.d[2]]);
            }
        };
        f(o, visit, padded, (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
      }
}

void maxPoolKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  requireSameParams(in[0]->type(), out[0].type(), "MaxPool");
  const Window3 w = makeWindow3(n, in[0]->dims(), out[0].dims(), nullptr);
  const int64_t planes = in[0]->dims()[0] * in[0]->dims()[1];
  for (int64_t p = 0; p < planes; ++p) {
    int8_t* y = out[0].data<int8_t>() + p * w.outSize();
    forEachWindow(w, in[0]->data<int8_t>() + p * w.inSize(),
                  [&](int64_t o, auto&& visit, int64_t, int64_t) {
                    int32_t m = -128;
                    visit([&](int8_t v) { m = std::max<int32_t>(m, v); });
                    y[o] = static_cast<int8_t>(m);
                  });
  }
}

/// Multipliers s_x / (s_y * count), one per distinct count.
class AverageMultipliers {
public:
  AverageMultipliers(float sx, float sy) : sx_(sx), sy_(sy) {}
  quant::Multiplier of(int64_t count) {
    auto it = cache_.find(count);
    if (it == cache_.end())
      it = cache_.emplace(count, quant::averageMultiplier(sx_, sy_, count)).first;
    return it->second;
  }

private:
  float sx_, sy_;
  std::map<int64_t, quant::Multiplier> cache_;
};

void averagePoolKernel(const Node& n, const std::vector<const Tensor*>& in,
                       std::vector<Tensor>& out) {
  const TensorQ xq = perTensor(in[0]->type(), "input"), yq = perTensor(out[0].type(), "result");
  const bool includePad = windowOf(n.attrs(), in[0]->dims().size() - 2).countIncludePad;
  const Window3 w = makeWindow3(n, in[0]->dims(), out[0].dims(), nullptr);
  const int64_t planes = in[0]->dims()[0] * in[0]->dims()[1];
  AverageMultipliers mult(xq.scale, yq.scale);
  for (int64_t p = 0; p < planes; ++p) {
    int8_t* y = out[0].data<int8_t>() + p * w.outSize();
    forEachWindow(w, in[0]->data<int8_t>() + p * w.inSize(),
                  [&](int64_t o, auto&& visit, int64_t padded, int64_t inside) {
                    int32_t acc = 0;
                    visit([&](int8_t v) { acc += v - xq.zp; });
                    const int64_t count = includePad ? padded : inside;
                    y[o] = count > 0 ? quant::requantize(acc, mult.of(count), yq.zp, -128, 127)
                                     : static_cast<int8_t>(yq.zp);
                  });
  }
}

template <bool IsMax>
void globalPoolKernel(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const int64_t planes = x.dims()[0] * x.dims()[1];
  const int64_t size = planes ? x.size() / planes : 0;
  const int8_t* xp = x.data<int8_t>();
  int8_t* yp = out[0].data<int8_t>();
  if (IsMax) {
    requireSameParams(x.type(), out[0].type(), "GlobalMaxPool");
    for (int64_t p = 0; p < planes; ++p) {
      int32_t m = -128;
      for (int64_t i = 0; i < size; ++i)
        m = std::max<int32_t>(m, xp[p * size + i]);
      yp[p] = static_cast<int8_t>(m);
    }
    return;
  }
  const TensorQ xq = perTensor(x.type(), "input"), yq = perTensor(out[0].type(), "result");
  const quant::Multiplier m = quant::averageMultiplier(xq.scale, yq.scale, size);
  for (int64_t p = 0; p < planes; ++p) {
    int32_t acc = 0;
    for (int64_t i = 0; i < size; ++i)
      acc += xp[p * size + i] - xq.zp;
    yp[p] = quant::requantize(acc, m, yq.zp, -128, 127);
  }
}

/// ReduceMean of int8 codes (section 4.5): acc = sum over the reduced elements of
/// (x - zp_x), y = requantize(acc; s_x / (s_y * n), zp_y), n the elements per output.
void reduceMeanKernel(const Node& n, const std::vector<const Tensor*>& in,
                      std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const TensorQ xq = perTensor(x.type(), "input"), yq = perTensor(out[0].type(), "result");
  const Shape kept = reducedKeptShape(n.attrs(), x.dims());
  const int64_t outs = out[0].size(), count = outs ? x.size() / outs : 0;
  if (count == 0)
    throw Error("an int8 ReduceMean needs at least one element per output");
  std::vector<int64_t> acc(static_cast<size_t>(outs), 0); // exact; wrapped to int32 below
  const int8_t* xp = x.data<int8_t>();
  forEachBroadcast<1>(x.dims(), {&kept}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    acc[size_t(o[0])] += xp[i] - xq.zp;
  });
  const quant::Multiplier m = quant::averageMultiplier(xq.scale, yq.scale, count);
  for (int64_t o = 0; o < outs; ++o)
    out[0].data<int8_t>()[o] = quant::requantize(
        static_cast<int32_t>(static_cast<uint32_t>(acc[size_t(o)])), m, yq.zp, -128, 127);
}

} // namespace

void registerInt8PoolKernels() {
  registerQuantizedKernel(NodeKind::ReduceMean, reduceMeanKernel);
  registerQuantizedKernel(NodeKind::MaxPool, maxPoolKernel);
  registerQuantizedKernel(NodeKind::AveragePool, averagePoolKernel);
  registerQuantizedKernel(NodeKind::GlobalMaxPool, globalPoolKernel<true>);
  registerQuantizedKernel(NodeKind::GlobalAveragePool, globalPoolKernel<false>);
}

} // namespace ember
