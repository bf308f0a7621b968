// Convolution (2-D; 1-D as height 1) as a blocked, packed GEMM per image and group:
//   Y[m, p] = sum_k W[m, k] * X_col[k, p]   (k = input channel, kernel row, kernel column)
// The weights are packed at compile time (CpuBackend: packConvWeights) into blocks of MR
// output channels, k-major: wp[block][k][i]. At run time each thread takes panels of NR
// output positions, gathers the panel's columns of X_col (im2col, zeros in the padding)
// into its scratch buffer, and runs an MR x NR register-blocked micro-kernel over every
// weight block. A panel row is gathered per output-row segment, so stride-1 rows are
// plain copies. Depthwise convolutions (one input channel per group) use a direct loop.
#include "ConvPanel.h"
#include "Libjit.h"

#include <immintrin.h>

namespace {

using libjit::ConvGeom;
using libjit::packPanel;

/// packPanel<32> of a stride-1 or stride-2 convolution on AVX-512 hosts (the only hosts
/// of the mr8_nr32 kernel): a panel row is two 16-lane vectors, built per run of one
/// output row and half from one masked load (stride 1) or two masked loads whose even
/// lanes a permute joins (stride 2; a masked gather instruction was slower than the
/// scalar packPanel here); masked-off lanes keep the zero padding and never touch memory.
/// The masks and offsets depend on the panel's first position only. Needs KW <= 16.
__attribute__((target("avx512f"))) __attribute__((noinline)) void
packPanel32(const float* x, const ConvGeom& g, int64_t cg, int64_t p0, float* panel) {
  constexpr int NR = 32, kMaxTaps = 16;
  const int64_t P = g.OH * g.OW;
  int nseg = 0;
  int64_t col[NR], len[NR], ih0[NR], iw0[NR];
  for (int64_t j = 0; j < NR && p0 + j < P;) {
    const int64_t p = p0 + j, oh = p / g.OW, ow = p % g.OW;
    int64_t n = g.OW - ow;
    n = n < NR - j ? n : NR - j;
    n = n < P - p ? n : P - p;
    col[nseg] = j;
    len[nseg] = n;
    ih0[nseg] = oh * g.sh - g.ph;
    iw0[nseg] = ow * g.sw - g.pw;
    ++nseg;
    j += n;
  }
  // Per run and kernel column: the lanes inside the input row and the load's start.
  uint32_t lanes[NR][kMaxTaps];
  int64_t start[NR][kMaxTaps];
  __mmask16 evenA[NR][kMaxTaps][2], evenB[NR][kMaxTaps][2];
  for (int s = 0; s < nseg; ++s)
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      // Lane col + j reads input column iw + j * sw.
      const int64_t iw = iw0[s] + kw * g.dw;
      uint32_t m = 0;
      for (int64_t j = 0; j < len[s]; ++j)
        if (iw + j * g.sw >= 0 && iw + j * g.sw < g.W)
          m |= uint32_t(1) << (col[s] + j);
      lanes[s][kw] = m;
      start[s][kw] = iw - col[s] * g.sw;
      // Stride 2: output lane t of half h reads input lane 2t of the 32 floats at
      // start + 32h, i.e. lane 2t of the first vector (t < 8) or 2t - 16 of the second.
      for (int h = 0; h < 2; ++h) {
        uint32_t a = 0, b = 0;
        for (int t = 0; t < 16; ++t)
          if (m >> (16 * h + t) & 1)
            (t < 8 ? a : b) |= uint32_t(1) << (2 * (t & 7));
        evenA[s][kw][h] = static_cast<__mmask16>(a);
        evenB[s][kw][h] = static_cast<__mmask16>(b);
      }
    }
  const __m512 zero = _mm512_setzero_ps();
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  float* row = panel;
  for (int64_t c = 0; c < cg; ++c) {
    const float* xc = x + c * g.H * g.W;
    for (int64_t kh = 0; kh < g.KH; ++kh)
      for (int64_t kw = 0; kw < g.KW; ++kw, row += NR) {
        __m512 lo = zero, hi = zero;
        for (int s = 0; s < nseg; ++s) {
          const int64_t ih = ih0[s] + kh * g.dh;
          if (ih < 0 || ih >= g.H)
            continue;
          const float* at = xc + ih * g.W + start[s][kw];
          const __mmask16 ml = static_cast<__mmask16>(lanes[s][kw]);
          const __mmask16 mh = static_cast<__mmask16>(lanes[s][kw] >> 16);
          if (g.sw == 1) {
            lo = _mm512_mask_loadu_ps(lo, ml, at);
            hi = _mm512_mask_loadu_ps(hi, mh, at + 16);
            continue;
          }
          const __m512 a0 = _mm512_maskz_loadu_ps(evenA[s][kw][0], at);
          const __m512 b0 = _mm512_maskz_loadu_ps(evenB[s][kw][0], at + 16);
          const __m512 a1 = _mm512_maskz_loadu_ps(evenA[s][kw][1], at + 32);
          const __m512 b1 = _mm512_maskz_loadu_ps(evenB[s][kw][1], at + 48);
          lo = _mm512_mask_mov_ps(lo, ml, _mm512_permutex2var_ps(a0, even, b0));
          hi = _mm512_mask_mov_ps(hi, mh, _mm512_permutex2var_ps(a1, even, b1));
        }
        _mm512_storeu_ps(row, lo);
        _mm512_storeu_ps(row + 16, hi);
      }
  }
}

/// acc[MR][NR] = sum_k a[k][MR] (outer) b[k][NR], with NV vectors V of NR / NV floats.
template <int MR, int NV, typename V>
inline void microKernel(int64_t K, const float* __restrict a, const float* __restrict b,
                        float* __restrict out) {
  constexpr int VW = sizeof(V) / sizeof(float);
  V acc[MR][NV];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      acc[i][j] = V{} * 0.f;
  for (int64_t k = 0; k < K; ++k) {
    V bv[NV];
    for (int j = 0; j < NV; ++j)
      __builtin_memcpy(&bv[j], b + k * NV * VW + j * VW, sizeof(V));
    for (int i = 0; i < MR; ++i) {
      const float av = a[k * MR + i];
      for (int j = 0; j < NV; ++j)
        acc[i][j] += av * bv[j];
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      __builtin_memcpy(out + i * NV * VW + j * VW, &acc[i][j], sizeof(V));
}

template <int MR, int NV, typename V>
inline void convGemm(const float* x, const float* wp, const float* bias, float* y,
                     const ConvGeom& g, int64_t N, int32_t act, float lo, float hi, float* scratch,
                     int64_t tid, int64_t nth) {
  constexpr int NR = NV * (sizeof(V) / sizeof(float));
  const int64_t cg = g.C / g.group, mg = g.M / g.group, K = cg * g.KH * g.KW;
  const int64_t P = g.OH * g.OW, panels = (P + NR - 1) / NR, mblocks = (mg + MR - 1) / MR;
  float* panel = scratch + tid * (K * NR + MR * NR);
  float* tile = panel + K * NR;
  const int64_t units = N * g.group * panels;
  const int64_t chunks = libjit::weightChunks(units, mblocks, nth);
  int64_t begin, end;
  libjit::threadRange(units * chunks, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t chunk = item % chunks, unit = item / chunks;
    const int64_t pi = unit % panels, ng = unit / panels, grp = ng % g.group, n = ng / g.group;
    const int64_t p0 = pi * NR;
    const float* xg = x + (n * g.C + grp * cg) * g.H * g.W;
    if (NR == 32 && (g.sw == 1 || g.sw == 2) && g.KW <= 16)
      packPanel32(xg, g, cg, p0, panel);
    else
      packPanel<NR>(xg, g, cg, p0, 0.f, panel);
    const int64_t cols = P - p0 < NR ? P - p0 : NR;
    const int64_t mbEnd = (chunk + 1) * mblocks / chunks;
    for (int64_t mb = chunk * mblocks / chunks; mb < mbEnd; ++mb) {
      microKernel<MR, NV, V>(K, wp + (grp * mblocks + mb) * K * MR, panel, tile);
      const int64_t rows = mg - mb * MR < MR ? mg - mb * MR : MR;
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t m = grp * mg + mb * MR + i;
        const float bv = bias ? bias[m] : 0.f;
        float* yr = y + (n * g.M + m) * P + p0;
        const float* tr = tile + i * NR;
        for (int64_t j = 0; j < cols; ++j)
          yr[j] = libjit::activate(act, tr[j] + bv, lo, hi);
      }
    }
  }
}

typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

} // namespace

#define EMBER_CONV_ARGS                                                                            \
  const float *x, const float *wp, const float *bias, float *y, int64_t N, int64_t C, int64_t H,   \
      int64_t W, int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,            \
      int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t group, int32_t act,      \
      float lo, float hi, float *scratch, int64_t tid, int64_t nth

/// Packed-GEMM convolution for AVX-512 hosts: MR = 8 channels x NR = 32 positions.
EMBER_KERNEL void ember_conv_f32_mr8_nr32(EMBER_CONV_ARGS) {
  const ConvGeom g{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  convGemm<8, 2, V16>(x, wp, bias, y, g, N, act, lo, hi, scratch, tid, nth);
}

/// Packed-GEMM convolution for AVX2 (and narrower) hosts: MR = 6 x NR = 16.
EMBER_KERNEL void ember_conv_f32_mr6_nr16(EMBER_CONV_ARGS) {
  const ConvGeom g{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  convGemm<6, 2, V8>(x, wp, bias, y, g, N, act, lo, hi, scratch, tid, nth);
}

/// Depthwise convolution (C / group == 1; M / group output channels per input channel):
/// one output plane per (image, channel), accumulated tap by tap in the plane.
EMBER_KERNEL void ember_dwconv_f32(const float* x, const float* w, const float* bias, float* y,
                                   int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
                                   int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                   int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                                   int32_t act, float lo, float hi, int64_t tid, int64_t nth) {
  const int64_t mult = M / C;
  int64_t begin, end;
  libjit::threadRange(N * M, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t m = item % M, n = item / M, c = m / mult;
    const float* xc = x + (n * C + c) * H * W;
    const float* wm = w + m * KH * KW;
    float* yp = y + item * OH * OW;
    const float bv = bias ? bias[m] : 0.f;
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* yr = yp + oh * OW;
      for (int64_t ow = 0; ow < OW; ++ow)
        yr[ow] = bv;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * sh - ph + kh * dh;
        if (ih < 0 || ih >= H)
          continue;
        const float* xr = xc + ih * W;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const float f = wm[kh * KW + kw];
          const int64_t off = kw * dw - pw;
          // Output columns whose input column ow * sw + off lies inside [0, W).
          const int64_t lo0 = off >= 0 ? 0 : (-off + sw - 1) / sw;
          const int64_t last = W - 1 - off;
          int64_t hi0 = last < 0 ? 0 : last / sw + 1;
          hi0 = hi0 < OW ? hi0 : OW;
          if (sw == 1)
            for (int64_t ow = lo0; ow < hi0; ++ow)
              yr[ow] += f * xr[ow + off];
          else
            for (int64_t ow = lo0; ow < hi0; ++ow)
              yr[ow] += f * xr[ow * sw + off];
        }
      }
      for (int64_t ow = 0; ow < OW; ++ow)
        yr[ow] = libjit::activate(act, yr[ow], lo, hi);
    }
  }
}
