// The int8 convolutions and Gemm on x86 quads of bytes, bit-exact with ember_conv_i8,
// ember_dwconv_i8 and ember_gemm_i8 (libjit/Int8.cpp) and so with the interpreter. The
// activations are shifted to unsigned (u = x + 128, the same bits with the sign bit
// flipped; padding is zp_x + 128), so sum u * w = sum (x - zp_x) * w + (zp_x + 128) *
// sum w, and the bias folds -(zp_x + 128) * sum w in (codegen/Int8Packing.cpp, or the
// depthwise kernel itself). Each int32 lane adds the products of four consecutive
// reduction values ("a quad"), in one of three ways (docs/compiler/cpu-kernels.md, "Int8 kernels"):
//   kVnni     vpdpbusd (AVX512-VNNI): u8 x s8, four products per lane and instruction;
//   kBw       AVX512-BW: the quad split into its even and odd bytes as 16-bit lanes
//             (vpandd / vpsrlw), two vpmaddwd (s16 x s16 -> s32 pairs) and two vpaddd;
//             the weights come packed as those 16-bit pairs;
//   kAvx2     the same on 256-bit registers (a 16-lane vector as two halves).
// Every product u * w fits 16 bits signed and every pair sum 32 bits, so the three
// give the same int32 sums modulo 2^32 (vpdpbusd adds without saturation), which is
// what docs/numerics.md section 4 requires. The kernel is chosen at code generation
// (int8Isa() in Jit.cpp: the host's best, or $EMBER_CPU_INT8_ISA); the target
// attributes below only let this file compile to bitcode for any x86-64 host (the JIT
// gives every function the host's features).
#include "ConvPanel.h"
#include "ConvScratch.h"
#include "Libjit.h"

#if defined(__x86_64__)

#include <immintrin.h>

#define EMBER_X86_TARGET "avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni"
#define EMBER_VNNI __attribute__((target(EMBER_X86_TARGET), always_inline))

namespace {

/// MR output channels (one accumulator each) by NR output positions (the 16 lanes).
constexpr int kMR = 16, kNR = 16;

typedef int8_t B16 __attribute__((vector_size(16)));
typedef int8_t B32 __attribute__((vector_size(32)));
typedef int8_t B64 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));
typedef uint32_t U16 __attribute__((vector_size(64)));
typedef int64_t L16 __attribute__((vector_size(128)));

/// a's lanes, then b's: one vector of twice the lanes.
EMBER_VNNI inline B32 concat(B16 a, B16 b) {
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31);
}
EMBER_VNNI inline B64 concat(B32 a, B32 b) {
  return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
                                 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
                                 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63);
}

/// Four panel rows of NR codes as one vpdpbusd operand: byte 4j + t is row t's code of
/// lane j, plus 128 (x ^ 0x80).
EMBER_VNNI inline B64 interleaveQuad(const B16 r[4]) {
  const B32 lo = concat(r[0], r[1]);
  const B32 hi = concat(r[2], r[3]);
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

/// requantRow with one multiplier, shift and fold per lane (a Gemm's lanes are output
/// channels).
EMBER_VNNI inline B16 requantLanes(U16 acc, const int32_t* fold, const int32_t* M, const int32_t* S,
                                   int32_t zp, int32_t lo, int32_t hi) {
  U16 f;
  I16 m, sh;
  __builtin_memcpy(&f, fold, sizeof f);
  __builtin_memcpy(&m, M, sizeof m);
  __builtin_memcpy(&sh, S, sizeof sh);
  const L16 s = __builtin_convertvector((I16)(acc + f), L16);
  const L16 s64 = __builtin_convertvector(sh, L16);
  L16 p = s * __builtin_convertvector(m, L16);
  p = ((p + ((L16{} * 0 + 1) << (s64 - 1))) >> s64) + static_cast<int64_t>(zp);
  p = __builtin_elementwise_max(p, (L16{} * 0) + static_cast<int64_t>(lo));
  p = __builtin_elementwise_min(p, (L16{} * 0) + static_cast<int64_t>(hi));
  return __builtin_convertvector(p, B16);
}

/// The three ways of adding a quad's four products to a lane (see the top of the file).
enum Isa { kVnni, kBw, kAvx2 };

/// The first `cols` (<= 16) codes of `out` to y.
EMBER_VNNI inline void storeCodes(int8_t* y, B16 out, int64_t cols) {
  if (cols == kNR)
    __builtin_memcpy(y, &out, sizeof out);
  else
    for (int64_t j = 0; j < cols; ++j)
      y[j] = out[j];
}

/// The weight bytes of one quad of one output channel in the kernel's packing: four
/// codes (kVnni) or the 16-bit pairs (w0, w2) and (w1, w3) (kBw, kAvx2).
constexpr int64_t quadBytes(Isa isa) {
  return isa == kVnni ? 4 : 8;
}

/// acc[i] += sum over the K4 quads of panel[q] . a[q][i], then requantized rows [0,
/// rows) of columns [0, cols) into y (row stride P); 512-bit registers (kVnni, kBw).
template <Isa I>
EMBER_VNNI inline void block512(const int8_t* panel, const int8_t* a, int64_t K4,
                                const int32_t* fold, const int32_t* Mq, const int32_t* Sq,
                                int8_t* y, int64_t P, int64_t rows, int64_t cols, int32_t zpy,
                                int32_t lo, int32_t hi) {
  __m512i acc[kMR];
  for (int i = 0; i < kMR; ++i)
    acc[i] = _mm512_setzero_si512();
  const __m512i evenBytes = _mm512_set1_epi32(0x00FF00FF);
  for (int64_t q = 0; q < K4; ++q) {
    const __m512i b = _mm512_loadu_si512(panel + q * 4 * kNR);
    const int8_t* aq = a + q * quadBytes(I) * kMR;
    if constexpr (I == kVnni) {
      for (int i = 0; i < kMR; ++i) {
        int32_t w4;
        __builtin_memcpy(&w4, aq + 4 * i, sizeof(w4));
        acc[i] = _mm512_dpbusd_epi32(acc[i], b, _mm512_set1_epi32(w4));
      }
    } else {
      const __m512i even = _mm512_and_si512(b, evenBytes), odd = _mm512_srli_epi16(b, 8);
      for (int i = 0; i < kMR; ++i) {
        int32_t w[2];
        __builtin_memcpy(w, aq + 8 * i, sizeof(w));
        acc[i] = _mm512_add_epi32(acc[i], _mm512_madd_epi16(even, _mm512_set1_epi32(w[0])));
        acc[i] = _mm512_add_epi32(acc[i], _mm512_madd_epi16(odd, _mm512_set1_epi32(w[1])));
      }
    }
  }
  const __mmask16 keep = static_cast<__mmask16>(laneRange(0, cols));
  for (int64_t i = 0; i < rows; ++i) {
    const B16 out = requantRow((U16)acc[i], fold[i], Mq[i], Sq[i], zpy, lo, hi);
    _mm_mask_storeu_epi8(y + i * P, keep, (__m128i)out);
  }
}

/// block512<kVnni> over two panels (32 positions): eight output channels at a time, so
/// that each broadcast weight quad feeds two vpdpbusd (16 accumulators); cols1 > 0.
EMBER_VNNI inline void blockVnniPair(const int8_t* panel0, const int8_t* panel1, const int8_t* a,
                                     int64_t K4, const int32_t* fold, const int32_t* Mq,
                                     const int32_t* Sq, int8_t* y, int64_t P, int64_t rows,
                                     int64_t cols0, int64_t cols1, int32_t zpy, int32_t lo,
                                     int32_t hi) {
  constexpr int R = 8;
  const __mmask16 keep0 = static_cast<__mmask16>(laneRange(0, cols0));
  const __mmask16 keep1 = static_cast<__mmask16>(laneRange(0, cols1));
  for (int64_t r0 = 0; r0 < rows; r0 += R) {
    __m512i acc[R][2];
    for (int i = 0; i < R; ++i)
      acc[i][0] = acc[i][1] = _mm512_setzero_si512();
    for (int64_t q = 0; q < K4; ++q) {
      const __m512i b0 = _mm512_loadu_si512(panel0 + q * 4 * kNR);
      const __m512i b1 = _mm512_loadu_si512(panel1 + q * 4 * kNR);
      const int8_t* aq = a + (q * kMR + r0) * 4;
      for (int i = 0; i < R; ++i) {
        int32_t w4;
        __builtin_memcpy(&w4, aq + 4 * i, sizeof(w4));
        const __m512i wv = _mm512_set1_epi32(w4);
        acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], b0, wv);
        acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], b1, wv);
      }
    }
    for (int64_t i = 0; i < R && r0 + i < rows; ++i) {
      const int64_t r = r0 + i;
      const B16 out0 = requantRow((U16)acc[i][0], fold[r], Mq[r], Sq[r], zpy, lo, hi);
      const B16 out1 = requantRow((U16)acc[i][1], fold[r], Mq[r], Sq[r], zpy, lo, hi);
      _mm_mask_storeu_epi8(y + r * P, keep0, (__m128i)out0);
      _mm_mask_storeu_epi8(y + r * P + kNR, keep1, (__m128i)out1);
    }
  }
}

/// block512<kBw> on 256-bit registers: each 16-lane panel vector as two halves, four
/// output channels at a time (8 accumulators).
EMBER_VNNI inline void blockAvx2(const int8_t* panel, const int8_t* a, int64_t K4,
                                 const int32_t* fold, const int32_t* Mq, const int32_t* Sq,
                                 int8_t* y, int64_t P, int64_t rows, int64_t cols, int32_t zpy,
                                 int32_t lo, int32_t hi) {
  constexpr int64_t R = 4;
  const __m256i evenBytes = _mm256_set1_epi32(0x00FF00FF);
  for (int64_t r0 = 0; r0 < rows; r0 += R) {
    __m256i acc[R][2];
    for (int64_t i = 0; i < R; ++i)
      acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    for (int64_t q = 0; q < K4; ++q) {
      const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + q * 64));
      const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + q * 64 + 32));
      const __m256i e0 = _mm256_and_si256(b0, evenBytes), o0 = _mm256_srli_epi16(b0, 8);
      const __m256i e1 = _mm256_and_si256(b1, evenBytes), o1 = _mm256_srli_epi16(b1, 8);
      const int8_t* aq = a + (q * kMR + r0) * 8;
      for (int64_t i = 0; i < R; ++i) {
        int32_t w[2];
        __builtin_memcpy(w, aq + 8 * i, sizeof(w));
        const __m256i we = _mm256_set1_epi32(w[0]), wo = _mm256_set1_epi32(w[1]);
        acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(e0, we));
        acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(o0, wo));
        acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(e1, we));
        acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(o1, wo));
      }
    }
    for (int64_t i = 0; i < R && r0 + i < rows; ++i) {
      U16 v;
      __builtin_memcpy(&v, &acc[i][0], 32);
      __builtin_memcpy(reinterpret_cast<char*>(&v) + 32, &acc[i][1], 32);
      const int64_t r = r0 + i;
      storeCodes(y + r * P, requantRow(v, fold[r], Mq[r], Sq[r], zpy, lo, hi), cols);
    }
  }
}

/// ember_conv_i8 on quads (the kernels ember_conv_i8_vnni, _avx512bw, _avx2 below).
template <Isa I>
EMBER_VNNI inline void
convQuads(const int8_t* x, const int8_t* wp, const int32_t* fold, const int32_t* Mq,
          const int32_t* Sq, int8_t* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
          int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,
          int64_t pw, int64_t dh, int64_t dw, int64_t group, int32_t zpx, int32_t zpy, int32_t lo,
          int32_t hi, int8_t* scratch, int64_t tid, int64_t nth) {
  // A 1 x 1 convolution of stride 1 without padding reads each plane as one row, so
  // that a panel is one run of positions.
  const bool flat = KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  const libjit::ConvGeom g =
      flat ? libjit::ConvGeom{C, 1, H * W, M, 1, OH * OW, 1, 1, 1, 1, 0, 0, dh, dw, group}
           : libjit::ConvGeom{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group};
  const int64_t cg = C / group, mg = M / group, taps = KH * KW, K = cg * taps;
  const int64_t K4 = taps * ((cg + 3) / 4);
  const int64_t P = OH * OW, panels = (P + kNR - 1) / kNR, mblocks = (mg + kMR - 1) / kMR;
  // vnni takes panels in pairs (blockVnniPair), the others one by one.
  constexpr int64_t pair = I == kVnni ? 2 : 1;
  int8_t* rows = scratch;
  int8_t* panel = rows + K * kNR;
  int64_t begin, end;
  const int64_t pairs = (panels + pair - 1) / pair, units = N * group * pairs;
  const int64_t chunks = libjit::weightChunks(units, mblocks, nth);
  libjit::threadRange(units * chunks, tid, nth, &begin, &end);
  // The unit whose panels are in the scratch: a part of several chunks of one unit (a
  // node cut into more parts than it has units) gathers them once.
  int64_t gathered = -1;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t chunk = item % chunks, unit = item / chunks;
    const int64_t pi = unit % pairs, ng = unit / pairs, grp = ng % group, n = ng / group;
    const int8_t* xg = x + (n * C + grp * cg) * H * W;
    int64_t cols[pair];
    for (int64_t s = 0; s < pair; ++s) {
      const int64_t p0 = (pi * pair + s) * kNR;
      cols[s] = p0 >= P ? 0 : (P - p0 < kNR ? P - p0 : kNR);
      int8_t* ps = panel + s * K4 * 4 * kNR;
      if (cols[s] == 0 || unit == gathered)
        continue;
      if (I != kAvx2 && maskedGather(g)) {
        PanelPlan plan;
        planPanel(g, p0, &plan);
        gatherPanel(plan, xg, g, cg, H * W, static_cast<int8_t>(zpx), ps);
      } else {
        libjit::packPanel<kNR>(xg, g, cg, p0, static_cast<int8_t>(zpx), rows);
        interleavePanel(rows, cg, taps, ps);
      }
    }
    gathered = unit;
    const int64_t p0 = pi * pair * kNR;
    const int64_t mbEnd = (chunk + 1) * mblocks / chunks;
    for (int64_t mb = chunk * mblocks / chunks; mb < mbEnd; ++mb) {
      const int64_t m0 = grp * mg + mb * kMR;
      const int64_t nrows = mg - mb * kMR < kMR ? mg - mb * kMR : kMR;
      const int8_t* a = wp + (grp * mblocks + mb) * K4 * quadBytes(I) * kMR;
      int8_t* yb = y + (n * M + m0) * P + p0;
      if constexpr (I == kAvx2)
        blockAvx2(panel, a, K4, fold + m0, Mq + m0, Sq + m0, yb, P, nrows, cols[0], zpy, lo, hi);
      else if (pair == 2 && cols[pair - 1] > 0)
        blockVnniPair(panel, panel + K4 * 4 * kNR, a, K4, fold + m0, Mq + m0, Sq + m0, yb, P, nrows,
                      cols[0], cols[pair - 1], zpy, lo, hi);
      else
        block512<I>(panel, a, K4, fold + m0, Mq + m0, Sq + m0, yb, P, nrows, cols[0], zpy, lo, hi);
    }
  }
}

} // namespace

/// The packed-GEMM int8 convolution on quads: wp packed [group][M/MR blocks][K4][MR][q]
/// (MR = 16) where the K4 = KH * KW * ceil(cg / 4) quads are tap-major, quad (tap, c4)
/// holding channels 4 c4 .. 4 c4 + 3 (zero past the group's channels and past its output
/// channels) as q = 4 codes (vnni) or the 16-bit pairs (w0, w2), (w1, w3) (avx512bw,
/// avx2); fold[m] = b[m] - (zp_x + 128) * sum w[m]; scratch holds (K + 4 K4 pair) * 16
/// bytes per thread (packPanel's rows and the panels: pair = 2 for vnni, else 1).
#define EMBER_CONV_QUADS(name, isa)                                                                \
  EMBER_KERNEL __attribute__((target(EMBER_X86_TARGET))) void name(                                \
      const int8_t* x, const int8_t* wp, const int32_t* fold, const int32_t* Mq,                   \
      const int32_t* Sq, int8_t* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,         \
      int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,          \
      int64_t pw, int64_t dh, int64_t dw, int64_t group, int32_t zpx, int32_t zpy, int32_t lo,     \
      int32_t hi, int8_t* scratch, int64_t tid, int64_t nth) {                                     \
    convQuads<isa>(x, wp, fold, Mq, Sq, y, N, C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw,  \
                   group, zpx, zpy, lo, hi, scratch, tid, nth);                                    \
  }
EMBER_CONV_QUADS(ember_conv_i8_vnni, kVnni)
EMBER_CONV_QUADS(ember_conv_i8_avx512bw, kBw)
EMBER_CONV_QUADS(ember_conv_i8_avx2, kAvx2)
#undef EMBER_CONV_QUADS

/// The portable depthwise kernel (libjit/Int8.cpp), for the geometries the VNNI one does
/// not handle.
EMBER_KERNEL void ember_dwconv_i8(const int8_t* x, const int8_t* w, const int32_t* bias,
                                  const int32_t* Mq, const int32_t* Sq, int8_t* y, int64_t N,
                                  int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH,
                                  int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                                  int64_t ph, int64_t pw, int64_t dh, int64_t dw, int32_t zpx,
                                  int32_t zpy, int32_t lo, int32_t hi, int32_t* scratch,
                                  int64_t tid, int64_t nth);

namespace {

/// Bytes [lo, hi) of a 64-byte mask (0 <= lo, hi <= 64).
inline uint64_t byteRange(int64_t lo, int64_t hi) {
  if (hi <= lo)
    return 0;
  const uint64_t upto = hi >= 64 ? ~uint64_t(0) : (uint64_t(1) << hi) - 1;
  return upto & ~((uint64_t(1) << lo) - 1);
}

/// The largest number of weight quads (KH * ceil(KW / 4)) of the depthwise kernel.
constexpr int kMaxQuads = 64;

/// ember_dwconv_i8 on quads (kVnni, kBw; same arguments). Lanes are 16 consecutive
/// positions of one output row; per kernel row and quad of kernel columns, one masked
/// 64-byte load of the input row (codes outside the input read as zp_x, so they add
/// nothing to the sum of (x - zp_x) * w), a vpermd and a vpshufb put the four taps of
/// each lane side by side (byte 4j + t = input column j * sw + t * dw of the load), and
/// the quad's weights (zero past KW) multiply them. fold = b[m] - (zp_x + 128) * sum
/// w[m] is computed here, per channel. The windows fit when sw + dw <= 5; other
/// geometries go to ember_dwconv_i8 (which uses the OW int32 of scratch per thread).
template <Isa I>
EMBER_VNNI inline void
dwconvQuads(const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* Mq,
            const int32_t* Sq, int8_t* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M,
            int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,
            int64_t pw, int64_t dh, int64_t dw, int32_t zpx, int32_t zpy, int32_t lo, int32_t hi,
            int32_t* scratch, int64_t tid, int64_t nth) {
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
  const __m512i evenBytes = _mm512_set1_epi32(0x00FF00FF);
  const int64_t mult = M / C;
  int32_t quads[kMaxQuads], evens[kMaxQuads], odds[kMaxQuads];
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
        int16_t pair[4] = {0, 0, 0, 0};
        for (int64_t t = 0; t < 4 && 4 * q + t < KW; ++t) {
          const int8_t v = wm[kh * KW + 4 * q + t];
          quad |= uint32_t(uint8_t(v)) << (8 * t);
          pair[(t % 2) * 2 + t / 2] = v; // (w0, w2), (w1, w3)
          sum += static_cast<uint32_t>(int32_t(v));
        }
        quads[kh * QW + q] = static_cast<int32_t>(quad);
        __builtin_memcpy(&evens[kh * QW + q], pair, 4);
        __builtin_memcpy(&odds[kh * QW + q], pair + 2, 4);
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
            v = _mm512_xor_si512(_mm512_shuffle_epi8(_mm512_permutexvar_epi32(windows, v), taps),
                                 flip);
            const int64_t wq = kh * QW + q;
            if constexpr (I == kVnni) {
              acc = _mm512_dpbusd_epi32(acc, v, _mm512_set1_epi32(quads[wq]));
            } else {
              const __m512i even = _mm512_and_si512(v, evenBytes), odd = _mm512_srli_epi16(v, 8);
              acc = _mm512_add_epi32(acc, _mm512_madd_epi16(even, _mm512_set1_epi32(evens[wq])));
              acc = _mm512_add_epi32(acc, _mm512_madd_epi16(odd, _mm512_set1_epi32(odds[wq])));
            }
          }
        }
        const B16 out = requantRow((U16)acc, fold, Mq[m], Sq[m], zpy, lo, hi);
        const int64_t cols = OW - ow0 < kNR ? OW - ow0 : kNR;
        _mm_mask_storeu_epi8(yp + oh * OW + ow0, static_cast<__mmask16>(laneRange(0, cols)),
                             (__m128i)out);
      }
  }
}

/// Rows of A per register block of the Gemm and 16-column blocks per item (kVnni, kBw;
/// kAvx2 takes two rows and one block: 16 ymm registers).
constexpr int64_t kGemmRows = 4, kGemmBlocks = 4;

/// One item of the Gemm on quads: rows [r0, r0 + nr) of A (nr <= R) against the column
/// blocks [b0, b0 + nb) (nb <= NB); aq holds the rows' codes + 128 as K4 quads each.
template <Isa I, int R, int NB>
EMBER_VNNI inline void gemmItem(const int32_t* aq, const int8_t* bp, const int32_t* fold,
                                const int32_t* Mq, const int32_t* Sq, int8_t* y, int64_t N,
                                int64_t K4, int64_t r0, int64_t nr, int64_t b0, int64_t nb,
                                int32_t zpy, int32_t lo, int32_t hi) {
  constexpr int H = I == kAvx2 ? 2 : 1; // registers per 16 lanes
  typedef __attribute__((vector_size(64 / H))) int32_t V;
  const int64_t blockBytes = K4 * 64 * (I == kVnni ? 1 : 2);
  V acc[R][NB][H];
  for (int r = 0; r < R; ++r)
    for (int b = 0; b < NB; ++b)
      for (int h = 0; h < H; ++h)
        acc[r][b][h] = V{} * 0;
  for (int64_t q = 0; q < K4; ++q) {
    V wv[NB][2][H];
    for (int b = 0; b < NB && b < nb; ++b)
      for (int e = 0; e < (I == kVnni ? 1 : 2); ++e)
        for (int h = 0; h < H; ++h)
          __builtin_memcpy(&wv[b][e][h],
                           bp + (b0 + b) * blockBytes + (q * (I == kVnni ? 1 : 2) + e) * 64 +
                               h * (64 / H),
                           sizeof(V));
    for (int r = 0; r < R; ++r) {
      if (r >= nr)
        break;
      const uint32_t u = static_cast<uint32_t>(aq[r * K4 + q]);
      for (int b = 0; b < NB && b < nb; ++b)
        for (int h = 0; h < H; ++h) {
          if constexpr (I == kVnni) {
            acc[r][b][h] = (V)_mm512_dpbusd_epi32((__m512i)acc[r][b][h], _mm512_set1_epi32(int(u)),
                                                  (__m512i)wv[b][0][h]);
          } else if constexpr (I == kBw) {
            const __m512i e = _mm512_set1_epi32(int(u & 0x00FF00FFu));
            const __m512i o = _mm512_set1_epi32(int((u >> 8) & 0x00FF00FFu));
            __m512i s =
                _mm512_add_epi32((__m512i)acc[r][b][h], _mm512_madd_epi16(e, (__m512i)wv[b][0][h]));
            acc[r][b][h] = (V)_mm512_add_epi32(s, _mm512_madd_epi16(o, (__m512i)wv[b][1][h]));
          } else {
            const __m256i e = _mm256_set1_epi32(int(u & 0x00FF00FFu));
            const __m256i o = _mm256_set1_epi32(int((u >> 8) & 0x00FF00FFu));
            __m256i s =
                _mm256_add_epi32((__m256i)acc[r][b][h], _mm256_madd_epi16(e, (__m256i)wv[b][0][h]));
            acc[r][b][h] = (V)_mm256_add_epi32(s, _mm256_madd_epi16(o, (__m256i)wv[b][1][h]));
          }
        }
    }
  }
  for (int r = 0; r < R && r < nr; ++r)
    for (int b = 0; b < NB && b < nb; ++b) {
      U16 v;
      for (int h = 0; h < H; ++h)
        __builtin_memcpy(reinterpret_cast<char*>(&v) + h * (64 / H), &acc[r][b][h], sizeof(V));
      const int64_t n0 = (b0 + b) * 16;
      const B16 out = requantLanes(v, fold + n0, Mq + n0, Sq + n0, zpy, lo, hi);
      storeCodes(y + (r0 + r) * N + n0, out, N - n0 < 16 ? N - n0 : 16);
    }
}

/// ember_gemm_i8 on quads (the kernels ember_gemm_i8_vnni, _avx512bw, _avx2 below).
template <Isa I>
EMBER_VNNI inline void gemmQuads(const int8_t* a, const int8_t* bp, const int32_t* fold,
                                 const int32_t* Mq, const int32_t* Sq, int8_t* y, int64_t rows,
                                 int64_t N, int64_t K, int32_t zpy, int32_t lo, int32_t hi,
                                 int8_t* scratch, int64_t tid, int64_t nth) {
  constexpr int64_t R = I == kAvx2 ? 2 : kGemmRows, NB = I == kAvx2 ? 1 : kGemmBlocks;
  const int64_t K4 = (K + 3) / 4, blocks = (N + 15) / 16;
  const int64_t rowBlocks = (rows + R - 1) / R, colGroups = (blocks + NB - 1) / NB;
  int32_t* aq = reinterpret_cast<int32_t*>(scratch);
  int64_t begin, end, copied = -1;
  libjit::threadRange(rowBlocks * colGroups, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t rb = item / colGroups, cgi = item % colGroups;
    const int64_t r0 = rb * R, nr = rows - r0 < R ? rows - r0 : R;
    if (rb != copied) { // the rows' codes + 128 as quads, zero bytes past K
      for (int64_t r = 0; r < nr; ++r) {
        uint8_t* dst = reinterpret_cast<uint8_t*>(aq + r * K4);
        const int8_t* src = a + (r0 + r) * K;
        for (int64_t k = 0; k < 4 * K4; ++k)
          dst[k] = k < K ? static_cast<uint8_t>(src[k] ^ static_cast<int8_t>(-128)) : 0;
      }
      copied = rb;
    }
    const int64_t b0 = cgi * NB, nb = blocks - b0 < NB ? blocks - b0 : NB;
    gemmItem<I, R, NB>(aq, bp, fold, Mq, Sq, y, N, K4, r0, nr, b0, nb, zpy, lo, hi);
  }
}

} // namespace

/// ember_dwconv_i8 on quads: vpdpbusd (vnni) or the 16-bit pairs (avx512bw).
#define EMBER_DWCONV_QUADS(name, isa)                                                              \
  EMBER_KERNEL __attribute__((target(EMBER_X86_TARGET))) void name(                                \
      const int8_t* x, const int8_t* w, const int32_t* bias, const int32_t* Mq, const int32_t* Sq, \
      int8_t* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW,    \
      int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh,          \
      int64_t dw, int32_t zpx, int32_t zpy, int32_t lo, int32_t hi, int32_t* scratch, int64_t tid, \
      int64_t nth) {                                                                               \
    dwconvQuads<isa>(x, w, bias, Mq, Sq, y, N, C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, \
                     zpx, zpy, lo, hi, scratch, tid, nth);                                         \
  }
EMBER_DWCONV_QUADS(ember_dwconv_i8_vnni, kVnni)
EMBER_DWCONV_QUADS(ember_dwconv_i8_avx512bw, kBw)
#undef EMBER_DWCONV_QUADS

/// y[r, n] = requant(fold[n] + sum_k (a[r, k] + 128) * b[k, n]) with b packed in blocks
/// of 16 columns, [block][K4][16][4 codes] (vnni) or [block][K4][2][16][16-bit pair]
/// (the pairs (b0, b2) then (b1, b3) of each quad; avx512bw, avx2), zero past K and N;
/// fold[n] = c[n] - (zp_a + 128) * colsum(b); fold, Mq and Sq padded to whole blocks.
/// Scratch: 16 * ceil(K / 4) bytes per thread.
#define EMBER_GEMM_QUADS(name, isa)                                                                \
  EMBER_KERNEL __attribute__((target(EMBER_X86_TARGET))) void name(                                \
      const int8_t* a, const int8_t* bp, const int32_t* fold, const int32_t* Mq,                   \
      const int32_t* Sq, int8_t* y, int64_t rows, int64_t N, int64_t K, int32_t zpy, int32_t lo,   \
      int32_t hi, int8_t* scratch, int64_t tid, int64_t nth) {                                     \
    gemmQuads<isa>(a, bp, fold, Mq, Sq, y, rows, N, K, zpy, lo, hi, scratch, tid, nth);            \
  }
EMBER_GEMM_QUADS(ember_gemm_i8_vnni, kVnni)
EMBER_GEMM_QUADS(ember_gemm_i8_avx512bw, kBw)
EMBER_GEMM_QUADS(ember_gemm_i8_avx2, kAvx2)
#undef EMBER_GEMM_QUADS

namespace {

/// Output positions (broadcast) and blocks of 16 output channels (the lanes) of a
/// register tile of the channel-vectorised convolution: seven divides the planes of a
/// CNN (7, 14, 28, 56 and 112 columns), and 7 x 3 accumulators leave registers for the
/// three weight vectors.
constexpr int kTR = 7, kTB = 3;

/// The input plane of one image as unsigned quads, [row][c4][column] (u = x + 128, so
/// zp_x + 128 outside the input; bytes past the C channels are 128, their weights are
/// zero), rows [r0, r1) of the padded plane of Wp columns: row r is input row r - ph,
/// column j input column j - pw (Wp a multiple of 16). Masked-off bytes are never read.
EMBER_VNNI inline void quadPlane(const int8_t* x, int64_t C, int64_t H, int64_t W, int64_t ph,
                                 int64_t pw, int64_t r0, int64_t r1, int64_t Wp, int8_t zpx,
                                 int8_t* out) {
  const int64_t C4 = (C + 3) / 4;
  const __m128i padv = _mm_set1_epi8(zpx);
  const uintptr_t x0 = reinterpret_cast<uintptr_t>(x);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t ih = r - ph;
    const bool rowInside = ih >= 0 && ih < H;
    for (int64_t j0 = 0; j0 < Wp; j0 += kNR) {
      const int64_t iw0 = j0 - pw;
      int64_t lo = iw0 < 0 ? -iw0 : 0, hi = W - iw0;
      lo = lo < kNR ? lo : kNR;
      hi = hi < kNR ? hi : kNR;
      hi = hi > lo ? hi : lo;
      const __mmask16 m = rowInside ? static_cast<__mmask16>(laneRange(lo, hi)) : 0;
      for (int64_t c4 = 0; c4 < C4; ++c4) {
        B16 rows[4];
        for (int t = 0; t < 4; ++t) {
          const int64_t c = 4 * c4 + t;
          const void* p = reinterpret_cast<const void*>(x0 + uintptr_t((c * H + ih) * W + iw0));
          rows[t] = c < C ? (B16)_mm_mask_loadu_epi8(padv, m, p) : B16{} * 0;
        }
        const B64 v = interleaveQuad(rows);
        __builtin_memcpy(out + ((r * C4 + c4) * Wp + j0) * 4, &v, sizeof(v));
      }
    }
  }
}

/// The np (<= kTR) codes of each of the 16 channels of o[r] (position r's channels) to
/// y + l * P, channel l's row: an 8 x 16 byte transpose (vpunpck{l,h}bw, vpermw).
EMBER_VNNI inline void storeTransposed(const B16 o[kTR], int8_t* y, int64_t P, int64_t np,
                                       int64_t channels) {
  const B16 z = B16{} * 0;
  const B32 e01 = concat(o[0], o[2]);
  const B32 e23 = concat(o[4], o[6]);
  const B32 o01 = concat(o[1], o[3]);
  const B32 o23 = concat(o[5], z);
  // 128-bit lane k of `even` is position 2k, of `odd` position 2k + 1.
  const __m512i even = (__m512i)concat(e01, e23), odd = (__m512i)concat(o01, o23);
  // Word 8k + l of lo: positions 2k, 2k + 1 of channel l; of hi: of channel 8 + l.
  const __m512i lo = _mm512_unpacklo_epi8(even, odd), hi = _mm512_unpackhi_epi8(even, odd);
  // Word 4l + k of the permutation: word 8k + l (channel l's positions 2k, 2k + 1).
  static constexpr int16_t kOrder[32] = {0,  8,  16, 24, 1,  9,  17, 25, 2,  10, 18,
                                         26, 3,  11, 19, 27, 4,  12, 20, 28, 5,  13,
                                         21, 29, 6,  14, 22, 30, 7,  15, 23, 31};
  const __m512i idx = _mm512_loadu_si512(kOrder);
  uint64_t q[16]; // q[l]: byte r is position r of channel l
  const __m512i tlo = _mm512_permutexvar_epi16(idx, lo), thi = _mm512_permutexvar_epi16(idx, hi);
  __builtin_memcpy(q, &tlo, 64);
  __builtin_memcpy(q + 8, &thi, 64);
  for (int64_t l = 0; l < 16 && l < channels; ++l) {
    int8_t* row = y + l * P;
    if (np == kTR) { // two overlapping 4-byte stores
      __builtin_memcpy(row, &q[l], 4);
      __builtin_memcpy(row + 3, reinterpret_cast<const char*>(&q[l]) + 3, 4);
    } else {
      for (int64_t r = 0; r < np; ++r)
        row[r] = static_cast<int8_t>(q[l] >> (8 * r));
    }
  }
}

/// One tile: positions [p0, p0 + np) (np <= kTR) by the NB blocks of 16 output channels
/// from b0 (wp packed [block][K4][16][quad], the K4 quads tap-major as in convQuads), over
/// the quad plane xq (quadPlane, rows of rowBytes, columns 4 bytes apart).
template <int NB>
EMBER_VNNI inline void convTTile(const int8_t* xq, const int8_t* wp, const int32_t* fold,
                                 const int32_t* Mq, const int32_t* Sq, int8_t* y,
                                 const libjit::ConvGeom& g, int64_t C4, int64_t Wp, int64_t p0,
                                 int64_t np, int64_t b0, int32_t zpy, int32_t lo, int32_t hi) {
  const int64_t P = g.OH * g.OW, K4 = g.KH * g.KW * C4, blockBytes = K4 * 64;
  const int64_t rowBytes = C4 * Wp * 4, quadBytes = Wp * 4;
  const int8_t* at[kTR]; // tap (0, 0) of each position (past np: position p0 again)
  for (int r = 0; r < kTR; ++r) {
    const int64_t p = p0 + (r < np ? r : 0), oh = p / g.OW, ow = p % g.OW;
    at[r] = xq + oh * g.sh * rowBytes + ow * g.sw * 4;
  }
  __m512i acc[kTR][NB];
  for (int r = 0; r < kTR; ++r)
    for (int b = 0; b < NB; ++b)
      acc[r][b] = _mm512_setzero_si512();
  const int8_t* w0 = wp + b0 * blockBytes;
  for (int64_t kh = 0; kh < g.KH; ++kh)
    for (int64_t kw = 0; kw < g.KW; ++kw) {
      const int64_t tapAt = kh * g.dh * rowBytes + kw * g.dw * 4;
      const int8_t* wt = w0 + (kh * g.KW + kw) * C4 * 64;
      for (int64_t c4 = 0; c4 < C4; ++c4) {
        __m512i wv[NB];
        for (int b = 0; b < NB; ++b)
          wv[b] = _mm512_loadu_si512(wt + b * blockBytes + c4 * 64);
        for (int r = 0; r < kTR; ++r) {
          int32_t u;
          __builtin_memcpy(&u, at[r] + tapAt + c4 * quadBytes, sizeof(u));
          const __m512i uv = _mm512_set1_epi32(u);
          for (int b = 0; b < NB; ++b)
            acc[r][b] = _mm512_dpbusd_epi32(acc[r][b], uv, wv[b]);
        }
      }
    }
  for (int b = 0; b < NB; ++b) {
    const int64_t m0 = (b0 + b) * 16;
    B16 o[kTR];
    for (int r = 0; r < kTR; ++r)
      o[r] = requantLanes((U16)acc[r][b], fold + m0, Mq + m0, Sq + m0, zpy, lo, hi);
    storeTransposed(o, y + m0 * P + p0, P, np, g.M - m0);
  }
}

} // namespace

/// The int8 convolution of one group with the output channels in the lanes
/// (`codegen/Int8Gen.cpp` takes it on AVX512-VNNI where the 16-position panels of
/// ember_conv_i8_vnni would pad the plane more: 7 x 7 and 14 x 14 planes): each thread
/// lays its image's input out as quads once (quadPlane, in its scratch of Hp * Wp * 4 *
/// ceil(C / 4) bytes), then tiles of 7 positions by 48 channels broadcast each position's
/// quad against the weight vectors, read in place from the plane (no im2col). wp, fold,
/// Mq and Sq are ember_gemm_i8_vnni's packing of the weights as a [K4 * 4][M] matrix
/// (the K4 quads tap-major, quad (tap, c4) = input channels 4 c4 .. 4 c4 + 3 of the
/// tap), padded to blocks of 16 channels. The sums are convQuads' (wrapping int32).
EMBER_KERNEL __attribute__((target(EMBER_X86_TARGET))) void ember_conv_i8_vnni_t(
    const int8_t* x, const int8_t* wp, const int32_t* fold, const int32_t* Mq, const int32_t* Sq,
    int8_t* y, int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t OH, int64_t OW,
    int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
    int32_t zpx, int32_t zpy, int32_t lo, int32_t hi, int8_t* scratch, int64_t tid, int64_t nth) {
  const libjit::ConvGeom g{C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, 1};
  const int64_t C4 = (C + 3) / 4, P = OH * OW;
  const int64_t Hp = (OH - 1) * sh + (KH - 1) * dh + 1;
  const int64_t Wp = ((OW - 1) * sw + (KW - 1) * dw + 1 + kNR - 1) / kNR * kNR;
  int8_t* xq = scratch;
  const int64_t blocks = (M + 15) / 16, groups = (blocks + kTB - 1) / kTB;
  const int64_t tiles = (P + kTR - 1) / kTR;
  // Small weights (the large planes): items tile-major, so that each thread lays out only
  // the padded rows its band of tiles reads; else channel-group-major, so that a group's
  // weights stay in the cache across the tiles (the plane is small then).
  const bool bands = ember::jitops::int8ConvByChannelsOnBands(C, M, KH * KW);
  const auto decode = [&](int64_t item, int64_t* n, int64_t* t, int64_t* grp) {
    *t = bands ? (item / groups) % tiles : item % tiles;
    *grp = bands ? item % groups : (item / tiles) % groups;
    *n = item / (tiles * groups);
  };
  int64_t begin, end, laid = -1;
  libjit::threadRange(N * groups * tiles, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    int64_t n, t, grp;
    decode(item, &n, &t, &grp);
    if (n != laid) { // the padded rows that this thread's tiles of image n read
      int64_t r0 = 0, r1 = Hp;
      if (bands) {
        int64_t nb, tb, nl, tl, unused;
        decode(begin, &nb, &tb, &unused);
        decode(end - 1, &nl, &tl, &unused);
        const int64_t first = n == nb ? tb * kTR : 0;
        const int64_t last = n == nl && (tl + 1) * kTR < P ? (tl + 1) * kTR - 1 : P - 1;
        r0 = first / OW * sh;
        r1 = last / OW * sh + (KH - 1) * dh + 1;
      }
      quadPlane(x + n * C * H * W, C, H, W, ph, pw, r0, r1, Wp, static_cast<int8_t>(zpx), xq);
      laid = n;
    }
    const int64_t p0 = t * kTR, np = P - p0 < kTR ? P - p0 : kTR, b0 = grp * kTB;
    int8_t* yn = y + n * M * P;
    switch (blocks - b0 < kTB ? blocks - b0 : kTB) {
    case 1:
      convTTile<1>(xq, wp, fold, Mq, Sq, yn, g, C4, Wp, p0, np, b0, zpy, lo, hi);
      break;
    case 2:
      convTTile<2>(xq, wp, fold, Mq, Sq, yn, g, C4, Wp, p0, np, b0, zpy, lo, hi);
      break;
    default:
      convTTile<kTB>(xq, wp, fold, Mq, Sq, yn, g, C4, Wp, p0, np, b0, zpy, lo, hi);
    }
  }
}

#endif // __x86_64__
