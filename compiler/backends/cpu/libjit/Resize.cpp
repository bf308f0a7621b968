// Resize (float32, nearest and linear) from the per-dimension tables of codegen/
// ResizeGen.cpp, with the interpreter's arithmetic (interpreter/kernels/ResizeKernels.cpp):
// linear sums w * x over the corners in double, corner c taking the second neighbour of
// dimension d when bit d of c is set, its weight the product of the dimensions' weights
// in dimension order; corners of weight 0 are skipped. A dimension whose second weight is
// 0 contributes a factor of exactly 1 and no corner, so only the others are walked.
// Nearest is the same sum of one corner: 0 + 1 * x (so -0 becomes +0, as there). Threads
// split the rows (every dimension but the last).
#include "Libjit.h"

namespace {

/// Ranks the row walk takes (codegen/ResizeGen.cpp refuses larger ones).
constexpr int kMaxRank = 8;

/// The dimensions of one output element whose second weight is not 0, in dimension
/// order: the offset from the first neighbour to the second, and that weight.
struct Active {
  int64_t delta[kMaxRank];
  double w[kMaxRank];
  int n = 0;
  void add(int64_t off0, int64_t off1, double w1) {
    delta[n] = off1 - off0;
    w[n++] = w1;
  }
};

/// The sum over the 2^a.n corners of w * x[src + offsets], in double and in the
/// interpreter's order, never contracted into fused multiply-adds (it has none).
inline float linearValue(const float* x, int64_t src, const Active& a) {
#pragma clang fp contract(off)
  double v = 0;
  for (int64_t corner = 0; corner < (int64_t(1) << a.n); ++corner) {
    double w = 1;
    int64_t at = src;
    for (int i = 0; i < a.n; ++i) {
      const bool hi = (corner >> i) & 1;
      w *= hi ? a.w[i] : 1 - a.w[i];
      at += hi ? a.delta[i] : 0;
    }
    if (w != 0)
      v += w * static_cast<double>(x[at]);
  }
  return static_cast<float>(v);
}

/// The tables of codegen/ResizeGen.cpp: dimension d's entries start at base[d].
struct ResizeTables {
  const int64_t* off; ///< per entry: the two neighbours' offsets (-1: outside the input)
  const double* w1;   ///< per entry: the second neighbour's weight
  int64_t base[kMaxRank];
};

/// Output row `r` (the outer indices decoded from it) of W elements.
void resizeRow(const float* x, float* yr, int64_t r, int64_t rank, const int64_t* outDims,
               const ResizeTables& t, int32_t linear, float extrapolation) {
#pragma clang fp contract(off)
  int64_t idx[kMaxRank];
  for (int64_t d = rank - 2; d >= 0; --d) {
    idx[d] = r % outDims[d];
    r /= outDims[d];
  }
  Active outer;
  int64_t src = 0;
  bool outside = false;
  for (int64_t d = 0; d < rank - 1; ++d) {
    const int64_t e = t.base[d] + idx[d];
    outside = outside || t.off[2 * e] < 0;
    src += t.off[2 * e];
    if (t.w1[e] != 0)
      outer.add(t.off[2 * e], t.off[2 * e + 1], t.w1[e]);
  }
  const int64_t W = outDims[rank - 1];
  const int64_t* off = t.off + 2 * t.base[rank - 1];
  const double* w1 = t.w1 + t.base[rank - 1];
  for (int64_t o = 0; o < W; ++o) {
    if (outside || off[2 * o] < 0) {
      yr[o] = extrapolation;
    } else if (!linear) {
      yr[o] = static_cast<float>(0.0 + static_cast<double>(x[src + off[2 * o]]));
    } else {
      Active a = outer;
      if (w1[o] != 0)
        a.add(off[2 * o], off[2 * o + 1], w1[o]);
      yr[o] = linearValue(x, src + off[2 * o], a);
    }
  }
}

} // namespace

/// y = Resize(x) over `rank` dimensions of extents outDims; `off` and `w1` are the
/// tables of codegen/ResizeGen.cpp (every dimension's entries one after the other);
/// `linear` 0 is nearest; an element outside the input (tf_crop_and_resize) is
/// `extrapolation`.
EMBER_KERNEL void ember_resize_f32(const float* x, float* y, int64_t rank, const int64_t* outDims,
                                   const int64_t* off, const double* w1, int32_t linear,
                                   float extrapolation, int64_t tid, int64_t nth) {
  ResizeTables t{off, w1, {}};
  int64_t rows = 1;
  for (int64_t d = 0, at = 0; d < rank; ++d) {
    t.base[d] = at;
    at += outDims[d];
    rows *= d + 1 < rank ? outDims[d] : 1;
  }
  const int64_t W = outDims[rank - 1];
  int64_t begin, end;
  libjit::threadRange(W > 0 ? rows : 0, tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r)
    resizeRow(x, y + r * W, r, rank, outDims, t, linear, extrapolation);
}

/// Int8 bilinear upsampling by whole factors (docs/numerics.md section 4.4, ember/
/// quantization/BilinearUpsample.h): per output coordinate of H (tables th) and W (tw)
/// four entries (i0, i1, w0, w1); y = requant(sum wH * wW * (x - zp); M, S) + zp within
/// [-128, 127] (section 3). Threads split the planes.
EMBER_KERNEL void ember_resize_bilinear_i8(const int8_t* x, int8_t* y, int64_t planes, int64_t H,
                                           int64_t W, int64_t OH, int64_t OW, const int64_t* th,
                                           const int64_t* tw, int32_t zp, int32_t M, int32_t S,
                                           int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(planes, tid, nth, &begin, &end);
  for (int64_t p = begin; p < end; ++p) {
    const int8_t* xp = x + p * H * W;
    for (int64_t i = 0; i < OH; ++i) {
      const int64_t* h = th + 4 * i;
      int8_t* yr = y + (p * OH + i) * OW;
      for (int64_t j = 0; j < OW; ++j) {
        const int64_t* w = tw + 4 * j;
        const auto line = [&](int64_t r) {
          return int32_t(w[2]) * (int32_t(xp[r * W + w[0]]) - zp) +
                 int32_t(w[3]) * (int32_t(xp[r * W + w[1]]) - zp);
        };
        const int32_t acc = int32_t(h[2]) * line(h[0]) + int32_t(h[3]) * line(h[1]);
        const int64_t v = ((static_cast<int64_t>(acc) * M + (int64_t(1) << (S - 1))) >> S) + zp;
        yr[j] = static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
      }
    }
  }
}
