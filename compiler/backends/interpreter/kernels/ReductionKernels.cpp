// Interpreter kernels of the reduction node kinds. Every Reduce* is a row of a table
// (initial value, accumulate, finish); one loop walks the input and accumulates into
// the output element it maps to. Accumulation is in double (exact for the integer
// ranges shape arithmetic uses), the result is converted to the input's kind.
#include "Broadcast.h"

#include "ember/graph/AttrViews.h"
#include "ember/interpreter/Kernels.h"

#include <cmath>
#include <limits>

namespace ember {

namespace {

using namespace kernels;
using Ins = std::vector<const Tensor*>;
using Outs = std::vector<Tensor>;

struct Reducer {
  NodeKind kind;
  double init;
  double (*acc)(double a, double x);
  double (*finish)(double a, int64_t count);
};

constexpr double kInf = std::numeric_limits<double>::infinity();

double ident(double a, int64_t) {
  return a;
}
double sum(double a, double x) {
  return a + x;
}

const Reducer kReducers[] = {
    {NodeKind::ReduceSum, 0, sum, ident},
    {NodeKind::ReduceMean, 0, sum, [](double a, int64_t n) { return a / double(n); }},
    {NodeKind::ReduceMax, -kInf, [](double a, double x) { return x > a || std::isnan(x) ? x : a; },
     ident},
    {NodeKind::ReduceMin, kInf, [](double a, double x) { return x < a || std::isnan(x) ? x : a; },
     ident},
    {NodeKind::ReduceProd, 1, [](double a, double x) { return a * x; }, ident},
    {NodeKind::ReduceL1, 0, [](double a, double x) { return a + std::fabs(x); }, ident},
    {NodeKind::ReduceL2, 0, [](double a, double x) { return a + x * x; },
     [](double a, int64_t) { return std::sqrt(a); }},
    {NodeKind::ReduceLogSum, 0, sum, [](double a, int64_t) { return std::log(a); }},
    {NodeKind::ReduceLogSumExp, 0, [](double a, double x) { return a + std::exp(x); },
     [](double a, int64_t) { return std::log(a); }},
    {NodeKind::ReduceSumSquare, 0, [](double a, double x) { return a + x * x; }, ident},
};

KernelFn reduceKernel(const Reducer& r) {
  return [r](const Node& n, const Ins& in, Outs& out) {
    const Shape& dims = in[0]->dims();
    const Shape kept = reducedKeptShape(n.attrs(), dims);
    const int64_t outSize = out[0].size();
    const int64_t count = outSize ? in[0]->size() / outSize : 0;
    std::vector<double> acc(static_cast<size_t>(outSize), r.init);
    dispatchKind<kWideNumeric>(in[0]->kind(), n.kindName(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = in[0]->data<T>();
      forEachBroadcast<1>(dims, {&kept}, [&](int64_t i, const std::array<int64_t, 1>& o) {
        acc[size_t(o[0])] = r.acc(acc[size_t(o[0])], double(x[i]));
      });
      T* y = out[0].data<T>();
      for (int64_t o = 0; o < outSize; ++o) {
        const double v = r.finish(acc[size_t(o)], count);
        y[o] = std::is_integral_v<T> ? static_cast<T>(std::trunc(v)) : static_cast<T>(v);
      }
    });
  };
}

/// ArgMax (greater = true) / ArgMin: first or (select_last_index) last extremum; a NaN
/// is the extremum of both (as torch.argmax / argmin), docs/numerics.md.
KernelFn argKernel(bool greater) {
  return [greater](const Node& n, const Ins& in, Outs& out) {
    const Shape& dims = in[0]->dims();
    const ArgReduceAttrs ar = argReduceOf(n.attrs());
    int64_t axis = ar.axis;
    if (axis < 0)
      axis += int64_t(dims.size());
    const bool last = ar.selectLastIndex;
    int64_t outer, extent, inner;
    splitAround(dims, size_t(axis), &outer, &extent, &inner);
    int64_t* y = out[0].data<int64_t>();
    dispatchKind<kWideNumeric>(in[0]->kind(), n.kindName(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = in[0]->data<T>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const T* p = x + o * extent * inner + i;
          int64_t best = 0;
          for (int64_t k = 1; k < extent; ++k) {
            const T v = p[k * inner], b = p[best * inner];
            const bool better = v != v ? (b == b || last)
                                       : b == b && (greater ? (v > b || (last && v == b))
                                                            : (v < b || (last && v == b)));
            if (better)
              best = k;
          }
          y[o * inner + i] = best;
        }
    });
  };
}

} // namespace

void registerReductionKernels() {
  for (const Reducer& r : kReducers)
    registerKernel(r.kind, reduceKernel(r));
  registerKernel(NodeKind::ArgMax, argKernel(true));
  registerKernel(NodeKind::ArgMin, argKernel(false));
}

} // namespace ember
