// Interpreter kernels of Softmax, LogSoftmax and Hardmax along one axis (opset-13
// semantics). The tensor is seen as outer x axis x inner; each (outer, inner) line is
// processed with the maximum subtracted first, for numerical stability.
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/interpreter/Kernels.h"

#include <cmath>
#include <vector>

namespace ember {

namespace {

enum class Mode { Softmax, LogSoftmax, Hardmax };

/// One line of `len` values at stride `stride`.
template <Mode M> void line(const float* x, float* y, int64_t len, int64_t stride) {
  float mx = x[0];
  int64_t arg = 0;
  for (int64_t i = 1; i < len; ++i)
    if (x[i * stride] > mx) {
      mx = x[i * stride];
      arg = i;
    }
  if (M == Mode::Hardmax) {
    for (int64_t i = 0; i < len; ++i)
      y[i * stride] = i == arg ? 1.f : 0.f;
    return;
  }
  double sum = 0;
  for (int64_t i = 0; i < len; ++i)
    sum += std::exp(double(x[i * stride]) - mx);
  if (M == Mode::LogSoftmax) {
    const double logSum = std::log(sum);
    for (int64_t i = 0; i < len; ++i)
      y[i * stride] = static_cast<float>(double(x[i * stride]) - mx - logSum);
  } else {
    const double inv = 1.0 / sum;
    for (int64_t i = 0; i < len; ++i)
      y[i * stride] = static_cast<float>(std::exp(double(x[i * stride]) - mx) * inv);
  }
}

template <Mode M>
void softmaxKernel(const Node& n, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) {
  const AxisSplit s = splitAtAxis(in[0]->dims(), softmaxOf(n.attrs()).axis);
  if (s.len == 0)
    return;
  const float* xp = in[0]->data<float>();
  float* yp = out[0].data<float>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t base = o * s.len * s.inner + i;
      line<M>(xp + base, yp + base, s.len, s.inner);
    }
}

} // namespace

void registerSoftmaxKernels() {
  registerKernel(NodeKind::Softmax, softmaxKernel<Mode::Softmax>);
  registerKernel(NodeKind::LogSoftmax, softmaxKernel<Mode::LogSoftmax>);
  registerKernel(NodeKind::Hardmax, softmaxKernel<Mode::Hardmax>);
}

} // namespace ember
