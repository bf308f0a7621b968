// Winograd F(2x2, 3x3) convolution for AVX-512 hosts (codegen/ConvGen.cpp picks it for
// 3x3 convolutions of stride 1, no dilation and one group on planes of at least 14
// columns): each 2x2 block of outputs is computed from the 4x4 input tile around it as
//   Y = A^T [ sum_c (G g_mc G^T) . (B^T d_c B) ] A
// so that the sum over channels takes 16 products per tile and channel pair instead of
// the direct sum's 36. The weights are transformed and packed at compile time,
// U[16][block of 32 output channels][c][32]; at run time each thread takes blocks of R
// tile rows by groups of output channels (ConvScratch.h: WinogradGeom), transforms the
// block's input tiles into its scratch, V[16][c][tile] (16 tiles of a tile row at a time,
// from one zero-padded input channel), and for every block of 32 output channels of its
// group runs the 16 GEMMs with the
// 7-tile x 32-channel register tile of libjit/SumTile.h, then the output transform with
// the bias, the fused residual Add and the activation. The sums differ from the direct
// kernel's in rounding only (the transforms add and subtract, G halves).
#include "ConvBand.h"
#include "ConvScratch.h"
#include "Libjit.h"
#include "SumTile.h"

namespace {

using libjit::F16;

/// The transformed tiles of tile row `r` of the item (input rows 2 r .. 2 r + 3 of the
/// padded channel `pc`, Wp floats each) into V's rows of channel c: V[xi][c][r tw + tx],
/// 16 tiles at a time (the last vector of a row spills into the next row's tiles or the
/// slack, rewritten or dropped later).
inline void transformRow(const float* pc, int64_t Wp, int64_t r, int64_t tw, float* vc,
                         int64_t plane) {
  for (int64_t tx0 = 0; tx0 < tw; tx0 += 16) {
    F16 d[4][4];
    for (int a = 0; a < 4; ++a)
      for (int q = 0; q < 4; ++q)
        libjit::evenLanes(pc + (2 * r + a) * Wp + 2 * tx0 + q, d[a][q]);
    F16 t[4][4];
    for (int q = 0; q < 4; ++q) {
      t[0][q] = d[0][q] - d[2][q];
      t[1][q] = d[1][q] + d[2][q];
      t[2][q] = d[2][q] - d[1][q];
      t[3][q] = d[1][q] - d[3][q];
    }
    float* v = vc + r * tw + tx0;
    for (int a = 0; a < 4; ++a) {
      const F16 v0 = t[a][0] - t[a][2], v1 = t[a][1] + t[a][2], v2 = t[a][2] - t[a][1],
                v3 = t[a][1] - t[a][3];
      __builtin_memcpy(v + (4 * a + 0) * plane, &v0, sizeof(F16));
      __builtin_memcpy(v + (4 * a + 1) * plane, &v1, sizeof(F16));
      __builtin_memcpy(v + (4 * a + 2) * plane, &v2, sizeof(F16));
      __builtin_memcpy(v + (4 * a + 3) * plane, &v3, sizeof(F16));
    }
  }
}

/// The output transform of the item's tiles [0, tiles) for output channels m0 + [0, 32)
/// (products Mo[xi][tile][32]): sums plus bias, plus the residual (a fused Add), then the
/// activation, stored at the tile's 2x2 outputs inside the plane.
inline void outputTiles(const float* mo, int64_t TS, int64_t tiles, int64_t ty0, int64_t tw,
                        const float* bias, int64_t m0, int64_t M, const float* addend, float* yn,
                        int64_t OH, int64_t OW, int32_t act, float lo, float hi) {
  const int64_t P = OH * OW;
  float bpad[32];
  for (int64_t c = 0; c < 32; ++c)
    bpad[c] = bias && m0 + c < M ? bias[m0 + c] : 0.f;
  const int64_t chans = M - m0 < 32 ? M - m0 : 32;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t oy = 2 * (ty0 + t / tw), ox = 2 * (t % tw);
    for (int h = 0; h < 2; ++h) {
      F16 m[16];
      for (int xi = 0; xi < 16; ++xi)
        __builtin_memcpy(&m[xi], mo + (xi * TS + t) * 32 + 16 * h, sizeof(F16));
      F16 u0[4], u1[4];
      for (int b = 0; b < 4; ++b) {
        u0[b] = m[b] + m[4 + b] + m[8 + b];
        u1[b] = m[4 + b] - m[8 + b] - m[12 + b];
      }
      F16 bv;
      __builtin_memcpy(&bv, bpad + 16 * h, sizeof(F16));
      F16 out[4] = {u0[0] + u0[1] + u0[2], u0[1] - u0[2] - u0[3], u1[0] + u1[1] + u1[2],
                    u1[1] - u1[2] - u1[3]};
      for (int k = 0; k < 4; ++k)
        out[k] += bv;
      float o[4][16];
      __builtin_memcpy(o, out, sizeof(o));
      const int64_t lanes = chans - 16 * h < 16 ? chans - 16 * h : 16;
#pragma clang loop unroll(disable) vectorize(disable)
      for (int64_t l = 0; l < lanes; ++l) {
        const int64_t base = (m0 + 16 * h + l) * P + oy * OW + ox;
        for (int k = 0; k < 4; ++k) {
          const int64_t dy = k / 2, dx = k % 2;
          if (oy + dy >= OH || ox + dx >= OW)
            continue;
          const int64_t at = base + dy * OW + dx;
          float v = o[k][l];
          if (addend)
            v += addend[at];
          yn[at] = libjit::activate(act, v, lo, hi);
        }
      }
    }
  }
}

} // namespace

/// 3x3, stride 1, one group (codegen/ConvGen.cpp: blockingOf); wp is U, the transformed
/// weights. Scratch per thread: jitops::winogradGeom(N, C, M, OH, OW, 1).scratchFloats(C).
EMBER_KERNEL void ember_conv_f32_winograd2x3(EMBER_CONV_ARGS) {
  (void)KH, (void)KW, (void)sh, (void)sw, (void)dh, (void)dw, (void)group;
  const ember::jitops::WinogradGeom g = ember::jitops::winogradGeom(N, C, M, OH, OW, nth);
  float* V = scratch;
  float* Mo = V + 16 * C * g.TBp;
  float* pc = Mo + 16 * g.TS * 32;
  const int64_t blocks = (g.th + g.R - 1) / g.R, mblocks = (M + 31) / 32, P = OH * OW;
  const int64_t plane = C * g.TBp; // floats of one xi's V
  int64_t begin, end;
  libjit::threadRange(N * blocks * g.mgroups, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t band = item / g.mgroups, mgroup = item % g.mgroups;
    const int64_t n = band / blocks, ty0 = (band % blocks) * g.R;
    const int64_t rows = g.th - ty0 < g.R ? g.th - ty0 : g.R, tiles = rows * g.tw;
    const int64_t slices = (tiles + 6) / 7;
    // Input transform, one zero-padded channel at a time: padded row i is input row
    // 2 ty0 - ph + i, padded column q input column q - pw.
    const float* xn = x + n * C * H * W;
    for (int64_t c = 0; c < C; ++c) {
      libjit::copyBand(xn + c * H * W, 1, H, W, ph, pw, 2 * ty0, 2 * rows + 2, g.Wp, 0, pc);
      for (int64_t r = 0; r < rows; ++r)
        transformRow(pc, g.Wp, r, g.tw, V + c * g.TBp, plane);
      // The slice tail past the item's tiles: zeros (computed and dropped).
      for (int xi = 0; xi < 16; ++xi)
        for (int64_t t = tiles; t < g.TS; ++t)
          V[xi * plane + c * g.TBp + t] = 0.f;
    }
    const int64_t mbEnd = (mgroup + 1) * mblocks / g.mgroups;
    for (int64_t mb = mgroup * mblocks / g.mgroups; mb < mbEnd; ++mb) {
      for (int xi = 0; xi < 16; ++xi) {
        const float* u = wp + (xi * mblocks + mb) * C * 32;
        for (int64_t s = 0; s < slices; ++s) {
          F16 acc[7][2];
          libjit::sumTile<7, 2, F16>(C, V + xi * plane + 7 * s, 1, g.TBp, u, 32, acc);
          float* mo = Mo + (xi * g.TS + 7 * s) * 32;
          for (int i = 0; i < 7; ++i)
            for (int j = 0; j < 2; ++j)
              __builtin_memcpy(mo + i * 32 + 16 * j, &acc[i][j], sizeof(F16));
        }
      }
      outputTiles(Mo, g.TS, tiles, ty0, g.tw, bias, mb * 32, M,
                  addend ? addend + n * M * P : nullptr, y + n * M * P, OH, OW, act, lo, hi);
    }
  }
}
