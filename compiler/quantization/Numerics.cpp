// Compile-time parameter choice of docs/numerics.md section 4.8 and the LUT tables of
// section 4.6. The run-time primitives are inline in ember/quantization/Numerics.h.
#include "ember/quantization/Numerics.h"
#include "ember/graph/AttrViews.h"

#include <map>

namespace ember {
namespace quant {

QuantParams chooseActivationParams(float min, float max) {
  if (!std::isfinite(min) || !std::isfinite(max) || min > max)
    throw Error("activation range [" + std::to_string(min) + ", " + std::to_string(max) +
                "] is not a finite range");
  const double lo = std::min(double(min), 0.0), hi = std::max(double(max), 0.0);
  const float s = hi - lo > 0 ? static_cast<float>((hi - lo) / 255.0) : 1.f;
  const double z = std::nearbyint(-128.0 - lo / double(s));
  QuantParams q;
  q.scales = {s > 0 ? s : std::numeric_limits<float>::min()};
  q.zeroPoints = {static_cast<int32_t>(std::min(127.0, std::max(-128.0, z)))};
  return q;
}

Tensor quantizeWeights(const Tensor& w, int axis) {
  const Shape& d = w.dims();
  if (axis < 0 || size_t(axis) >= d.size())
    throw Error("weight quantization: axis " + std::to_string(axis) + " is outside " +
                shapeToString(d));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i)
    outer *= d[size_t(i)];
  for (size_t i = size_t(axis) + 1; i < d.size(); ++i)
    inner *= d[i];
  const int64_t k = d[size_t(axis)];
  const float* x = w.data<float>();
  std::vector<float> absMax(size_t(k), 0.f);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < k; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        const float v = x[(o * k + c) * inner + i];
        if (!std::isfinite(v))
          throw Error("weight quantization: element " + std::to_string((o * k + c) * inner + i) +
                      " is not finite");
        absMax[size_t(c)] = std::max(absMax[size_t(c)], std::fabs(v));
      }
  QuantParams q;
  q.axis = axis;
  for (float m : absMax) {
    const float s = m > 0 ? static_cast<float>(double(m) / 127.0) : 1.f;
    q.scales.push_back(s > 0 ? s : std::numeric_limits<float>::min());
  }
  q.zeroPoints.assign(size_t(k), 0);
  Tensor out(Type(ElemKind::Int8, d, q));
  int8_t* y = out.data<int8_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < k; ++c) {
      const double s = q.scales[size_t(c)];
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t at = (o * k + c) * inner + i;
        const double r = std::nearbyint(double(x[at]) / s);
        y[at] = static_cast<int8_t>(std::min(127.0, std::max(-127.0, r)));
      }
    }
  return out;
}

Tensor quantizeBias(const Tensor& bias, float inputScale, const std::vector<float>& weightScales) {
  if (bias.dims().size() != 1)
    throw Error("bias quantization: bias has shape " + shapeToString(bias.dims()) +
                ", expected one dimension");
  const int64_t k = bias.dims()[0];
  if (weightScales.size() != 1 && int64_t(weightScales.size()) != k)
    throw Error("bias quantization: " + std::to_string(weightScales.size()) +
                " weight scales for a bias of " + std::to_string(k) + " values");
  QuantParams q;
  q.axis = 0;
  for (int64_t c = 0; c < k; ++c) {
    const float sw = weightScales.size() == 1 ? weightScales[0] : weightScales[size_t(c)];
    q.scales.push_back(static_cast<float>(double(inputScale) * double(sw)));
  }
  q.zeroPoints.assign(size_t(k), 0);
  Tensor out(Type(ElemKind::Int32, {k}, q));
  const float* b = bias.data<float>();
  int32_t* y = out.data<int32_t>();
  for (int64_t c = 0; c < k; ++c) {
    const float sw = weightScales.size() == 1 ? weightScales[0] : weightScales[size_t(c)];
    const double r = std::nearbyint(double(b[c]) / (double(inputScale) * double(sw)));
    if (std::isnan(r))
      throw Error("bias quantization: element " + std::to_string(c) + " is not a number");
    y[c] = static_cast<int32_t>(std::min(2147483647.0, std::max(-2147483648.0, r)));
  }
  return out;
}

Tensor quantizeTensor(const Tensor& x, const QuantParams& q) {
  if (q.scales.size() != 1 || q.zeroPoints.size() != 1)
    throw Error("quantizeTensor: per-tensor parameters expected");
  Tensor out(Type(ElemKind::Int8, x.dims(), q));
  const double s = q.scales[0];
  const float* p = x.data<float>();
  int8_t* y = out.data<int8_t>();
  for (int64_t i = 0; i < x.size(); ++i) {
    const double r = std::nearbyint(double(p[i]) / s) + q.zeroPoints[0];
    y[i] = static_cast<int8_t>(std::min(127.0, std::max(-128.0, r)));
  }
  return out;
}

std::vector<int8_t> buildLut(const std::function<double(double)>& f, const QuantParams& x,
                             const QuantParams& y) {
  if (x.scales.size() != 1 || y.scales.size() != 1 || x.zeroPoints.size() != 1 ||
      y.zeroPoints.size() != 1)
    throw Error("LUT: input and output need per-tensor quantization parameters");
  const double sx = x.scales[0], sy = y.scales[0];
  std::vector<int8_t> table(256);
  for (int i = 0; i < 256; ++i) {
    const double v = f(sx * double(i - 128 - x.zeroPoints[0]));
    const double r = std::isnan(v) ? 0.0 : std::nearbyint(v / sy);
    const double q = r + double(y.zeroPoints[0]);
    table[size_t(i)] = static_cast<int8_t>(std::min(127.0, std::max(-128.0, q)));
  }
  return table;
}

namespace {

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

using LutMaker = std::function<std::function<double(double)>(const UnaryAttrs&)>;

/// One entry per kind a Lut can express: the real function, with its attributes (ONNX
/// defaults when absent).
const std::map<NodeKind, LutMaker>& lutTable() {
  using K = NodeKind;
  static const std::map<NodeKind, LutMaker> table = {
      {K::Sigmoid, [](const UnaryAttrs&) { return sigmoid; }},
      {K::Tanh, [](const UnaryAttrs&) { return [](double v) { return std::tanh(v); }; }},
      {K::Exp, [](const UnaryAttrs&) { return [](double v) { return std::exp(v); }; }},
      {K::Erf, [](const UnaryAttrs&) { return [](double v) { return std::erf(v); }; }},
      {K::Neg, [](const UnaryAttrs&) { return [](double v) { return -v; }; }},
      {K::Abs, [](const UnaryAttrs&) { return [](double v) { return std::fabs(v); }; }},
      {K::Softplus,
       [](const UnaryAttrs&) { return [](double v) { return std::log1p(std::exp(v)); }; }},
      {K::Softsign,
       [](const UnaryAttrs&) { return [](double v) { return v / (1 + std::fabs(v)); }; }},
      {K::Silu, [](const UnaryAttrs&) { return [](double v) { return v * sigmoid(v); }; }},
      {K::Gelu,
       [](const UnaryAttrs&) {
         return [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
       }},
      {K::HardSigmoid,
       [](const UnaryAttrs& u) {
         const double alpha = u.alpha, beta = u.beta;
         return [=](double v) { return std::max(0.0, std::min(1.0, alpha * v + beta)); };
       }},
      {K::HardSwish,
       [](const UnaryAttrs&) {
         return [](double v) { return v * std::max(0.0, std::min(1.0, v / 6 + 0.5)); };
       }},
      {K::LeakyRelu,
       [](const UnaryAttrs& u) {
         const double alpha = u.alpha;
         return [=](double v) { return v < 0 ? alpha * v : v; };
       }},
      {K::Elu,
       [](const UnaryAttrs& u) {
         const double alpha = u.alpha;
         return [=](double v) { return v < 0 ? alpha * std::expm1(v) : v; };
       }},
      {K::Selu,
       [](const UnaryAttrs& u) {
         const double alpha = u.alpha;
         const double gamma = u.gamma;
         return [=](double v) { return gamma * (v <= 0 ? alpha * std::expm1(v) : v); };
       }},
      {K::ThresholdedRelu,
       [](const UnaryAttrs& u) {
         const double alpha = u.alpha;
         return [=](double v) { return v > alpha ? v : 0.0; };
       }},
      {K::Celu,
       [](const UnaryAttrs& u) {
         const double alpha = u.alpha;
         return [=](double v) {
           return std::max(0.0, v) + std::min(0.0, alpha * std::expm1(v / alpha));
         };
       }},
  };
  return table;
}

} // namespace

std::function<double(double)> lutFunctionOf(const Node& n) {
  const auto& table = lutTable();
  auto it = table.find(n.kind());
  if (it == table.end())
    return {};
  return it->second(unaryOf(n));
}

bool hasLutForm(NodeKind k) {
  return lutTable().count(k) != 0;
}

} // namespace quant
} // namespace ember
