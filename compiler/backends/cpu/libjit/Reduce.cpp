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
  const int64_t outs = od[0] * od[1] * od[2] * od[3] * od[4] * od[5];
  const int64_t count = rd[0] * rd[1] * rd[2] * rd[3] * rd[4] * rd[5];
  int64_t begin, end;
  libjit::threadRange(outs, tid, nth, &begin, &end);
  for (int64_t o = begin; o < end; ++o) {
    int64_t rem = o, base = 0;
    for (int k = 5; k >= 0; --k) {
      base += (rem % od[k]) * os[k];
      rem /= od[k];
    }
    double acc = op == kMax ? -__builtin_inf() : (op == kMin ? __builtin_inf() : 0.0);
    if (op == kProd)
      acc = 1.0;
    for (int64_t r = 0; r < count; ++r) {
      int64_t rr = r, off = base;
      for (int k = 5; k >= 0; --k) {
        off += (rr % rd[k]) * rs[k];
        rr /= rd[k];
      }
      const double v = x[off];
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
