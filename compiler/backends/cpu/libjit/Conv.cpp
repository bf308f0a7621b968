// Convolution (2-D; 1-D as height 1) as a blocked, packed GEMM per image and group:
//   Y[m, p] = sum_k W[m, k] * X_col[k, p]   (k = input channel, kernel row, kernel column)
// The weights are packed at compile time (CpuBackend: packConvWeights) into blocks of MR
// output channels, k-major: wp[block][k][i]. At run time each thread takes panels of NR
// output positions, gathers the panel's columns of X_col (im2col, zeros in the padding)
// into its scratch buffer, and runs an MR x NR register-blocked micro-kernel over every
// weight block. A panel row is gathered per output-row segment, so stride-1 rows are
// plain copies. Depthwise convolutions (one input channel per group) run on the stride
// phases of a padded copy of each plane (ConvScratch.h), a vector of positions per tap.
#include "ConvPanel.h"
#include "ConvScratch.h"
#include "Libjit.h"
#include "Phases.h"
#include "SumTile.h"

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

/// out[MR][NR] = sum_k a[k][MR] (outer) b[k][NR], with NV vectors V of NR / NV floats;
/// row k of a starts at a + k * lda, of b at b + k * ldb (MR and NR when packed).
template <int MR, int NV, typename V>
inline void microKernel(int64_t K, const float* __restrict a, int64_t lda,
                        const float* __restrict b, int64_t ldb, float* __restrict out) {
  constexpr int VW = sizeof(V) / sizeof(float);
  V acc[MR][NV];
  libjit::sumTile<MR, NV, V>(K, a, 1, lda, b, ldb, acc);
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      __builtin_memcpy(out + i * NV * VW + j * VW, &acc[i][j], sizeof(V));
}

/// microKernel over a whole MR x NR tile, its sums plus bias[i] (none when null), plus
/// the residual rows r + i * ldy (a fused Add; none when null) and the activation stored
/// straight from the registers into rows y + i * ldy (r may be y: each element is read
/// before it is written).
template <int MR, int NV, typename V>
inline void microKernelStore(int64_t K, const float* __restrict a, const float* __restrict b,
                             int64_t ldb, const float* bias, const float* r, float* y, int64_t ldy,
                             int32_t act, float lo, float hi) {
  constexpr int VW = sizeof(V) / sizeof(float);
  // The tile's rows are ldy floats apart: too many streams for the hardware prefetcher,
  // so the residual's and the output's lines are asked for now, to arrive during the sum.
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV * VW; j += 16) {
      if (r)
        __builtin_prefetch(r + i * ldy + j, 0, 3);
      if (r != y)
        __builtin_prefetch(y + i * ldy + j, 1, 3);
    }
  V acc[MR][NV];
  // The sums start from the bias: an addition less per vector (short sums of few input
  // channels spend a large share of a tile in its epilogue).
  libjit::sumTile<MR, NV, V>(K, a, 1, MR, b, ldb, acc, bias);
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) {
      if (r) {
        V rv;
        __builtin_memcpy(&rv, r + i * ldy + j * VW, sizeof(V));
        acc[i][j] += rv;
      }
      libjit::activateV(act, acc[i][j], lo, hi);
      __builtin_memcpy(y + i * ldy + j * VW, &acc[i][j], sizeof(V));
    }
}

/// The epilogue of one output element: the sum plus the bias, plus the residual (a fused
/// Add, in the order of the unfused graph) when there is one, then the activation.
inline float finish(float sum, float bias, const float* r, int64_t at, int32_t act, float lo,
                    float hi) {
  float v = sum + bias;
  if (r)
    v += r[at];
  return libjit::activate(act, v, lo, hi);
}

template <int MR, int NV, typename V>
inline void convGemm(const float* x, const float* wp, const float* bias, float* y,
                     const ConvGeom& g, int64_t N, int32_t act, float lo, float hi,
                     const float* addend, float* scratch, int64_t tid, int64_t nth) {
  constexpr int NR = NV * (sizeof(V) / sizeof(float));
  const int64_t cg = g.C / g.group, mg = g.M / g.group, K = cg * g.KH * g.KW;
  const int64_t P = g.OH * g.OW, panels = (P + NR - 1) / NR, mblocks = (mg + MR - 1) / MR;
  float* panel = scratch;
  float* tile = panel + K * NR;
  const bool pointwise = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 &&
                         g.pw == 0 && g.OH == g.H && g.OW == g.W;
  const int64_t units = N * g.group * panels;
  const int64_t chunks = libjit::weightChunks(units, mblocks, nth);
  int64_t begin, end;
  libjit::threadRange(units * chunks, tid, nth, &begin, &end);
  // The unit whose panel is in the scratch: a part of several chunks of one unit (a node
  // cut into more parts than it has units) packs it once.
  int64_t packed = -1;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t chunk = item % chunks, unit = item / chunks;
    const int64_t pi = unit % panels, ng = unit / panels, grp = ng % g.group, n = ng / g.group;
    const int64_t p0 = pi * NR;
    const float* xg = x + (n * g.C + grp * cg) * g.H * g.W;
    const int64_t cols = P - p0 < NR ? P - p0 : NR;
    // A full panel of a pointwise convolution (1x1, stride 1, no padding) is NR
    // consecutive positions of each input plane: the micro-kernel reads them in place.
    const bool inPlace = pointwise && cols == NR;
    const float* b = inPlace ? xg + p0 : panel;
    const int64_t ldb = inPlace ? P : NR;
    if (unit != packed && !inPlace && pointwise) {
      // The last, partial panel of a pointwise layer: its columns of each plane, zeros
      // after them (a plain loop: the gathers below would be most of the instance's code).
      for (int64_t k = 0; k < K; ++k)
#pragma clang loop vectorize(disable) unroll(disable)
        for (int64_t j = 0; j < NR; ++j)
          panel[k * NR + j] = j < cols ? xg[k * P + p0 + j] : 0.f;
    } else if (unit != packed && !inPlace) {
      if (NR == 32 && (g.sw == 1 || g.sw == 2) && g.KW <= 16)
        packPanel32(xg, g, cg, p0, panel);
      else
        packPanel<NR>(xg, g, cg, p0, 0.f, panel);
    }
    packed = unit;
    const int64_t mbEnd = (chunk + 1) * mblocks / chunks;
    for (int64_t mb = chunk * mblocks / chunks; mb < mbEnd; ++mb) {
      const int64_t rows = mg - mb * MR < MR ? mg - mb * MR : MR;
      const int64_t m0 = grp * mg + mb * MR;
      if (rows == MR && cols == NR) {
        const int64_t at = (n * g.M + m0) * P + p0;
        microKernelStore<MR, NV, V>(K, wp + (grp * mblocks + mb) * K * MR, b, ldb,
                                    bias ? bias + m0 : nullptr, addend ? addend + at : nullptr,
                                    y + at, P, act, lo, hi);
        continue;
      }
      microKernel<MR, NV, V>(K, wp + (grp * mblocks + mb) * K * MR, MR, b, ldb, tile);
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t m = grp * mg + mb * MR + i;
        const float bv = bias ? bias[m] : 0.f;
        const int64_t at = (n * g.M + m) * P + p0;
        const float* tr = tile + i * NR;
#pragma clang loop vectorize(disable) unroll(disable)
        for (int64_t j = 0; j < cols; ++j)
          y[at + j] = finish(tr[j], bv, addend, at + j, act, lo, hi);
      }
    }
  }
}

/// The same GEMM with the roles swapped, for layers with few output positions (the 7x7
/// and 14x14 planes of a CNN's last stages, where panels of NR positions would be partly
/// empty): the vectors run over NR output channels (weights packed in blocks of NR
/// channels, k-major) and the broadcasts over MR positions. Each thread gathers the whole
/// X_col of its image and group once, in the 32-position panels of packPanel32 (AVX-512
/// hosts only), and runs every MR-position slice of them against each of its weight
/// blocks. Pointwise layers are gathered too: broadcasts from the input planes in place
/// (rows P floats apart) made MobileNetV2's 7x7 layers about 15 % slower.
template <int MR, int NV, typename V>
inline void convGemmT(const float* x, const float* wp, const float* bias, float* y,
                      const ConvGeom& g, int64_t N, int32_t act, float lo, float hi,
                      const float* addend, float* scratch, int64_t tid, int64_t nth) {
  constexpr int NR = NV * (sizeof(V) / sizeof(float)), GW = 32;
  static_assert(GW % MR == 0, "a slice lies inside one gathered panel");
  const int64_t cg = g.C / g.group, mg = g.M / g.group, K = cg * g.KH * g.KW;
  const int64_t P = g.OH * g.OW, slices = (P + MR - 1) / MR, panels = (P + GW - 1) / GW;
  const int64_t mblocks = (mg + NR - 1) / NR;
  // Slices of MR positions, k-major and contiguous ([slice][k][MR]), so that a slice
  // and a weight block stay in the L2 cache together; each panel of GW positions is
  // gathered into `panel` and split into its slices.
  static_assert(MR == ember::jitops::kConvTSlice && GW == ember::jitops::kConvTPanel && NR == 32,
                "the scratch layout of ConvScratch.h");
  float* cols = scratch;
  float* panel = cols + K * slices * MR;
  float* tile = panel + K * GW;
  int64_t begin, end;
  libjit::threadRange(N * g.group * mblocks, tid, nth, &begin, &end);
  int64_t gathered = -1; // the (image, group) whose X_col is in scratch
  for (int64_t item = begin; item < end; ++item) {
    const int64_t mb = item % mblocks, ng = item / mblocks, grp = ng % g.group, n = ng / g.group;
    if (ng != gathered) {
      const float* xg = x + (n * g.C + grp * cg) * g.H * g.W;
      for (int64_t pi = 0; pi < panels; ++pi) {
        if ((g.sw == 1 || g.sw == 2) && g.KW <= 16)
          packPanel32(xg, g, cg, pi * GW, panel);
        else
          packPanel<GW>(xg, g, cg, pi * GW, 0.f, panel);
        for (int64_t s = 0; s < GW / MR && pi * (GW / MR) + s < slices; ++s) {
          float* dst = cols + (pi * (GW / MR) + s) * K * MR;
          for (int64_t k = 0; k < K; ++k)
            for (int64_t i = 0; i < MR; ++i)
              dst[k * MR + i] = panel[k * GW + s * MR + i];
        }
      }
      gathered = ng;
    }
    const int64_t chans = mg - mb * NR < NR ? mg - mb * NR : NR;
    const int64_t m0 = grp * mg + mb * NR;
    for (int64_t si = 0; si < slices; ++si) {
      const int64_t p0 = si * MR, rows = P - p0 < MR ? P - p0 : MR;
      microKernel<MR, NV, V>(K, cols + si * K * MR, MR, wp + (grp * mblocks + mb) * K * NR, NR,
                             tile);
      for (int64_t c = 0; c < chans; ++c) {
        const float bv = bias ? bias[m0 + c] : 0.f;
        const int64_t at = (n * g.M + m0 + c) * P + p0;
        for (int64_t i = 0; i < rows; ++i)
          y[at + i] = finish(tile[i * NR + c], bv, addend, at + i, act, lo, hi);
      }
    }
  }
}

typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

} // namespace

/// Packed-GEMM convolution for AVX-512 hosts: MR = 8 channels x NR = 32 positions.
EMBER_KERNEL void ember_conv_f32_mr8_nr32(EMBER_CONV_ARGS) {
  const ConvGeom g{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  convGemm<8, 2, V16>(x, wp, bias, y, g, N, act, lo, hi, addend, scratch, tid, nth);
}

/// Packed-GEMM convolution for AVX2 (and narrower) hosts: MR = 6 x NR = 16.
EMBER_KERNEL void ember_conv_f32_mr6_nr16(EMBER_CONV_ARGS) {
  const ConvGeom g{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  convGemm<6, 2, V8>(x, wp, bias, y, g, N, act, lo, hi, addend, scratch, tid, nth);
}

/// Channel-vectorised convolution for AVX-512 hosts: MR = 8 positions x NR = 32 channels.
/// Scratch per thread: jitops::convTScratchFloats(K, P) floats.
EMBER_KERNEL void ember_conv_f32_t_mr8_nr32(EMBER_CONV_ARGS) {
  const ConvGeom g{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  convGemmT<8, 2, V16>(x, wp, bias, y, g, N, act, lo, hi, addend, scratch, tid, nth);
}

/// Depthwise convolution (C / group == 1; M / group output channels per input channel),
/// one output plane per (image, channel): the input plane is copied into its stride
/// phases (ConvScratch.h), where every kernel tap of a run of kDwStep output positions,
/// flattened over the phase width, is one contiguous vector load; the taps accumulate in
/// a register and each position is stored once. The positions of the phase's spare
/// columns (Wq - OW per row) are computed and dropped.
EMBER_KERNEL void ember_dwconv_f32(EMBER_DWCONV_ARGS) {
  using ember::jitops::kDwMaxTaps;
  using ember::jitops::kDwStep;
  const ember::jitops::DwGeom g = ember::jitops::dwGeom(OH, OW, KH, KW, sh, sw, dh, dw);
  float* phases = scratch;
  float* out = phases + g.phases * g.plane;
  const int64_t mult = M / C;
  int64_t begin, end;
  libjit::threadRange(N * M, tid, nth, &begin, &end);
  int64_t built = -1; // the (image, channel) whose phases are in scratch
  for (int64_t item = begin; item < end; ++item) {
    const int64_t m = item % M, n = item / M, c = m / mult, plane = n * C + c;
    if (plane != built) {
      libjit::buildPhases(x + plane * H * W, H, W, KH, KW, sh, sw, ph, pw, dh, dw, g, 0.f, phases);
      built = plane;
    }
    const float* wm = w + m * KH * KW;
    const float bv = bias ? bias[m] : 0.f;
    // The taps' weights as vectors, in registers once the tap loops are unrolled.
    V16 wv[kDwMaxTaps];
    const bool hoisted = KH * KW <= kDwMaxTaps;
    for (int64_t t = 0; t < KH * KW && hoisted; ++t)
      wv[t] = V16{} * 0.f + wm[t];
    for (int64_t q = 0; q < g.outLen; q += kDwStep) {
      V16 acc = V16{} + bv;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t a = (kh * dh) % sh, i0 = (kh * dh) / sh;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t b = (kw * dw) % sw, j0 = (kw * dw) / sw;
          V16 v;
          __builtin_memcpy(&v, phases + (a * sw + b) * g.plane + i0 * g.Wq + j0 + q, sizeof v);
          acc += (hoisted ? wv[kh * KW + kw] : V16{} * 0.f + wm[kh * KW + kw]) * v;
        }
      }
      __builtin_memcpy(out + q, &acc, sizeof acc);
    }
    libjit::storeRows(out, g.Wq, OH, OW, act, lo, hi, y + item * OH * OW);
  }
}
