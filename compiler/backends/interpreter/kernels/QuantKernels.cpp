// Interpreter kernels of QuantizeLinear and DequantizeLinear (ONNX semantics):
//   q = saturate_int8(round_half_to_even(x / scale) + zero_point)
//   x = (q - zero_point) * scale
// per tensor or per axis (QuantParams::axis). Parameters come from the node's
// attributes when present (see compiler/graph/ops/QuantOps.cpp), else from the types.
#include "Broadcast.h"

#include "ember/graph/AttrViews.h"
#include "ember/interpreter/Kernels.h"

#include <cmath>

namespace ember {

namespace {

using namespace kernels;

/// Parameters read from attributes, falling back to `fallback`.
QuantParams paramsOf(const Node& n, const Shape& dims, const QuantParams& fallback) {
  const QuantAttrs a = quantOf(n.attrs());
  QuantParams q = fallback;
  if (a.perTensor()) {
    q = a.params();
  } else if (a.perAxis()) {
    q = a.params();
    q.axis = static_cast<int>(a.axis < 0 ? a.axis + int64_t(dims.size()) : a.axis);
  }
  if (q.scales.empty())
    throw Error("no quantization parameters");
  if (q.zeroPoints.empty())
    q.zeroPoints.assign(q.scales.size(), 0);
  return q;
}

/// Calls f(i, channel) for every element, channel being the index along the
/// quantization axis (0 when per tensor).
template <typename F> void forEachChannel(const Shape& dims, const QuantParams& q, F f) {
  const int64_t total = numElements(dims);
  if (q.scales.size() == 1 && q.axis < 0) {
    for (int64_t i = 0; i < total; ++i)
      f(i, size_t(0));
    return;
  }
  int64_t outer, extent, inner;
  splitAround(dims, size_t(q.axis), &outer, &extent, &inner);
  for (int64_t i = 0; i < total; ++i)
    f(i, size_t((i / inner) % extent));
}

void quantizeKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const QuantParams q = paramsOf(n, in[0]->dims(), out[0].type().quant);
  const float* x = in[0]->data<float>();
  int8_t* y = out[0].data<int8_t>();
  forEachChannel(in[0]->dims(), q, [&](int64_t i, size_t c) {
    const double r = double(std::nearbyint(x[i] / q.scales[c])) + q.zeroPoints[c];
    y[i] = static_cast<int8_t>(std::min(127.0, std::max(-128.0, r)));
  });
}

void dequantizeKernel(const Node& n, const std::vector<const Tensor*>& in,
                      std::vector<Tensor>& out) {
  const QuantParams q = paramsOf(n, in[0]->dims(), in[0]->type().quant);
  float* y = out[0].data<float>();
  dispatchKind<kI8 | kI32>(in[0]->kind(), "DequantizeLinear", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in[0]->data<T>();
    forEachChannel(in[0]->dims(), q, [&](int64_t i, size_t c) {
      y[i] = static_cast<float>(int64_t(x[i]) - q.zeroPoints[c]) * q.scales[c];
    });
  });
}

} // namespace

void registerQuantKernels() {
  registerKernel(NodeKind::QuantizeLinear, quantizeKernel);
  registerKernel(NodeKind::DequantizeLinear, dequantizeKernel);
}

} // namespace ember
