// Convolutions with the interpreter's arithmetic (interpreter/kernels/ConvKernels.cpp),
// operation for operation, so that their results are its bits: the 3-D Conv and
// ConvTranspose (1-D to 3-D). Each output is summed in the order the interpreter's GEMM
// core (GemmCore.cpp) or its depthwise loop sums it (ConvNd.h's NdSum): the same chains
// of multiply-adds, fused exactly where its micro-kernel fuses them (`fused`, chosen by
// the code generator for the host), the same zeros for the padding, the same additions of
// the bias and of the chains' sums. Nothing here may be contracted into a fused
// multiply-add that the interpreter does not make, hence the pragma. Threads split the
// output rows (image, channel, depth, height); every output is computed by the same
// operations whatever the thread count.
#include "ConvNd.h"
#include "Libjit.h"

#pragma clang fp contract(off)

namespace {

using ember::jitops::NdGeom;
using ember::jitops::validRange;

/// a * b + c, rounded once when `fused` (the interpreter's FMA micro-kernels), else twice.
inline float madd(bool fused, float a, float b, float c) {
  return fused ? __builtin_fmaf(a, b, c) : a * b + c;
}

/// The interpreter's fused activation of a Conv (FusedActivation::apply): 1 relu, 2 clip
/// with the bounds compared in double.
inline float activate(int32_t act, float x, double lo, double hi) {
  if (act == 1)
    return x <= 0 ? 0.f : x;
  if (act == 2) {
    const float y = static_cast<double>(x) < lo ? static_cast<float>(lo) : x;
    return static_cast<double>(y) > hi ? static_cast<float>(hi) : y;
  }
  return x;
}

/// The interpreter's dot (GemmCore.cpp): sixteen products at a time into two sets of
/// eight lane sums, the second set added to the first, the lanes summed from 0 in order,
/// then the rest one at a time.
inline float dotAsInterpreter(const float* a, const float* b, int64_t n) {
  float acc0[8] = {0, 0, 0, 0, 0, 0, 0, 0}, acc1[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 8; ++l) {
      acc0[l] = acc0[l] + a[i + l] * b[i + l];
      acc1[l] = acc1[l] + a[i + 8 + l] * b[i + 8 + l];
    }
  float s = 0.f;
  for (int l = 0; l < 8; ++l)
    s = s + (acc0[l] + acc1[l]);
  for (; i < n; ++i)
    s = s + a[i] * b[i];
  return s;
}

/// One multiply-add of a chain for every output of a row: acc[o] = madd(w, x, acc[o])
/// with x the input of tap column `off` (xrow[o * s + off]), 0 in the padding or when
/// the whole tap row is (`xrow` null).
inline void tapRow(bool fused, float w, const float* xrow, int64_t OW, int64_t W, int64_t s,
                   int64_t off, float* acc) {
  int64_t lo = OW, hi = OW;
  if (xrow)
    validRange(OW, W, s, off, &lo, &hi);
  for (int64_t o = 0; o < lo; ++o)
    acc[o] = madd(fused, w, 0.f, acc[o]);
  for (int64_t o = lo; o < hi; ++o)
    acc[o] = madd(fused, w, xrow[o * s + off], acc[o]);
  for (int64_t o = xrow ? hi : OW; o < OW; ++o)
    acc[o] = madd(fused, w, 0.f, acc[o]);
}

/// The input row of Conv tap (kd, kh) of channel plane xc for output row (od, oh), or
/// null in the padding.
inline const float* convInputRow(const NdGeom& g, const float* xc, int64_t od, int64_t oh,
                                 int64_t kd, int64_t kh) {
  const int64_t id = od * g.s[0] + kd * g.d[0] - g.p[0];
  const int64_t ih = oh * g.s[1] + kh * g.d[1] - g.p[1];
  if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1])
    return nullptr;
  return xc + (id * g.in[1] + ih) * g.in[2];
}

/// One output row of a Conv summed in chains (kNdBlocked: `chain` = kNdChain; kNdRowVector:
/// one chain of all of K, not fused): tot = first chain + bias, then + each later chain.
void convRowChains(const NdGeom& g, const float* xg, const float* wm, float bias, int64_t od,
                   int64_t oh, int64_t chain, bool fused, float* acc, float* tot) {
  const int64_t OW = g.out[2], cg = g.C / g.group;
  int64_t k = 0;
  bool first = true;
  auto flush = [&] {
    for (int64_t o = 0; o < OW; ++o)
      tot[o] = first ? acc[o] + bias : tot[o] + acc[o];
    for (int64_t o = 0; o < OW; ++o)
      acc[o] = 0.f;
    first = false;
  };
  for (int64_t o = 0; o < OW; ++o)
    acc[o] = 0.f;
  for (int64_t ci = 0; ci < cg; ++ci)
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const float* xrow = convInputRow(g, xg + ci * g.inSize(), od, oh, kd, kh);
        for (int64_t kw = 0; kw < g.k[2]; ++kw, ++k) {
          if (k > 0 && k % chain == 0)
            flush();
          tapRow(fused, wm[k], xrow, OW, g.in[2], g.s[2], kw * g.d[2] - g.p[2], acc);
        }
      }
  flush();
}

/// One output of a Conv over a single output position (kNdDot): the column of the product
/// (zeros in the padding) gathered into `col`, then dot + bias.
float convDot(const NdGeom& g, const float* xg, const float* wm, float bias, float* col) {
  const int64_t cg = g.C / g.group;
  int64_t k = 0;
  for (int64_t ci = 0; ci < cg; ++ci)
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh) {
        const float* xrow = convInputRow(g, xg + ci * g.inSize(), 0, 0, kd, kh);
        for (int64_t kw = 0; kw < g.k[2]; ++kw, ++k) {
          const int64_t iw = kw * g.d[2] - g.p[2];
          col[k] = xrow && iw >= 0 && iw < g.in[2] ? xrow[iw] : 0.f;
        }
      }
  return dotAsInterpreter(wm, col, k) + bias;
}

/// One output row of a depthwise Conv: the bias, then tap by tap inside the input, plus
/// w * x (multiply, then add).
void convRowDepthwise(const NdGeom& g, const float* xc, const float* wm, float bias, int64_t od,
                      int64_t oh, float* tot) {
  const int64_t OW = g.out[2];
  for (int64_t o = 0; o < OW; ++o)
    tot[o] = bias;
  for (int64_t kd = 0, tap = 0; kd < g.k[0]; ++kd)
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      const float* xrow = convInputRow(g, xc, od, oh, kd, kh);
      for (int64_t kw = 0; kw < g.k[2]; ++kw, ++tap) {
        if (!xrow)
          continue;
        const int64_t off = kw * g.d[2] - g.p[2];
        int64_t lo, hi;
        validRange(OW, g.in[2], g.s[2], off, &lo, &hi);
        const float f = wm[tap];
        for (int64_t o = lo; o < hi; ++o)
          tot[o] = tot[o] + f * xrow[o * g.s[2] + off];
      }
    }
}

using ember::jitops::kNdChannels;
using ember::jitops::kNdLanes;
using libjit::F16;

/// acc = w * x + acc on 16 lanes, rounded once when `fused`, else twice; w is copied to
/// every lane (never as 0 + w: that would turn -0 into +0). By reference: vectors passed
/// by value change the ABI.
inline void maddV(bool fused, float w, const F16& x, F16& acc) {
  const F16 wv = {w, w, w, w, w, w, w, w, w, w, w, w, w, w, w, w};
  acc = fused ? __builtin_elementwise_fma(wv, x, acc) : wv * x + acc;
}

/// Fills `rows` (ember::jitops::NdRows) with the zero-padded input rows of output row
/// (od, oh) of the group's channels xg.
void buildRows(const NdGeom& g, const float* xg, int64_t od, int64_t oh,
               const ember::jitops::NdRows& R, float* rows) {
  for (int64_t ci = 0; ci < g.C / g.group; ++ci)
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh, rows += R.width) {
        const float* xrow = convInputRow(g, xg + ci * g.inSize(), od, oh, kd, kh);
        for (int64_t j = 0; j < R.width; ++j) {
          const int64_t iw = j - g.p[2];
          rows[j] = xrow && iw >= 0 && iw < g.in[2] ? xrow[iw] : 0.f;
        }
      }
}

/// The sums of outputs [o0, o0 + 16) of four channels (wj: their weights [K], bj: their
/// biases) in kNdBlocked's order, each chain's sum in registers: tot[j] = first chain +
/// bias, then + each later chain.
void blockSums(const NdGeom& g, const float* rows, const ember::jitops::NdRows& R,
               const float* const* wj, const float* bj, int64_t o0, bool fused, F16* tot) {
  const int64_t K = g.C / g.group * g.kSize(), KW = g.k[2], s = g.s[2], d = g.d[2];
  for (int64_t k0 = 0; k0 < K; k0 += ember::jitops::kNdChain) {
    const int64_t k1 = k0 + ember::jitops::kNdChain < K ? k0 + ember::jitops::kNdChain : K;
    F16 acc[kNdChannels] = {};
    const float* row = rows + k0 / KW * R.width + o0 * s;
    for (int64_t k = k0, kw = k0 % KW; k < k1; ++k) {
      F16 xv;
      if (s == 1)
        __builtin_memcpy(&xv, row + kw * d, sizeof xv);
      else
        for (int l = 0; l < kNdLanes; ++l)
          xv[l] = row[kw * d + l * s];
      for (int j = 0; j < kNdChannels; ++j)
        maddV(fused, wj[j][k], xv, acc[j]);
      if (++kw == KW) {
        kw = 0;
        row += R.width;
      }
    }
    for (int j = 0; j < kNdChannels; ++j)
      tot[j] = k0 == 0 ? acc[j] + bj[j] : tot[j] + acc[j];
  }
}

/// kNdBlocked on padded rows: items (image, group, output row, block of four of the
/// group's channels), the rows built once per output row.
void conv3dOnRows(const NdGeom& g, const float* x, const float* w, const float* bias, float* y,
                  bool fused, int32_t act, double lo, double hi, float* rows, int64_t tid,
                  int64_t nth) {
  const ember::jitops::NdRows R = ember::jitops::ndRows(g);
  const int64_t cg = g.C / g.group, mg = g.M / g.group, K = cg * g.kSize(), OW = g.out[2];
  const int64_t blocks = (mg + kNdChannels - 1) / kNdChannels, plane = g.out[0] * g.out[1];
  int64_t begin, end, built = -1;
  libjit::threadRange(g.N * g.group * plane * blocks, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t row = item / blocks, m0 = item % blocks * kNdChannels; // row: n, grp, od, oh
    const int64_t grp = row / plane % g.group, n = row / plane / g.group;
    const int64_t od = row % plane / g.out[1], oh = row % g.out[1];
    if (row != built)
      buildRows(g, x + (n * g.C + grp * cg) * g.inSize(), od, oh, R, rows);
    built = row;
    const float* wj[kNdChannels];
    float bj[kNdChannels];
    for (int j = 0; j < kNdChannels; ++j) { // past the group's channels: repeat its last
      const int64_t m = grp * mg + (m0 + j < mg ? m0 + j : mg - 1);
      wj[j] = w + m * K;
      bj[j] = bias ? bias[m] : 0.f;
    }
    for (int64_t o0 = 0; o0 < OW; o0 += kNdLanes) {
      F16 tot[kNdChannels];
      blockSums(g, rows, R, wj, bj, o0, fused, tot);
      for (int64_t j = 0; j < kNdChannels && m0 + j < mg; ++j) {
        float* yr = y + (((n * g.M + grp * mg + m0 + j) * g.out[0] + od) * g.out[1] + oh) * OW;
        for (int64_t l = 0; l < kNdLanes && o0 + l < OW; ++l)
          yr[o0 + l] = activate(act, tot[j][l], lo, hi);
      }
    }
  }
}

} // namespace

/// Conv (float32, three spatial dimensions) with the interpreter's arithmetic: x [N, C,
/// D, H, W], w [M, C / group, KD, KH, KW] as in the model, bias [M] or null, `geom` an
/// NdGeom, `sum` its ember::jitops::NdSum, `fused` whether the interpreter's micro-kernel
/// fuses, then the fused activation (act 0 none, 1 relu, 2 clip to [lo, hi]). Scratch:
/// conv3dScratchFloats per thread.
EMBER_KERNEL void ember_conv3d_f32(const float* x, const float* w, const float* bias, float* y,
                                   const int64_t* geom, int32_t sum, int32_t fused, int32_t act,
                                   double lo, double hi, float* scratch, int64_t tid, int64_t nth) {
  NdGeom g;
  __builtin_memcpy(&g, geom, sizeof g);
  float* acc = scratch;
  if (ember::jitops::conv3dOnRows(g, sum))
    return conv3dOnRows(g, x, w, bias, y, fused != 0, act, lo, hi, acc, tid, nth);
  const int64_t cg = g.C / g.group, mg = g.M / g.group, K = cg * g.kSize(), OW = g.out[2];
  float* tot = acc + OW;
  int64_t begin, end;
  libjit::threadRange(g.N * g.M * g.out[0] * g.out[1], tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t oh = r % g.out[1], od = r / g.out[1] % g.out[0], nm = r / g.out[1] / g.out[0];
    const int64_t m = nm % g.M, n = nm / g.M, grp = m / mg;
    const float* xg = x + (n * g.C + grp * cg) * g.inSize();
    const float* wm = w + m * K;
    const float b = bias ? bias[m] : 0.f;
    float* yr = y + r * OW;
    if (sum == ember::jitops::kNdDot) {
      yr[0] = activate(act, convDot(g, xg, wm, b, acc), lo, hi);
      continue;
    }
    if (sum == ember::jitops::kNdDepthwise)
      convRowDepthwise(g, xg, wm, b, od, oh, tot);
    else
      convRowChains(g, xg, wm, b, od, oh,
                    sum == ember::jitops::kNdRowVector ? K : ember::jitops::kNdChain,
                    sum == ember::jitops::kNdBlocked && fused != 0, acc, tot);
    for (int64_t o = 0; o < OW; ++o)
      yr[o] = activate(act, tot[o], lo, hi);
  }
}

namespace {

/// The input index i with i * s + k * d - p == o, or -1 when there is none inside [0, in).
inline int64_t transposedSource(int64_t o, int64_t k, const NdGeom& g, int dim) {
  const int64_t num = o + g.p[dim] - k * g.d[dim];
  if (num < 0 || num % g.s[dim] != 0 || num / g.s[dim] >= g.in[dim])
    return -1;
  return num / g.s[dim];
}

/// The interpreter's column of the product for output channel c of group grp, tap `tap`,
/// at input columns [lo, lo + n) of input row (id, ih): the sum over the group's input
/// channels of w * x as NdSum `sum` orders it (+0 after a gemv), into col.
void transposedColumn(const NdGeom& g, const float* xg, const float* w, int64_t c, int64_t grp,
                      int64_t tap, int64_t rowOff, int64_t lo, int64_t n, int32_t sum, bool fused,
                      float* acc, float* col) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group, inPlane = g.inSize();
  const float* wc = w + (grp * cg * mg + c) * g.kSize() + tap; // channel ci at ci * mg * kSize
  const int64_t wStep = mg * g.kSize();
  if (sum == ember::jitops::kNdDot) { // one input position, one tap: n == 1
    col[0] = dotAsInterpreter(wc, xg + rowOff + lo, cg) + 0.f;
    return;
  }
  const int64_t chain = sum == ember::jitops::kNdRowVector ? cg : ember::jitops::kNdChain;
  const bool fusedHere = sum == ember::jitops::kNdBlocked && fused;
  for (int64_t c0 = 0; c0 < cg; c0 += chain) {
    const int64_t c1 = c0 + chain < cg ? c0 + chain : cg;
    for (int64_t j = 0; j < n; ++j)
      acc[j] = 0.f;
    for (int64_t ci = c0; ci < c1; ++ci) {
      const float wv = wc[ci * wStep];
      const float* xr = xg + ci * inPlane + rowOff + lo;
      for (int64_t j = 0; j < n; ++j)
        acc[j] = madd(fusedHere, wv, xr[j], acc[j]);
    }
    for (int64_t j = 0; j < n; ++j)
      col[j] = sum == ember::jitops::kNdRowVector ? acc[j] + 0.f
               : c0 == 0                          ? acc[j]
                                                  : col[j] + acc[j];
  }
}

/// One output row (od, oh) of channel m of a ConvTranspose: the bias, then, tap by tap in
/// the interpreter's col2im order, the product's column at the input that reaches it.
void transposedRow(const NdGeom& g, const float* xg, const float* w, float bias, int64_t m,
                   int64_t od, int64_t oh, int32_t sum, bool fused, float* scratch, float* yr) {
  const int64_t mg = g.M / g.group, OW = g.out[2];
  float* acc = scratch;
  float* col = scratch + g.in[2];
  for (int64_t o = 0; o < OW; ++o)
    yr[o] = bias;
  for (int64_t kd = 0, tap = 0; kd < g.k[0]; ++kd)
    for (int64_t kh = 0; kh < g.k[1]; ++kh)
      for (int64_t kw = 0; kw < g.k[2]; ++kw, ++tap) {
        const int64_t id = transposedSource(od, kd, g, 0), ih = transposedSource(oh, kh, g, 1);
        if (id < 0 || ih < 0)
          continue;
        // Input columns iw reach output column iw * s + off inside [0, OW).
        const int64_t off = kw * g.d[2] - g.p[2], s = g.s[2];
        const int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
        const int64_t lastOut = OW - 1 - off;
        int64_t hi = lastOut < 0 ? 0 : lastOut / s + 1;
        hi = hi < g.in[2] ? hi : g.in[2];
        if (lo >= hi)
          continue;
        transposedColumn(g, xg, w, m % mg, m / mg, tap, (id * g.in[1] + ih) * g.in[2], lo, hi - lo,
                         sum, fused, acc, col);
        for (int64_t j = 0; j < hi - lo; ++j)
          yr[(lo + j) * s + off] = yr[(lo + j) * s + off] + col[j];
      }
}

} // namespace

/// ConvTranspose (float32, one to three spatial dimensions as NdGeom) with the
/// interpreter's arithmetic: x [N, C, spatial], w [C, M / group, kernel] as in the model,
/// bias [M] or null, `sum` the NdSum of its product (convTransposeSum), `fused` whether
/// the interpreter's micro-kernel fuses. Scratch: convTransposeScratchFloats per thread.
EMBER_KERNEL void ember_conv_transpose_f32(const float* x, const float* w, const float* bias,
                                           float* y, const int64_t* geom, int32_t sum,
                                           int32_t fused, float* scratch, int64_t tid,
                                           int64_t nth) {
  NdGeom g;
  __builtin_memcpy(&g, geom, sizeof g);
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  float* mine = scratch;
  int64_t begin, end;
  libjit::threadRange(g.N * g.M * g.out[0] * g.out[1], tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t oh = r % g.out[1], od = r / g.out[1] % g.out[0], nm = r / g.out[1] / g.out[0];
    const int64_t m = nm % g.M, n = nm / g.M;
    const float* xg = x + (n * g.C + m / mg * cg) * g.inSize();
    transposedRow(g, xg, w, bias ? bias[m] : 0.f, m, od, oh, sum, fused != 0, mine,
                  y + r * g.out[2]);
  }
}
