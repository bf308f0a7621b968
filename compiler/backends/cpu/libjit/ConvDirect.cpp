// Direct convolution with the output channels in the vectors, for AVX-512 hosts
// (codegen/ConvGen.cpp picks it for most convolutions with a kernel larger than 1x1):
//   Y[m, oh, ow] = sum over (c, kh, kw) of W[m, c, kh, kw] * Xpad[c, oh*sh + kh*dh, ow*sw + kw*dw]
// Each thread copies the input rows of a band of output rows, zero-padded
// (ConvScratch.h: DirectGeom), and for each block of 32 output channels (weights packed
// at compile time k-major, [block][c][kh][kw][32]) runs a 7-position x 32-channel register
// tile over every slice of 7 positions of an output row (or 14 positions x 16 channels
// for groups of at most 16 channels). The tile's inputs are
// broadcasts of single floats read straight from the band, so no im2col panel is
// gathered and strides cost nothing; the sums are those of the packed GEMM, in the same
// order of k.
#include "ConvBand.h"
#include "ConvScratch.h"
#include "Libjit.h"

namespace {

using libjit::F16;
using libjit::F8;
typedef F16 V16;

/// acc[i][j] = sum over (c, kh, kw) of a[c * plane + kh * dh * Wp + kw * dw + i * sw] times
/// the weight vector j of that k; w advances k-major.
template <int MR, int NV>
__attribute__((always_inline)) inline void
sumDirect(int64_t cg, const float* __restrict a, int64_t plane, int64_t Wp, int64_t KH, int64_t KW,
          int64_t sw, int64_t dh, int64_t dw, const float* __restrict w, V16 (&acc)[MR][NV]) {
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      acc[i][j] = V16{} * 0.f;
  for (int64_t c = 0; c < cg; ++c, a += plane)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw, w += NV * 16) {
        V16 bv[NV];
        for (int j = 0; j < NV; ++j)
          __builtin_memcpy(&bv[j], w + j * 16, sizeof(V16));
        const float* ak = a + kh * dh * Wp + kw * dw;
        for (int i = 0; i < MR; ++i) {
          const float av = ak[i * sw];
          for (int j = 0; j < NV; ++j)
            acc[i][j] += av * bv[j];
        }
      }
}

/// Transposes 8 rows of 8 floats (r[i][c]) into columns (out[c][i]): unpacks of row
/// pairs, then of pair pairs, then the 128-bit halves (the usual 24-shuffle sequence).
__attribute__((always_inline)) inline void transpose8(const F8 (&r)[8], F8 (&out)[8]) {
  F8 t[8], u[8];
  for (int p = 0; p < 4; ++p) {
    t[2 * p] = __builtin_shufflevector(r[2 * p], r[2 * p + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[2 * p + 1] = __builtin_shufflevector(r[2 * p], r[2 * p + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int q = 0; q < 2; ++q)
    for (int h = 0; h < 2; ++h) {
      const F8 a = t[4 * q + h], b = t[4 * q + h + 2];
      u[4 * q + 2 * h] = __builtin_shufflevector(a, b, 0, 1, 8, 9, 4, 5, 12, 13);
      u[4 * q + 2 * h + 1] = __builtin_shufflevector(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int c = 0; c < 4; ++c) {
    out[c] = __builtin_shufflevector(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    out[c + 4] = __builtin_shufflevector(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

/// Adds the bias vectors to the tile (position i, channels 16 j ..), transposes it in
/// registers eight positions by eight channels at a time, adds the residual r + c * P (a
/// fused Add; none when null) and stores channel c's first `cols` positions at y + c * P
/// with the activation (r may be y: each element is read before it is written).
template <int MR, int NV>
__attribute__((always_inline)) inline void
storeTile(V16 (&acc)[MR][NV], const V16 (&bias)[NV], const float* r, int32_t act, float lo,
          float hi, int64_t chans, int64_t cols, float* y, int64_t P) {
  constexpr int PG = (MR + 7) / 8; // groups of 8 positions
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j)
      acc[i][j] += bias[j];
  // The halves of the sums first, by shuffles in loops short enough to unroll, so that
  // the sums stay in registers in the loop that made them (an indexed read of acc in
  // the store loop below kept them in memory there).
  F8 rows[PG][2 * NV][8];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NV; ++j) {
      rows[i / 8][2 * j][i % 8] =
          __builtin_shufflevector(acc[i][j], acc[i][j], 0, 1, 2, 3, 4, 5, 6, 7);
      rows[i / 8][2 * j + 1][i % 8] =
          __builtin_shufflevector(acc[i][j], acc[i][j], 8, 9, 10, 11, 12, 13, 14, 15);
    }
  for (int h = 0; h < 2 * NV; ++h)
    for (int i = MR; i < 8 * PG; ++i)
      rows[i / 8][h][i % 8] = F8{} * 0.f;
  for (int pg = 0; pg < PG; ++pg) {
    // The group's positions [8 pg, 8 pg + full) in a whole tile; of them, the first n
    // are stored (none when the tile's row ends before the group).
    const int full = MR - 8 * pg < 8 ? MR - 8 * pg : 8;
    const int64_t n = cols - 8 * pg < full ? cols - 8 * pg : full;
    for (int h = 0; h < 2 * NV; ++h) {
      F8 cols8[8];
      transpose8(rows[pg][h], cols8);
      for (int c8 = 0; c8 < 8 && 8 * h + c8 < chans; ++c8) {
        const int64_t at = (8 * h + c8) * P + 8 * pg;
        if (cols == MR) {
          if (r) {
            F8 rv = F8{} * 0.f;
            __builtin_memcpy(&rv, r + at, full * sizeof(float));
            cols8[c8] += rv;
          }
          libjit::activateV(act, cols8[c8], lo, hi);
          __builtin_memcpy(y + at, &cols8[c8], full * sizeof(float));
        } else {
          const float* v = reinterpret_cast<const float*>(&cols8[c8]);
          for (int64_t i = 0; i < n; ++i)
            y[at + i] = libjit::activate(act, r ? v[i] + r[at + i] : v[i], lo, hi);
        }
      }
    }
  }
}

/// Copies the inputs of a 1x1 convolution's output rows [oh0, oh1) of image-group `xg`
/// into slices of MR positions, [tile][c][MR] (tile (oh - oh0) * perRow + ow0 / MR, perRow
/// slices per row): position i of a tile reads input (oh sh - ph, (ow0 + i) sw - pw), zero
/// outside the input and past OW. A tile's sum then reads its inputs in order, MR floats
/// per channel, where the rows of a band put each channel's in another cache line.
template <int MR>
void copySlices(const float* xg, int64_t cg, int64_t H, int64_t W, int64_t OH, int64_t OW,
                int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t oh0, int64_t oh1,
                float* slices) {
  const int64_t perRow = (OW + MR - 1) / MR;
  const int64_t tileFloats = cg * MR;
  if (pw == 0 && ph == 0 && OW % MR == 0 && (OW - 1) * sw < W && (OH - 1) * sh < H) {
    // Whole slices inside the input (no padding; constants of the instance): no bounds to
    // check, the input row read in order and each tile's slices written in order (stride
    // 1: one copy of MR floats).
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t c = 0; c < cg; ++c) {
        const float* src = xg + (c * H + oh * sh) * W;
        float* d = slices + (oh - oh0) * perRow * tileFloats + c * MR;
        for (int64_t s = 0; s < perRow; ++s)
          if (sw == 1)
            __builtin_memcpy(d + s * tileFloats, src + s * MR, MR * sizeof(float));
          else
            for (int i = 0; i < MR; ++i)
              d[s * tileFloats + i] = src[(s * MR + i) * sw];
      }
    return;
  }
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    const int64_t ih = oh * sh - ph;
    const bool inside = ih >= 0 && ih < H;
    for (int64_t s = 0; s < perRow; ++s) {
      float* d = slices + ((oh - oh0) * perRow + s) * tileFloats;
      for (int64_t c = 0; c < cg; ++c, d += MR)
        for (int i = 0; i < MR; ++i) {
          const int64_t ow = s * MR + i, iw = ow * sw - pw;
          d[i] = inside && ow < OW && iw >= 0 && iw < W ? xg[(c * H + ih) * W + iw] : 0.f;
        }
    }
  }
}

/// The direct convolution with an MR-position x 16 NV-channel tile. Scratch per thread:
/// jitops::directGeom(...).scratchFloats(C / group) floats. Work items are (image, group,
/// band of output rows, block of 16 NV channels), the bands made small enough that every
/// thread gets at least two items.
template <int MR, int NV> inline void directConv(EMBER_CONV_ARGS) {
  constexpr int64_t NR = 16 * NV;
  const int64_t cg = C / group, mg = M / group, K = cg * KH * KW, P = OH * OW;
  const ember::jitops::DirectGeom dg =
      ember::jitops::directGeom(cg, OH, OW, KH, KW, sh, sw, dh, dw);
  const int64_t mblocks = (mg + NR - 1) / NR;
  int64_t bands = (OH + dg.bandRows - 1) / dg.bandRows;
  const int64_t perBand = N * group * mblocks;
  if (nth > 1 && bands * perBand < 2 * nth) {
    const int64_t want = (2 * nth + perBand - 1) / perBand;
    bands = want < OH ? want : OH;
  }
  const int64_t bandRows = (OH + bands - 1) / bands;
  bands = (OH + bandRows - 1) / bandRows;
  float* band = scratch;
  const bool slices = dg.slices; // a 1x1 convolution's band: slices of MR positions
  const int64_t perRow = (OW + MR - 1) / MR;
  int64_t begin, end;
  libjit::threadRange(N * group * bands * mblocks, tid, nth, &begin, &end);
  int64_t copied = -1; // the (image, group, band) whose rows are in `band`
  for (int64_t item = begin; item < end; ++item) {
    const int64_t mb = item % mblocks, nb = item / mblocks, bi = nb % bands, ng = nb / bands;
    const int64_t grp = ng % group, n = ng / group;
    const int64_t oh0 = bi * bandRows, oh1 = oh0 + bandRows < OH ? oh0 + bandRows : OH;
    const int64_t inRows = (oh1 - oh0 - 1) * sh + (KH - 1) * dh + 1, plane = inRows * dg.Wp;
    if (nb != copied) {
      if (slices)
        copySlices<MR>(x + (n * C + grp * cg) * H * W, cg, H, W, OH, OW, sh, sw, ph, pw, oh0, oh1,
                       band);
      else
        libjit::copyBand(x + (n * C + grp * cg) * H * W, cg, H, W, ph, pw, oh0 * sh, inRows, dg.Wp,
                         dg.slack, band);
      copied = nb;
    }
    const int64_t m0 = grp * mg + mb * NR, chans = mg - mb * NR < NR ? mg - mb * NR : NR;
    const float* wb = wp + (grp * mblocks + mb) * K * NR;
    float bpad[NR];
    for (int64_t c = 0; c < NR; ++c)
      bpad[c] = bias && c < chans ? bias[m0 + c] : 0.f;
    V16 bv[NV];
    for (int j = 0; j < NV; ++j)
      __builtin_memcpy(&bv[j], bpad + 16 * j, sizeof(V16));
    for (int64_t oh = oh0; oh < oh1; ++oh)
      for (int64_t ow0 = 0; ow0 < OW; ow0 += MR) {
        const int64_t at = (n * M + m0) * P + oh * OW + ow0;
        // The tile's channels are P floats apart: their residual and output lines are
        // asked for before the sum, to arrive during it.
#pragma clang loop unroll(disable) vectorize(disable)
        for (int64_t c = 0; c < chans; ++c) {
          if (addend) {
            __builtin_prefetch(addend + at + c * P, 0, 3);
            __builtin_prefetch(addend + at + c * P + MR - 1, 0, 3);
          }
          if (addend != y) {
            __builtin_prefetch(y + at + c * P, 1, 3);
            __builtin_prefetch(y + at + c * P + MR - 1, 1, 3);
          }
        }
        V16 acc[MR][NV];
        if (slices)
          sumDirect<MR, NV>(cg, band + ((oh - oh0) * perRow + ow0 / MR) * cg * MR, MR, 0, 1, 1, 1,
                            1, 1, wb, acc);
        else
          sumDirect<MR, NV>(cg, band + (oh - oh0) * sh * dg.Wp + ow0 * sw, plane, dg.Wp, KH, KW, sw,
                            dh, dw, wb, acc);
        storeTile<MR, NV>(acc, bv, addend ? addend + at : nullptr, act, lo, hi, chans,
                          OW - ow0 < MR ? OW - ow0 : MR, y + at, P);
      }
  }
}

} // namespace

/// 7 positions x 32 channels: 14 accumulators (most convolutions).
EMBER_KERNEL void ember_conv_f32_direct_mr7_nr32(EMBER_CONV_ARGS) {
  directConv<7, 2>(x, wp, bias, y, N, C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group,
                   act, lo, hi, addend, scratch, tid, nth);
}

/// 14 positions x 16 channels: groups of at most 16 output channels (RegNet's, ResNeXt's,
/// a 16-channel layer), where 32-channel blocks would be half empty.
EMBER_KERNEL void ember_conv_f32_direct_mr14_nr16(EMBER_CONV_ARGS) {
  directConv<14, 1>(x, wp, bias, y, N, C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, group,
                    act, lo, hi, addend, scratch, tid, nth);
}
