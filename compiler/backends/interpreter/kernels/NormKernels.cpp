// Interpreter kernels of the normalisations (float32): BatchNormalization (inference),
// InstanceNormalization, LayerNormalization (with its Mean and InvStdDev results) and
// LRN. Statistics are accumulated in double.
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/interpreter/Kernels.h"

#include <cmath>
#include <vector>

namespace ember {

namespace {

void batchNormKernel(const Node& n, const std::vector<const Tensor*>& in,
                     std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const float* scale = in[1]->data<float>();
  const float* bias = in[2]->data<float>();
  const float* mean = in[3]->data<float>();
  const float* var = in[4]->data<float>();
  const double eps = normOf(n.attrs()).epsilon;
  const int64_t batch = x.dims()[0], c = x.dims()[1];
  const int64_t plane = batch * c != 0 ? x.size() / (batch * c) : 0;
  const float* xp = x.data<float>();
  float* yp = out[0].data<float>();
  for (int64_t ch = 0; ch < c; ++ch) {
    const float mul = static_cast<float>(scale[ch] / std::sqrt(double(var[ch]) + eps));
    const float add = bias[ch] - mean[ch] * mul;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t base = (b * c + ch) * plane;
      for (int64_t i = 0; i < plane; ++i)
        yp[base + i] = xp[base + i] * mul + add;
    }
  }
}

void instanceNormKernel(const Node& n, const std::vector<const Tensor*>& in,
                        std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const float* scale = in[1]->data<float>();
  const float* bias = in[2]->data<float>();
  const double eps = normOf(n.attrs()).epsilon;
  const int64_t c = x.dims()[1], planes = x.dims()[0] * c;
  const int64_t plane = planes ? x.size() / planes : 0;
  const float* xp = x.data<float>();
  float* yp = out[0].data<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float* v = xp + p * plane;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < plane; ++i)
      sum += v[i];
    const double mean = sum / double(plane);
    for (int64_t i = 0; i < plane; ++i)
      sq += (v[i] - mean) * (v[i] - mean);
    const double inv = 1.0 / std::sqrt(sq / double(plane) + eps);
    const double mul = scale[p % c] * inv;
    for (int64_t i = 0; i < plane; ++i)
      yp[p * plane + i] = static_cast<float>((v[i] - mean) * mul + bias[p % c]);
  }
}

/// Expands an optional operand that broadcasts to `inner` into `count` values.
std::vector<float> expandInner(const Tensor* t, const Shape& inner, float def) {
  const int64_t count = numElements(inner);
  std::vector<float> v(static_cast<size_t>(count), def);
  if (!t)
    return v;
  const float* src = t->data<float>();
  const Shape& s = t->dims();
  const size_t lead = inner.size() - s.size();
  for (int64_t i = 0; i < count; ++i) {
    int64_t rem = i, idx = 0, stride = 1;
    for (size_t d = inner.size(); d-- > 0;) {
      const int64_t coord = rem % inner[d];
      rem /= inner[d];
      if (d >= lead) {
        const int64_t ext = s[d - lead];
        idx += (ext == 1 ? 0 : coord) * stride;
        stride *= ext;
      }
    }
    v[static_cast<size_t>(i)] = src[idx];
  }
  return v;
}

/// The shape the scale and bias of a LayerNormalization (the dimensions from its axis
/// on) or a ChannelLayerNormalization ([C]) broadcast to.
Shape normalisedShape(const Node& n, const Shape& x) {
  if (n.kind() == NodeKind::ChannelLayerNormalization)
    return Shape{x[1]};
  const int64_t axis = normalizeAxis(normOf(n.attrs()).axis, x.size());
  return Shape(x.begin() + axis, x.end());
}

/// LayerNormalization and ChannelLayerNormalization: every line of layerNormLines (`len`
/// elements `inner` apart) normalised in double.
void layerNormKernel(const Node& n, const std::vector<const Tensor*>& in,
                     std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const double eps = normOf(n.attrs()).epsilon;
  const AxisSplit l = layerNormLines(n.kind(), x.dims(), n.attrs());
  const Shape normalised = normalisedShape(n, x.dims());
  const int64_t size = l.len, st = l.inner;
  const std::vector<float> scale = expandInner(in[1], normalised, 1.f);
  const std::vector<float> bias = expandInner(in.size() > 2 ? in[2] : nullptr, normalised, 0.f);
  const float* xp = x.data<float>();
  float* yp = out[0].data<float>();
  float* meanOut = out.size() > 1 ? out[1].data<float>() : nullptr;
  float* invOut = out.size() > 2 ? out[2].data<float>() : nullptr;
  for (int64_t r = 0; r < l.outer * l.inner; ++r) {
    const int64_t base = (r / st) * size * st + r % st;
    const float* v = xp + base;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < size; ++i)
      sum += v[i * st];
    const double mean = sum / double(size);
    for (int64_t i = 0; i < size; ++i)
      sq += (v[i * st] - mean) * (v[i * st] - mean);
    const double inv = 1.0 / std::sqrt(sq / double(size) + eps);
    for (int64_t i = 0; i < size; ++i)
      yp[base + i * st] =
          static_cast<float>((v[i * st] - mean) * inv * scale[size_t(i)] + bias[size_t(i)]);
    if (meanOut)
      meanOut[r] = static_cast<float>(mean);
    if (invOut)
      invOut[r] = static_cast<float>(inv);
  }
}

void lrnKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const Tensor& x = *in[0];
  const LrnAttrs a = lrnOf(n.attrs());
  const double alpha = a.alpha, beta = a.beta;
  const double bias = a.bias;
  const int64_t size = a.size;
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const int64_t batch = x.dims()[0], c = x.dims()[1];
  const int64_t plane = batch * c != 0 ? x.size() / (batch * c) : 0;
  const float* xp = x.data<float>();
  float* yp = out[0].data<float>();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t lo = std::max<int64_t>(0, ch - before), hi = std::min(c - 1, ch + after);
      for (int64_t i = 0; i < plane; ++i) {
        double sq = 0;
        for (int64_t j = lo; j <= hi; ++j) {
          const double v = xp[(b * c + j) * plane + i];
          sq += v * v;
        }
        const int64_t idx = (b * c + ch) * plane + i;
        yp[idx] = static_cast<float>(xp[idx] / std::pow(bias + alpha / double(size) * sq, beta));
      }
    }
}

} // namespace

void registerNormKernels() {
  registerKernel(NodeKind::BatchNormalization, batchNormKernel);
  registerKernel(NodeKind::InstanceNormalization, instanceNormKernel);
  registerKernel(NodeKind::LayerNormalization, layerNormKernel);
  registerKernel(NodeKind::ChannelLayerNormalization, layerNormKernel);
  registerKernel(NodeKind::LRN, lrnKernel);
}

} // namespace ember
