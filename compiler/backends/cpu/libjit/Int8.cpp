// The int8 kernels of docs/numerics.md section 4, bit-exact with the interpreter's
// (compiler/backends/interpreter/kernels/Int8*.cpp): every int32 sum wraps (computed in
// uint32), every result goes through requant() (section 3), whose (M, S) were chosen at
// compile time by ember::quant. Convolutions fold -zp_x * sum w into the bias and pad
// with zp_x, as section 4.1 allows; the GEMM panels are the float kernel's, in int8.
#include "ConvNd.h"
#include "ConvPanel.h"
#include "Libjit.h"
#include "Pool3.h"

namespace {

/// Section 3: clamp(((int64) acc * M + 2^(S-1)) >> S + zp, lo, hi).
inline int8_t requant(int32_t acc, int32_t M, int32_t S, int32_t zp, int32_t lo, int32_t hi) {
  const int64_t prod = static_cast<int64_t>(acc) * M;
  const int64_t y = ((prod + (int64_t(1) << (S - 1))) >> S) + zp;
  return static_cast<int8_t>(y < lo ? lo : (y > hi ? hi : y));
}

inline int32_t wrap(uint32_t v) {
  return static_cast<int32_t>(v);
}

typedef int32_t I16 __attribute__((vector_size(64)));
typedef uint32_t U16 __attribute__((vector_size(64)));
typedef int8_t B16 __attribute__((vector_size(16)));

/// acc[MR rows][NV * 16 columns] = sum_k a[i, k] * b[k, n] (wrapping, in uint32) over all of
/// K, kept in registers (row i of a at a + i * K, row k of b at b + k * N).
template <int MR, int NV>
inline void gemmBlockI8(const int8_t* __restrict a, const int8_t* __restrict b, int64_t N,
                        int64_t K, uint32_t* __restrict out) {
  U16 acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      acc[i][j] = U16{} * 0u;
  for (int64_t k = 0; k < K; ++k) {
    U16 bv[NV];
    for (int j = 0; j < NV; ++j) {
      B16 raw;
      __builtin_memcpy(&raw, b + k * N + j * 16, sizeof raw);
      bv[j] = reinterpret_cast<U16>(__builtin_convertvector(raw, I16));
    }
    for (int i = 0; i < MR; ++i) {
      const uint32_t av = static_cast<uint32_t>(static_cast<int32_t>(a[i * K + k]));
      for (int j = 0; j < NV; ++j)
        acc[i][j] += av * bv[j];
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      __builtin_memcpy(out + i * NV * 16 + j * 16, &acc[i][j], sizeof(U16));
}

/// Rows [0, rows) of y for columns [n0, n0 + NV * 16): blocks of MR rows, then single rows.
template <int NV>
inline void gemmColumnsI8(const int8_t* a, const int8_t* b, const int32_t* fold, const int32_t* Mq,
                          const int32_t* Sq, int8_t* y, int64_t rows, int64_t N, int64_t K,
                          int64_t n0, int32_t zpy, int32_t lo, int32_t hi) {
  constexpr int MR = 4, NC = NV * 16;
  uint32_t tile[MR * NC];
  for (int64_t r = 0; r < rows;) {
    const int64_t mr = rows - r >= MR ? MR : 1;
    if (mr == MR)
      gemmBlockI8<MR, NV>(a + r * K, b + n0, N, K, tile);
    else
      gemmBlockI8<1, NV>(a + r * K, b + n0, N, K, tile);
    for (int64_t i = 0; i < mr; ++i)
      for (int64_t c = 0; c < NC; ++c) {
        const int64_t n = n0 + c;
        y[(r + i) * N + n] = requant(wrap(tile[i * NC + c] + static_cast<uint32_t>(fold[n])), Mq[n],
                                     Sq[n], zpy, lo, hi);
      }
    r += mr;
  }
}

} // namespace

/// y = saturate(round_half_even(x / s) + zp), per tensor (x / s in float, as the
/// interpreter).
EMBER_KERNEL void ember_quantize_i8(const float* x, int8_t* y, int64_t n, float s, int32_t zp,
                                    int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRangeGrain(n, 64, tid, nth, &begin, &end);
  for (int64_t i = begin; i < end; ++i) {
    const double r = static_cast<double>(nearbyintf(x[i] / s)) + zp;
    y[i] = static_cast<int8_t>(r < -128.0 ? -128.0 : (r > 127.0 ? 127.0 : r));
  }
}

/// y = float(x - zp) * s.
EMBER_KERNEL void ember_dequantize_i8(const int8_t* x, float* y, int64_t n, float s, int32_t zp,
                                      int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRangeGrain(n, 64, tid, nth, &begin, &end);
  for (int64_t i = begin; i < end; ++i)
    y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - zp) * s;
}

/// Codes clamped to [lo, hi] (Relu, Clip with the input's parameters), as x < lo ? lo :
/// (x > hi ? hi : x). The bounds are codes (activationBounds keeps them in [-128, 127]).
/// The loop is written on 64-byte vectors of int8: as a scalar loop, the vectoriser (a)
/// compared on int32 lanes when the bounds were not constants and (b) fell back to the
/// scalar loop when x == y (its overlap check), the in-place Relu of most layers.
EMBER_KERNEL void ember_clamp_i8(const int8_t* x, int8_t* y, int64_t n, int32_t lo, int32_t hi,
                                 int64_t tid, int64_t nth) {
  typedef int8_t B64 __attribute__((vector_size(64)));
  const int8_t l = static_cast<int8_t>(lo < -128 ? -128 : (lo > 127 ? 127 : lo));
  const int8_t h = static_cast<int8_t>(hi < -128 ? -128 : (hi > 127 ? 127 : hi));
  const B64 lv = B64{} + l, hv = B64{} + h;
  int64_t begin, end;
  libjit::threadRangeGrain(n, 64, tid, nth, &begin, &end);
  int64_t i = begin;
  for (; i + 64 <= end; i += 64) {
    B64 v;
    __builtin_memcpy(&v, x + i, sizeof(v));
    v = v < lv ? lv : (v > hv ? hv : v);
    __builtin_memcpy(y + i, &v, sizeof(v));
  }
  for (; i < end; ++i)
    y[i] = x[i] < l ? l : (x[i] > h ? h : x[i]);
}

/// Packed-GEMM int8 convolution: wp as the float kernel's packing (MR = 8 channels,
/// k-major), fold[m] = b[m] - zp_x * sum w[m], (Mq, Sq) per output channel.
EMBER_KERNEL void ember_conv_i8(const int8_t* x, const int8_t* wp, const int32_t* fold,
                                const int32_t* Mq, const int32_t* Sq, int8_t* y, int64_t N,
                                int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW,
                                int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,
                                int64_t pw, int64_t dh, int64_t dw, int64_t group, int32_t zpx,
                                int32_t zpy, int32_t lo, int32_t hi, int8_t* scratch, int64_t tid,
                                int64_t nth) {
  constexpr int MR = 8, NR = 16;
  const libjit::ConvGeom g{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  const int64_t cg = C / group, mg = M / group, K = cg * KH * KW;
  const int64_t P = OH * OW, panels = (P + NR - 1) / NR, mblocks = (mg + MR - 1) / MR;
  int8_t* panel = scratch;
  int64_t begin, end;
  libjit::threadRange(N * group * panels, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t pi = item % panels, ng = item / panels, grp = ng % group, n = ng / group;
    const int64_t p0 = pi * NR;
    libjit::packPanel<NR>(x + (n * C + grp * cg) * H * W, g, cg, p0, static_cast<int8_t>(zpx),
                          panel);
    const int64_t cols = P - p0 < NR ? P - p0 : NR;
    for (int64_t mb = 0; mb < mblocks; ++mb) {
      const int8_t* a = wp + (grp * mblocks + mb) * K * MR;
      I16 acc[MR];
      for (int i = 0; i < MR; ++i)
        acc[i] = I16{} * 0;
      for (int64_t k = 0; k < K; ++k) {
        B16 b8;
        __builtin_memcpy(&b8, panel + k * NR, sizeof(b8));
        const I16 bv = __builtin_convertvector(b8, I16);
        for (int i = 0; i < MR; ++i)
          acc[i] = (I16)((__attribute__((vector_size(64))) uint32_t)acc[i] +
                         (__attribute__((vector_size(64))) uint32_t)(a[k * MR + i] * bv));
      }
      const int64_t rows = mg - mb * MR < MR ? mg - mb * MR : MR;
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t m = grp * mg + mb * MR + i;
        int8_t* yr = y + (n * M + m) * P + p0;
        for (int64_t j = 0; j < cols; ++j)
          yr[j] = requant(wrap(static_cast<uint32_t>(acc[i][j]) + static_cast<uint32_t>(fold[m])),
                          Mq[m], Sq[m], zpy, lo, hi);
      }
    }
  }
}

/// Depthwise int8 convolution: acc = b[m] + sum over taps inside the input of
/// (x - zp_x) * w (the interpreter's order of wrap-around sums), one int32 row buffer
/// of OW per thread in scratch.
EMBER_KERNEL void ember_dwconv_i8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                  const int32_t* Mq, const int32_t* Sq, int8_t* y, int64_t N,
                                  int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,
                                  int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                                  int64_t ph, int64_t pw, int64_t dh, int64_t dw, int32_t zpx,
                                  int32_t zpy, int32_t lo, int32_t hi, int32_t* scratch,
                                  int64_t tid, int64_t nth) {
  const int64_t mult = M / C;
  uint32_t* row = reinterpret_cast<uint32_t*>(scratch);
  int64_t begin, end;
  libjit::threadRange(N * M, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t m = item % M, n = item / M, c = m / mult;
    const int8_t* xc = x + (n * C + c) * H * W;
    const int8_t* wm = w + m * KH * KW;
    int8_t* yp = y + item * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t ow = 0; ow < OW; ++ow)
        row[ow] = 0;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * sh - ph + kh * dh;
        if (ih < 0 || ih >= H)
          continue;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int32_t f = wm[kh * KW + kw];
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t iw = ow * sw - pw + kw * dw;
            if (iw >= 0 && iw < W)
              row[ow] += static_cast<uint32_t>(f * (xc[ih * W + iw] - zpx));
          }
        }
      }
      for (int64_t ow = 0; ow < OW; ++ow)
        yp[oh * OW + ow] = requant(wrap(row[ow] + static_cast<uint32_t>(bias ? bias[m] : 0)), Mq[m],
                                   Sq[m], zpy, lo, hi);
    }
  }
}

/// y[r, n] = requant(fold[n] + sum_k a[r, k] * b[k, n]); fold[n] = c[n] - zp_a * colsum(b).
EMBER_KERNEL void ember_gemm_i8(const int8_t* a, const int8_t* b, const int32_t* fold,
                                const int32_t* Mq, const int32_t* Sq, int8_t* y, int64_t rows,
                                int64_t N, int64_t K, int32_t zpy, int32_t lo, int32_t hi,
                                uint32_t* scratch, int64_t tid, int64_t nth) {
  int64_t n0, n1;
  libjit::threadRangeGrain(N, 64, tid, nth, &n0, &n1);
  // Blocks of 64, then 16 columns summed in registers; the last columns (N % 16) below.
  for (; n0 + 64 <= n1; n0 += 64)
    gemmColumnsI8<4>(a, b, fold, Mq, Sq, y, rows, N, K, n0, zpy, lo, hi);
  for (; n0 + 16 <= n1; n0 += 16)
    gemmColumnsI8<1>(a, b, fold, Mq, Sq, y, rows, N, K, n0, zpy, lo, hi);
  uint32_t* acc = scratch;
  for (int64_t r = 0; r < rows && n0 < n1; ++r) {
    for (int64_t n = n0; n < n1; ++n)
      acc[n] = static_cast<uint32_t>(fold[n]);
    for (int64_t k = 0; k < K; ++k) {
      const int32_t av = a[r * K + k];
      const int8_t* br = b + k * N;
      for (int64_t n = n0; n < n1; ++n)
        acc[n] += static_cast<uint32_t>(av * br[n]);
    }
    for (int64_t n = n0; n < n1; ++n)
      y[r * N + n] = requant(wrap(acc[n]), Mq[n], Sq[n], zpy, lo, hi);
  }
}

namespace {

/// Elements [i0, i1) of one row of ember_binary_i8 whose operands are contiguous, 16 at
/// a time: the rescaled Add in int32 lanes (|t| < 2^30 and 2^(S-1) <= 2^30, so t + 2^(S-1)
/// fits and the sum is requant()'s with M = 1 exactly), the Mul's product times M in
/// int64 lanes; then the scalar requant() for the last elements.
inline void binaryRowI8(int32_t isMul, const int8_t* a, const int8_t* b, int8_t* y, int64_t i0,
                        int64_t i1, int32_t zpa, int32_t zpb, int32_t Ma, int32_t Mb, int32_t S,
                        int32_t zpy, int32_t lo, int32_t hi) {
  typedef int64_t L16 __attribute__((vector_size(128)));
  int64_t i = i0;
  for (; i + 16 <= i1; i += 16) {
    B16 av, bv;
    __builtin_memcpy(&av, a + i, sizeof av);
    __builtin_memcpy(&bv, b + i, sizeof bv);
    const I16 xa = __builtin_convertvector(av, I16) - zpa;
    const I16 xb = __builtin_convertvector(bv, I16) - zpb;
    I16 r;
    if (isMul) {
      L16 p = __builtin_convertvector(xa * xb, L16) * static_cast<int64_t>(Ma);
      p = ((p + (int64_t(1) << (S - 1))) >> static_cast<int64_t>(S)) + static_cast<int64_t>(zpy);
      p = __builtin_elementwise_max(p, (L16{} * 0) + static_cast<int64_t>(lo));
      r = __builtin_convertvector(
          __builtin_elementwise_min(p, (L16{} * 0) + static_cast<int64_t>(hi)), I16);
    } else {
      r = (((xa * Ma + xb * Mb) + (int32_t(1) << (S - 1))) >> S) + zpy;
    }
    r = __builtin_elementwise_min(__builtin_elementwise_max(r, I16{} + lo), I16{} + hi);
    const B16 out = __builtin_convertvector(r, B16);
    __builtin_memcpy(y + i, &out, sizeof out);
  }
  for (; i < i1; ++i) {
    const int32_t xa = a[i] - zpa, xb = b[i] - zpb;
    y[i] = isMul ? requant(xa * xb, Ma, S, zpy, lo, hi)
                 : requant(xa * Ma + xb * Mb, 1, S, zpy, lo, hi);
  }
}

} // namespace

/// Rescaled Add (section 4.2: multipliers Ma, Mb, shift S) or, when isMul, Mul (4.3:
/// requantization (Ma, S)) with broadcasting over a six-dimensional box. The threads
/// split the elements (in units of 64), so a box of one long row is shared too.
EMBER_KERNEL void ember_binary_i8(int32_t isMul, const int8_t* a, const int8_t* b, int8_t* y,
                                  const int64_t* d, const int64_t* as, const int64_t* bs,
                                  int32_t zpa, int32_t zpb, int32_t Ma, int32_t Mb, int32_t S,
                                  int32_t zpy, int32_t lo, int32_t hi, int64_t tid, int64_t nth) {
  const int64_t rows = d[0] * d[1] * d[2] * d[3] * d[4], len = d[5];
  int64_t begin, end;
  libjit::threadRangeGrain(rows * len, 64, tid, nth, &begin, &end);
  for (int64_t e = begin; e < end;) {
    const int64_t r = e / len, i0 = e % len, i1 = end - r * len < len ? end - r * len : len;
    const libjit::Row5 row = libjit::decodeRow(r, d);
    const int8_t* ar = a + row.offset(as);
    const int8_t* br = b + row.offset(bs);
    int8_t* yr = y + r * len;
    if (as[5] == 1 && bs[5] == 1) {
      binaryRowI8(isMul, ar, br, yr, i0, i1, zpa, zpb, Ma, Mb, S, zpy, lo, hi);
    } else {
      for (int64_t i = i0; i < i1; ++i) {
        const int32_t xa = ar[i * as[5]] - zpa, xb = br[i * bs[5]] - zpb;
        yr[i] = isMul ? requant(xa * xb, Ma, S, zpy, lo, hi)
                      : requant(xa * Ma + xb * Mb, 1, S, zpy, lo, hi);
      }
    }
    e = r * len + i1;
  }
}

/// Rescale (section 4.7): requant(x - zp_x; M, S) into [lo, hi].
EMBER_KERNEL void ember_rescale_i8(const int8_t* x, int8_t* y, int64_t n, int32_t zpx, int32_t Mq,
                                   int32_t Sq, int32_t zpy, int32_t lo, int32_t hi, int64_t tid,
                                   int64_t nth) {
  int64_t begin, end;
  libjit::threadRangeGrain(n, 64, tid, nth, &begin, &end);
  for (int64_t i = begin; i < end; ++i)
    y[i] = requant(x[i] - zpx, Mq, Sq, zpy, lo, hi);
}

/// Lut (section 4.6): y = table[x + 128].
EMBER_KERNEL void ember_lut_i8(const int8_t* x, const int8_t* table, int8_t* y, int64_t n,
                               int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRangeGrain(n, 64, tid, nth, &begin, &end);
  for (int64_t i = begin; i < end; ++i)
    y[i] = table[x[i] + 128];
}

/// PRelu (section 4.12) over [outer, C, inner]: d = x - zpx, t = max(d, 0) * Mp +
/// min(d, 0) * Mn[c], requant(t, 1, S).
EMBER_KERNEL void ember_prelu_i8(const int8_t* x, const int32_t* Mn, int8_t* y, int64_t outer,
                                 int64_t C, int64_t inner, int32_t zpx, int32_t Mp, int32_t S,
                                 int32_t zpy, int32_t lo, int32_t hi, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRangeGrain(outer * C, 1, tid, nth, &begin, &end);
  for (int64_t p = begin; p < end; ++p) {
    const int32_t mn = Mn[p % C];
    for (int64_t i = p * inner, e = i + inner; i < e; ++i) {
      const int32_t d = x[i] - zpx;
      y[i] = requant((d > 0 ? d : 0) * Mp + (d < 0 ? d : 0) * mn, 1, S, zpy, lo, hi);
    }
  }
}

/// MaxPool on codes (padding -128; the result keeps the input's parameters). Each plane
/// is first copied into the thread's scratch with -128 around it (rows of `pc` bytes:
/// every tap of every 64-position block of an output row lies inside, codegen's
/// maxPoolScratch), then blocks of 64 outputs take the maximum over the taps in a
/// register and are stored once: at stride 1 each tap is one load, at stride 2 the even
/// bytes of two, other strides gather.
EMBER_KERNEL void ember_maxpool_i8(const int8_t* x, int8_t* y, int64_t planes, int64_t H, int64_t W,
                                   int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                   int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                                   int8_t* scratch, int64_t tid, int64_t nth) {
  typedef int8_t B64 __attribute__((vector_size(64)));
  const int64_t blocks = (OW + 63) / 64;
  const int64_t pr = (OH - 1) * sh + (KH - 1) * dh + 1;
  const int64_t pc = (blocks * 64 - 1) * sw + (KW - 1) * dw + 1 + 64;
  int8_t* pad = scratch;
  int64_t begin, end;
  libjit::threadRange(planes, tid, nth, &begin, &end);
  for (int64_t p = begin; p < end; ++p) {
    const int8_t* xp = x + p * H * W;
    for (int64_t r = 0; r < pr; ++r) {
      int8_t* row = pad + r * pc;
      const int64_t ih = r - ph;
      const int64_t c0 = pw < pc ? pw : pc;
      const int64_t n = ih >= 0 && ih < H ? (W < pc - c0 ? W : pc - c0) : 0;
      for (int64_t c = 0; c < c0; ++c)
        row[c] = -128;
      if (n > 0)
        __builtin_memcpy(row + c0, xp + ih * W, size_t(n));
      for (int64_t c = c0 + n; c < pc; ++c)
        row[c] = -128;
    }
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t b = 0; b < blocks; ++b) {
        B64 acc = B64{} + static_cast<int8_t>(-128);
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int8_t* at = pad + (oh * sh + kh * dh) * pc + b * 64 * sw + kw * dw;
            B64 v;
            if (sw == 1) {
              __builtin_memcpy(&v, at, sizeof v);
            } else if (sw == 2) {
              B64 v0, v1;
              __builtin_memcpy(&v0, at, sizeof v0);
              __builtin_memcpy(&v1, at + 64, sizeof v1);
              v = __builtin_shufflevector(v0, v1, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26,
                                          28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54,
                                          56, 58, 60, 62, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82,
                                          84, 86, 88, 90, 92, 94, 96, 98, 100, 102, 104, 106, 108,
                                          110, 112, 114, 116, 118, 120, 122, 124, 126);
            } else {
              for (int j = 0; j < 64; ++j)
                v[j] = at[j * sw];
            }
            acc = acc > v ? acc : v;
          }
        int8_t* yr = y + (p * OH + oh) * OW + b * 64;
        const int64_t cols = OW - b * 64 < 64 ? OW - b * 64 : 64;
        if (cols == 64)
          __builtin_memcpy(yr, &acc, sizeof acc);
        else
          for (int64_t j = 0; j < cols; ++j)
            yr[j] = acc[j];
      }
  }
}

/// AveragePool (section 4.5): the sum of (x - zp_x) over the taps inside the input,
/// requantized with the multiplier (Mpos, Spos) of its output position (which depends on
/// the window's count, chosen at compile time); Mpos < 0 marks an empty window (zp_y).
EMBER_KERNEL void ember_avgpool_i8(const int8_t* x, int8_t* y, int64_t planes, int64_t H, int64_t W,
                                   int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                   int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                                   const int32_t* Mpos, const int32_t* Spos, int32_t zpx,
                                   int32_t zpy, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(planes, tid, nth, &begin, &end);
  for (int64_t p = begin; p < end; ++p) {
    const int8_t* xp = x + p * H * W;
    for (int64_t o = 0; o < OH * OW; ++o) {
      const int64_t oh = o / OW, ow = o % OW;
      uint32_t acc = 0;
      libjit::forEachTap(oh, ow, H, W, KH, KW, sh, sw, ph, pw, dh, dw,
                         [&](int64_t at) { acc += static_cast<uint32_t>(xp[at] - zpx); });
      y[p * OH * OW + o] = Mpos[o] < 0 ? static_cast<int8_t>(zpy)
                                       : requant(wrap(acc), Mpos[o], Spos[o], zpy, -128, 127);
    }
  }
}

/// GlobalAveragePool (section 4.5 with n = size) or GlobalMaxPool on codes.
EMBER_KERNEL void ember_global_pool_i8(int32_t isMax, const int8_t* x, int8_t* y, int64_t planes,
                                       int64_t size, int32_t zpx, int32_t Mq, int32_t Sq,
                                       int32_t zpy, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(planes, tid, nth, &begin, &end);
  for (int64_t p = begin; p < end; ++p) {
    const int8_t* v = x + p * size;
    if (isMax) {
      int32_t m = -128;
      for (int64_t i = 0; i < size; ++i)
        m = v[i] > m ? v[i] : m;
      y[p] = static_cast<int8_t>(m);
      continue;
    }
    uint32_t acc = 0;
    for (int64_t i = 0; i < size; ++i)
      acc += static_cast<uint32_t>(v[i] - zpx);
    y[p] = requant(wrap(acc), Mq, Sq, zpy, -128, 127);
  }
}

/// ReduceMean of int8 codes (docs/numerics.md 4.5): for each output (the kept box od/os),
/// the sum of (x - zpx) over the reduced box rd/rs, exact in int64 then wrapped to int32
/// as the interpreter's, requantized by (M, S).
EMBER_KERNEL void ember_reduce_mean_i8(const int8_t* x, int8_t* y, const int64_t* od,
                                       const int64_t* os, const int64_t* rd, const int64_t* rs,
                                       int32_t zpx, int32_t M, int32_t S, int32_t zpy, int64_t tid,
                                       int64_t nth) {
  const int64_t outs = libjit::boxSize(od), count = libjit::boxSize(rd);
  int64_t begin, end;
  libjit::threadRange(outs, tid, nth, &begin, &end);
  for (int64_t o = begin; o < end; ++o) {
    const int64_t base = libjit::boxOffset(o, od, os);
    int64_t acc = 0;
    for (int64_t r = 0; r < count; ++r)
      acc += x[base + libjit::boxOffset(r, rd, rs)] - zpx;
    y[o] = requant(wrap(static_cast<uint32_t>(acc)), M, S, zpy, -128, 127);
  }
}

/// Int8 Conv over three spatial dimensions (section 4.1): y = requant(b[m] + sum over the
/// taps inside the input of w * (x - zp_x)), the interpreter's sum modulo 2^32 (its
/// padding holds zp_x, which adds nothing to the centred sum); w [M, C / group, KD, KH,
/// KW] as in the model (zero points 0), bias int32 or null, (Mq, Sq) per output channel,
/// geom an ember::jitops::NdGeom. Scratch: out[2] uint32 per thread; threads split the
/// output rows.
EMBER_KERNEL void ember_conv3d_i8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                  const int32_t* Mq, const int32_t* Sq, int8_t* y,
                                  const int64_t* geom, int32_t zpx, int32_t zpy, int32_t lo,
                                  int32_t hi, uint32_t* scratch, int64_t tid, int64_t nth) {
  ember::jitops::NdGeom g;
  __builtin_memcpy(&g, geom, sizeof g);
  const int64_t cg = g.C / g.group, mg = g.M / g.group, K = cg * g.kSize(), OW = g.out[2];
  uint32_t* acc = scratch;
  int64_t begin, end;
  libjit::threadRange(g.N * g.M * g.out[0] * g.out[1], tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t oh = r % g.out[1], od = r / g.out[1] % g.out[0], nm = r / g.out[1] / g.out[0];
    const int64_t m = nm % g.M, n = nm / g.M;
    const int8_t* xg = x + (n * g.C + m / mg * cg) * g.inSize();
    const int8_t* wm = w + m * K;
    for (int64_t o = 0; o < OW; ++o)
      acc[o] = static_cast<uint32_t>(bias ? bias[m] : 0);
    for (int64_t ci = 0, k = 0; ci < cg; ++ci)
      for (int64_t kd = 0; kd < g.k[0]; ++kd)
        for (int64_t kh = 0; kh < g.k[1]; ++kh, k += g.k[2]) {
          const int64_t id = od * g.s[0] + kd * g.d[0] - g.p[0];
          const int64_t ih = oh * g.s[1] + kh * g.d[1] - g.p[1];
          if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1])
            continue;
          const int8_t* xrow = xg + ((ci * g.in[0] + id) * g.in[1] + ih) * g.in[2];
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            const int64_t off = kw * g.d[2] - g.p[2];
            int64_t o0, o1;
            ember::jitops::validRange(OW, g.in[2], g.s[2], off, &o0, &o1);
            const uint32_t wv = static_cast<uint32_t>(static_cast<int32_t>(wm[k + kw]));
            for (int64_t o = o0; o < o1; ++o)
              acc[o] += wv * static_cast<uint32_t>(xrow[o * g.s[2] + off] - zpx);
          }
        }
    int8_t* yr = y + r * OW;
    for (int64_t o = 0; o < OW; ++o)
      yr[o] = requant(wrap(acc[o]), Mq[m], Sq[m], zpy, lo, hi);
  }
}

/// Int8 MaxPool and AveragePool over three spatial dimensions (sections 4.4, 4.5), the
/// interpreter's window walk (libjit/Pool3.h): the maximum code (from -128; the result
/// keeps the input's parameters), or requant(sum of (x - zp_x); Mc[n], Sc[n]) with n the
/// taps inside the input, or inside the padded input with `includePad` (n = 0: zp_y).
/// Mc and Sc are indexed by the count. Threads split the planes' output rows.
EMBER_KERNEL void ember_pool3d_i8(int32_t isMax, int32_t includePad, const int8_t* x, int8_t* y,
                                  int64_t planes, const int64_t* geom, const int32_t* Mc,
                                  const int32_t* Sc, int32_t zpx, int32_t zpy, int64_t tid,
                                  int64_t nth) {
  libjit::Pool3 g;
  __builtin_memcpy(&g, geom, sizeof g);
  const int64_t inPlane = g.in[0] * g.in[1] * g.in[2];
  int64_t begin, end;
  libjit::threadRange(planes * g.out[0] * g.out[1], tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    int64_t o[3] = {r / g.out[1] % g.out[0], r % g.out[1], 0};
    const int8_t* xp = x + r / g.out[1] / g.out[0] * inPlane;
    int8_t* yr = y + r * g.out[2];
    for (o[2] = 0; o[2] < g.out[2]; ++o[2]) {
      int32_t m = -128;
      uint32_t acc = 0;
      const libjit::Pool3Counts c = libjit::pool3Window(g, o, [&](int64_t at) {
        m = xp[at] > m ? xp[at] : m;
        acc += static_cast<uint32_t>(xp[at] - zpx);
      });
      const int64_t n = includePad ? c.padded : c.inside;
      yr[o[2]] = isMax   ? static_cast<int8_t>(m)
                 : n > 0 ? requant(wrap(acc), Mc[n], Sc[n], zpy, -128, 127)
                         : static_cast<int8_t>(zpy);
    }
  }
}
