// Reductions over any set of axes: the output is walked over up to six dimensions (od,
// input strides os) and each output element reduces the box rd (input strides rs).
// Accumulation in double, as the interpreter.
#include "Libjit.h"
#include "OpCodes.h"

namespace {
using namespace ember::jitops::reduce;
}

EMBER_KERNEL void ember_reduce_f32(int32_t op, const float* x, float* y, const int64_t* od,
                                   const int64_t* os, const int64_t* rd, const int64_t* rs,
                                   int64_t tid, int64_t nth) {
  const int64_t outs = libjit::boxSize(od), count = libjit::boxSize(rd);
  int64_t begin, end;
  libjit::threadRange(outs, tid, nth, &begin, &end);
  for (int64_t o = begin; o < end; ++o) {
    const int64_t base = libjit::boxOffset(o, od, os);
    double acc = op == kMax ? -__builtin_inf() : (op == kMin ? __builtin_inf() : 0.0);
    if (op == kProd)
      acc = 1.0;
    for (int64_t r = 0; r < count; ++r) {
      const double v = x[base + libjit::boxOffset(r, rd, rs)];
      if (op == kMax)
        acc = v > acc || v != v ? v : acc;
      else if (op == kMin)
        acc = v < acc || v != v ? v : acc;
      else if (op == kSumSquare || op == kL2)
        acc += v * v;
      else if (op == kL1)
        acc += fabs(v);
      else if (op == kProd)
        acc *= v;
      else
        acc += v;
    }
    if (op == kMean)
      acc /= static_cast<double>(count);
    else if (op == kL2)
      acc = sqrt(acc);
    else if (op == kLogSum)
      acc = log(acc);
    y[o] = static_cast<float>(acc);
  }
}

/// ArgMax (isMax) / ArgMin of float32 along an axis (x as [outer, extent, inner]): the
/// first extremum, or the last when selectLast; a NaN is the extremum of both (as
/// torch.argmax / argmin); int64 indices.
EMBER_KERNEL void ember_argextreme_f32(int32_t isMax, int32_t selectLast, const float* x,
                                       int64_t* y, int64_t outer, int64_t extent, int64_t inner,
                                       int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(outer * inner, tid, nth, &begin, &end);
  for (int64_t line = begin; line < end; ++line) {
    const int64_t o = line / inner, i = line % inner;
    const float* p = x + o * extent * inner + i;
    int64_t best = 0;
    for (int64_t k = 1; k < extent; ++k) {
      const float v = p[k * inner], b = p[best * inner];
      const bool better = v != v ? (b == b || selectLast)
                                 : b == b && (isMax ? (v > b || (selectLast && v == b))
                                                    : (v < b || (selectLast && v == b)));
      if (better)
        best = k;
    }
    y[line] = best;
  }
}
