// The int8 convolutions with AVX512-VNNI (vpdpbusd: 16 int32 lanes, each adding four
// u8 x s8 products), bit-exact with ember_conv_i8 and ember_dwconv_i8 (libjit/Int8.cpp)
// and so with the interpreter: the activations are shifted to unsigned (u = x + 128, the
// same bits with the sign bit flipped; padding is zp_x + 128), so sum u * w = sum (x -
// zp_x) * w + (zp_x + 128) * sum w, and the bias folds -(zp_x + 128) * sum w in (codegen
// (codegen/Int8Packing.cpp) for the packed GEMM, the kernel for the depthwise one).
// vpdpbusd adds without saturation, so every int32 sum wraps as docs/numerics.md
// section 4 requires. The kernels are chosen at compile time only when the host has
// avx512vnni, bw and vl (hostHasAvx512Vnni in Jit.cpp); their target attributes let this
// file compile to bitcode for any x86-64 host.
#include "ConvPanel.h"
#include "Libjit.h"

#if defined(__x86_64__)

#include <immintrin.h>

#define EMBER_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"), always_inline))

namespace {

/// MR output channels (one accumulator each) by NR output positions (the 16 lanes).
constexpr int kMR = 16, kNR = 16;

typedef int8_t B16 __attribute__((vector_size(16)));
typedef int8_t B32 __attribute__((vector_size(32)));
typedef int8_t B64 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));
typedef uint32_t U16 __attribute__((vector_size(64)));
typedef int64_t L16 __attribute__((vector_size(128)));

/// Four panel rows of NR codes as one vpdpbusd operand: byte 4j + t is row t's code of
/// lane j, plus 128 (x ^ 0x80).
EMBER_VNNI inline B64 interleaveQuad(const B16 r[4]) {
  const B32 lo =
      __builtin_shufflevector(r[0], r[1], 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                              17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
  const B32 hi =
      __builtin_shufflevector(r[2], r[3], 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                              17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
#define EMBER_LANE(j) j, 16 + j, 32 + j, 48 + j
  B64 v = __builtin_shufflevector(
      lo, hi, EMBER_LANE(0), EMBER_LANE(1), EMBER_LANE(2), EMBER_LANE(3), EMBER_LANE(4),
      EMBER_LANE(5), EMBER_LANE(6), EMBER_LANE(7), EMBER_LANE(8), EMBER_LANE(9), EMBER_LANE(10),
      EMBER_LANE(11), EMBER_LANE(12), EMBER_LANE(13), EMBER_LANE(14), EMBER_LANE(15));
#undef EMBER_LANE
  return v ^ static_cast<int8_t>(-128);
}

/// The panel rows [cg][taps][NR] (codes, packPanel's order) as vpdpbusd operands in the
/// kernel's order: quad (tap, c4) holds channels 4 c4 .. 4 c4 + 3 of that kernel tap
/// (interleaveQuad); channels past cg are 0x80 (their weights are zero).
EMBER_VNNI inline void interleavePanel(const int8_t* rows, int64_t cg, int64_t taps, int8_t* out) {
  const int64_t C4 = (cg + 3) / 4;
  for (int64_t tap = 0; tap < taps; ++tap)
    for (int64_t c4 = 0; c4 < C4; ++c4) {
      B16 r[4];
      for (int t = 0; t < 4; ++t) {
        const int64_t c = 4 * c4 + t;
        if (c < cg)
          __builtin_memcpy(&r[t], rows + (c * taps + tap) * kNR, sizeof(B16));
        else
          r[t] = B16{} * 0;
      }
      const B64 v = interleaveQuad(r);
      __builtin_memcpy(out + (tap * C4 + c4) * 4 * kNR, &v, sizeof(v));
    }
}

/// The largest kernel height and width of the masked-load gather.
constexpr int kMaxTaps = 8;

/// Lanes [lo, hi) of a mask.
inline uint32_t laneRange(int64_t lo, int64_t hi) {
  const uint64_t upto = (uint64_t(1) << hi) - 1, below = (uint64_t(1) << lo) - 1;
  return static_cast<uint32_t>(upto & ~below);
}

/// Whether planPanel and gatherPanel handle the geometry (else packPanel does).
inline bool maskedGather(const libjit::ConvGeom& g) {
  return (g.sw == 1 || g.sw == 2) && g.KH <= kMaxTaps && g.KW <= kMaxTaps;
}

/// The masked loads of one panel of NR positions (split into runs of one output row):
/// per run and kernel column, the lanes inside the input (and, at stride 2, the bytes of
/// the 32-byte load) and the load's start relative to the input row; per run and kernel
/// row, the row's offset in the plane, -1 outside the input. It depends on the panel's
/// first position only, not on the channel.
struct PanelPlan {
  int nseg;
  uint32_t lanes[kNR][kMaxTaps], bytes[kNR][kMaxTaps];
  int64_t start[kNR][kMaxTaps], rowAt[kNR][kMaxTaps];
};

/// The plan of the panel of positions [p0, p0 + NR).
inline void planPanel(const libjit::ConvGeom& g, int64_t p0, PanelPlan* plan) {
  const int64_t P = g.OH * g.OW;
  int nseg = 0;
  for (int64_t j = 0; j < kNR && p0 + j < P; ++nseg) {
    const int64_t p = p0 + j, ow = p % g.OW;
    int64_t len = g.OW - ow;
    len = len > kNR - j ? kNR - j : len;
    len = len > P - p ? P - p : len;
    const int64_t ih0 = (p / g.OW) * g.sh - g.ph, iw0 = ow * g.sw - g.pw;
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t iw = iw0 + kw * g.dw;
      int64_t lo = iw >= 0 ? 0 : (-iw + g.sw - 1) / g.sw;
      int64_t hi = iw >= g.W ? 0 : (g.W - iw + g.sw - 1) / g.sw;
      hi = hi < len ? hi : len;
      lo = lo < hi ? lo : hi;
      plan->lanes[nseg][kw] = laneRange(j + lo, j + hi);
      plan->bytes[nseg][kw] =
          g.sw == 1 ? plan->lanes[nseg][kw] : laneRange(2 * (j + lo), 2 * (j + hi)) & 0x55555555u;
      plan->start[nseg][kw] = iw - g.sw * j;
    }
    for (int64_t kh = 0; kh < g.KH; ++kh) {
      const int64_t ih = ih0 + kh * g.dh;
      plan->rowAt[nseg][kh] = ih >= 0 && ih < g.H ? ih * g.W : -1;
    }
    j += len;
  }
  plan->nseg = nseg;
}

/// packPanel<NR> and interleavePanel in one pass, for the cg channels of x (planes of
/// `plane` codes), with AVX-512 masked loads: per kernel tap, the runs inside the input
/// (PanelPlan), then per quad of channels four rows of one masked load per run (16 bytes
/// at stride 1; at stride 2, 32 bytes of which vpmovwb keeps the even ones). Lanes
/// outside the input or past the last position keep `pad`. A masked-off byte is never
/// read, so the loads may start outside the input.
EMBER_VNNI inline void gatherPanel(const PanelPlan& plan, const int8_t* x,
                                   const libjit::ConvGeom& g, int64_t cg, int64_t plane, int8_t pad,
                                   int8_t* out) {
  const __m128i padv = _mm_set1_epi8(pad);
  const int64_t C4 = (cg + 3) / 4;
  const uintptr_t x0 = reinterpret_cast<uintptr_t>(x);
  for (int64_t kh = 0; kh < g.KH; ++kh)
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      // The runs of this tap inside the input: offset in the plane and lanes (bytes).
      int64_t at[kNR];
      uint32_t lanes[kNR], bytes[kNR];
      int nrun = 0;
      for (int s = 0; s < plan.nseg; ++s) {
        if (plan.rowAt[s][kh] < 0 || plan.lanes[s][kw] == 0)
          continue;
        at[nrun] = plan.rowAt[s][kh] + plan.start[s][kw];
        lanes[nrun] = plan.lanes[s][kw];
        bytes[nrun] = plan.bytes[s][kw];
        ++nrun;
      }
      for (int64_t c4 = 0; c4 < C4; ++c4) {
        B16 r[4];
        for (int t = 0; t < 4; ++t) {
          const int64_t c = 4 * c4 + t;
          __m128i v = padv;
          const uintptr_t xc = x0 + uintptr_t(c * plane);
          for (int s = 0; s < nrun && c < cg; ++s) {
            const void* p = reinterpret_cast<const void*>(xc + uintptr_t(at[s]));
            if (g.sw == 1) {
              v = _mm_mask_loadu_epi8(v, static_cast<__mmask16>(lanes[s]), p);
            } else {
              const __m256i w = _mm256_maskz_loadu_epi8(static_cast<__mmask32>(bytes[s]), p);
              v = _mm_mask_mov_epi8(v, static_cast<__mmask16>(lanes[s]), _mm256_cvtepi16_epi8(w));
            }
          }
          r[t] = (B16)v;
        }
        const B64 v = interleaveQuad(r);
        __builtin_memcpy(out + ((kh * g.KW + kw) * C4 + c4) * 4 * kNR, &v, sizeof(v));
      }
    }
}

/// Section 3's requant() of 16 accumulators (acc + fold, wrapping) into 16 codes.
EMBER_VNNI inline B16 requantRow(U16 acc, int32_t fold, int32_t M, int32_t S, int32_t zp,
                                 int32_t lo, int32_t hi) {
  const I16 s = (I16)(acc + static_cast<uint32_t>(fold));
  L16 p = __builtin_convertvector(s, L16) * static_cast<int64_t>(M);
  p = ((p + (int64_t(1) << (S - 1))) >> static_cast<int64_t>(S)) + static_cast<int64_t>(zp);
  p = __builtin_elementwise_max(p, (L16{} * 0) + static_cast<int64_t>(lo));
  p = __builtin_elementwise_min(p, (L16{} * 0) + static_cast<int64_t>(hi));
  return __builtin_convertvector(p, B16);
}

/// acc[i] += sum over the K4 quads of panel[q] . a[q][i] (vpdpbusd), then requantized
/// rows [0, rows) of columns [0, cols) into y (row stride P).
EMBER_VNNI inline void vnniBlock(const int8_t* panel, const int8_t* a, int64_t K4,
                                 const int32_t* fold, const int32_t* Mq, const int32_t* Sq,
                                 int8_t* y, int64_t P, int64_t rows, int64_t cols, int32_t zpy,
                                 int32_t lo, int32_t hi) {
  __m512i acc[kMR];
  for (int i = 0; i < kMR; ++i)
    acc[i] = _mm512_setzero_si512();
  for (int64_t q = 0; q < K4; ++q) {
    const __m512i b = _mm512_loadu_si512(panel + q * 4 * kNR);
    const int8_t* aq = a + q * 4 * kMR;
    for (int i = 0; i < kMR; ++i) {
      int32_t w4;
      __builtin_memcpy(&w4, aq + 4 * i, sizeof(w4));
      acc[i] = _mm512_dpbusd_epi32(acc[i], b, _mm512_set1_epi32(w4));
    }
  }
  const __mmask16 keep = static_cast<__mmask16>(laneRange(0, cols));
  for (int64_t i = 0; i < rows; ++i) {
    const B16 out = requantRow((U16)acc[i], fold[i], Mq[i], Sq[i], zpy, lo, hi);
    _mm_mask_storeu_epi8(y + i * P, keep, (__m128i)out);
  }
}

} // namespace

/// ember_conv_i8 with vpdpbusd: wp packed [group][M/MR blocks][K4][MR][4] (MR = 16) where
/// the K4 = KH * KW * ceil(cg / 4) quads are tap-major, quad (tap, c4) holding channels
/// 4 c4 .. 4 c4 + 3 (zero past the group's channels and past its output channels);
/// fold[m] = b[m] - (zp_x + 128) * sum w[m]; scratch holds (K + 4 K4) * 16 bytes per
/// thread (packPanel's rows and the panel).
EMBER_KERNEL __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void
ember_conv_i8_vnni(const int8_t* x, const int8_t* wp, const int32_t* fold, const int32_t* Mq,
                   const int32_t* Sq, int8_t* y, int64_t N, int64_t C, int64_t H, int64_t W,
                   int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                   int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int64_t group,
                   int32_t zpx, int32_t zpy, int32_t lo, int32_t hi, int8_t* scratch, int64_t tid,
                   int64_t nth) {
  // A 1 x 1 convolution of stride 1 without padding reads each plane as one row, so
  // that a panel is one run of positions.
  const bool flat = KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  const libjit::ConvGeom g =
      flat ? libjit::ConvGeom{C, 1, H * W, M, 1, OH * OW, 1, 1, 1, 1, 0, 0, dh, dw, group}
           : libjit::ConvGeom{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  const int64_t cg = C / group, mg = M / group, taps = KH * KW, K = cg * taps;
  const int64_t K4 = taps * ((cg + 3) / 4);
  const int64_t P = OH * OW, panels = (P + kNR - 1) / kNR, mblocks = (mg + kMR - 1) / kMR;
  int8_t* rows = scratch + tid * (K + K4 * 4) * kNR;
  int8_t* panel = rows + K * kNR;
  int64_t begin, end;
  const int64_t units = N * group * panels;
  const int64_t chunks = libjit::weightChunks(units, mblocks, nth);
  libjit::threadRange(units * chunks, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t chunk = item % chunks, unit = item / chunks;
    const int64_t pi = unit % panels, ng = unit / panels, grp = ng % group, n = ng / group;
    const int64_t p0 = pi * kNR;
    if (maskedGather(g)) {
      PanelPlan plan;
      planPanel(g, p0, &plan);
      gatherPanel(plan, x + (n * C + grp * cg) * H * W, g, cg, H * W, static_cast<int8_t>(zpx),
                  panel);
    } else {
      libjit::packPanel<kNR>(x + (n * C + grp * cg) * H * W, g, cg, p0, static_cast<int8_t>(zpx),
                             rows);
      interleavePanel(rows, cg, taps, panel);
    }
    const int64_t cols = P - p0 < kNR ? P - p0 : kNR;
    const int64_t mbEnd = (chunk + 1) * mblocks / chunks;
    for (int64_t mb = chunk * mblocks / chunks; mb < mbEnd; ++mb) {
      const int64_t m0 = grp * mg + mb * kMR;
      const int64_t nrows = mg - mb * kMR < kMR ? mg - mb * kMR : kMR;
      vnniBlock(panel, wp + (grp * mblocks + mb) * K4 * 4 * kMR, K4, fold + m0, Mq + m0, Sq + m0,
                y + (n * M + m0) * P + p0, P, nrows, cols, zpy, lo, hi);
    }
  }
}

/// The portable depthwise kernel (libjit/Int8.cpp), for the geometries the VNNI one does
/// not handle.
EMBER_KERNEL void ember_dwconv_i8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                  const int32_t* Mq, const int32_t* Sq, int8_t* y, int64_t N,
                                  int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,
                                  int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                                  int64_t ph, int64_t pw, int64_t dh, int64_t dw, int32_t zpx,
                                  int32_t zpy, int32_t lo, int32_t hi, int32_t* scratch,
                                  int64_t tid, int64_t nth);

/// Bytes [lo, hi) of a 64-byte mask (0 <= lo, hi <= 64).
inline uint64_t byteRange(int64_t lo, int64_t hi) {
  if (hi <= lo)
    return 0;
  const uint64_t upto = hi >= 64 ? ~uint64_t(0) : (uint64_t(1) << hi) - 1;
  return upto & ~((uint64_t(1) << lo) - 1);
}

/// The largest number of weight quads (KH * ceil(KW / 4)) of ember_dwconv_i8_vnni.
constexpr int kMaxQuads = 64;

/// ember_dwconv_i8 with vpdpbusd (same arguments). Lanes are 16 consecutive positions of
/// one output row; per kernel row and quad of kernel columns, one masked 64-byte load of
/// the input row (codes outside the input read as zp_x, so they add nothing to the
/// sum of (x - zp_x) * w), a vpermd
/// and a vpshufb put the four taps of each lane side by side (byte 4j + t = input column
/// j * sw + t * dw of the load), and vpdpbusd adds them times the quad's weights (zero
/// past KW). fold = b[m] - (zp_x + 128) * sum w[m] is computed here, per channel. The
/// windows fit when sw + dw <= 5; other geometries go to ember_dwconv_i8 (which uses the
/// OW int32 of scratch per thread).
EMBER_KERNEL __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) void
ember_dwconv_i8_vnni(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* Mq,
                     const int32_t* Sq, int8_t* y, int64_t N, int64_t C, int64_t H, int64_t W,
                     int64_t M, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                     int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw, int32_t zpx,
                     int32_t zpy, int32_t lo, int32_t hi, int32_t* scratch, int64_t tid,
                     int64_t nth) {
  const int64_t QW = (KW + 3) / 4;
  if (sw < 1 || dw < 1 || sw + dw > 5 || KH * QW > kMaxQuads) {
    ember_dwconv_i8(x, w, bias, Mq, Sq, y, N, C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw,
                    zpx, zpy, lo, hi, scratch, tid, nth);
    return;
  }
  int32_t dwords[16];
  int8_t bytes[64];
  for (int l = 0; l < 4; ++l)
    for (int i = 0; i < 4; ++i) {
      dwords[4 * l + i] = static_cast<int32_t>(l * sw + i);
      for (int t = 0; t < 4; ++t)
        bytes[16 * l + 4 * i + t] = static_cast<int8_t>(i * sw + t * dw);
    }
  const __m512i windows = _mm512_loadu_si512(dwords), taps = _mm512_loadu_si512(bytes);
  const __m512i zp = _mm512_set1_epi8(static_cast<char>(zpx));
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(-128));
  const int64_t mult = M / C;
  int32_t quads[kMaxQuads];
  int64_t begin, end;
  libjit::threadRange(N * M, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t m = item % M, n = item / M;
    const uintptr_t xc = reinterpret_cast<uintptr_t>(x + (n * C + m / mult) * H * W);
    const int8_t* wm = w + m * KH * KW;
    uint32_t sum = 0;
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t q = 0; q < QW; ++q) {
        uint32_t quad = 0;
        for (int64_t t = 0; t < 4 && 4 * q + t < KW; ++t) {
          const int8_t v = wm[kh * KW + 4 * q + t];
          quad |= uint32_t(uint8_t(v)) << (8 * t);
          sum += static_cast<uint32_t>(int32_t(v));
        }
        quads[kh * QW + q] = static_cast<int32_t>(quad);
      }
    const int32_t fold = static_cast<int32_t>(static_cast<uint32_t>(bias ? bias[m] : 0) -
                                              (static_cast<uint32_t>(zpx) + 128u) * sum);
    int8_t* yp = y + item * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow0 = 0; ow0 < OW; ow0 += kNR) {
        __m512i acc = _mm512_setzero_si512();
        for (int64_t q = 0; q < QW; ++q) {
          const int64_t s0 = ow0 * sw - pw + 4 * q * dw;
          const __mmask64 inside = byteRange(s0 < 0 ? -s0 : 0, W - s0 < 64 ? W - s0 : 64);
          for (int64_t kh = 0; kh < KH; ++kh) {
            // A row outside the input reads as zp_x too: it adds (zp_x + 128) * w, which
            // the fold takes away.
            const int64_t ih = oh * sh - ph + kh * dh;
            const bool rowInside = ih >= 0 && ih < H;
            const void* at = reinterpret_cast<const void*>(xc + uintptr_t(ih * W + s0));
            __m512i v = _mm512_mask_loadu_epi8(zp, rowInside ? inside : 0, at);
            v = _mm512_shuffle_epi8(_mm512_permutexvar_epi32(windows, v), taps);
            acc = _mm512_dpbusd_epi32(acc, _mm512_xor_si512(v, flip),
                                      _mm512_set1_epi32(quads[kh * QW + q]));
          }
        }
        const B16 out = requantRow((U16)acc, fold, Mq[m], Sq[m], zpy, lo, hi);
        const int64_t cols = OW - ow0 < kNR ? OW - ow0 : kNR;
        _mm_mask_storeu_epi8(yp + oh * OW + ow0, static_cast<__mmask16>(laneRange(0, cols)),
                             (__m128i)out);
      }
  }
}

#endif // __x86_64__
