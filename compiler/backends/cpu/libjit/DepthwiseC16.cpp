// Depthwise convolution with 16 channels in each vector (float32): the layout ONNX
// Runtime keeps all along (NCHWc), made here per block of 16 channels and band of output
// rows. The band's input rows are transposed into a zero-padded pixel-major plane of
// 16-channel vectors, every output pixel is KH x KW vector FMAs with the taps' weights
// held in registers, and the results are transposed back into the 16 output planes. A
// stride changes only which pixel vector a tap loads, so there are no stride phases, and
// there are no costs per plane, which dominated the per-plane kernel (libjit/Conv.cpp) on
// the 7x7 and 14x14 planes of MobileNet's last stages.
#include "ConvScratch.h"
#include "Libjit.h"

#include <utility>

namespace {

using V16 = libjit::F16; // one vector of 16 channels

/// Swaps the off-diagonal B x B blocks of rows a and b (a's row index has bit B clear, b
/// is a's row + B): one stage of the butterfly transpose. Lane j of a takes b's lane
/// j - B where j has bit B set; lane j of b takes a's lane j + B where it has not.
template <int B, int... J>
__attribute__((always_inline)) inline void swapBlocks(V16& a, V16& b,
                                                      std::integer_sequence<int, J...>) {
  const V16 x = __builtin_shufflevector(a, b, ((J & B) ? 16 + J - B : J)...);
  b = __builtin_shufflevector(a, b, ((J & B) ? 16 + J : J + B)...);
  a = x;
}

template <int B> __attribute__((always_inline)) inline void stage(V16 (&r)[16]) {
  for (int i = 0; i < 16; ++i)
    if ((i & B) == 0)
      swapBlocks<B>(r[i], r[i + B], std::make_integer_sequence<int, 16>{});
}

/// r := its transpose (row i lane j <- row j lane i).
__attribute__((always_inline)) inline void transpose16(V16 (&r)[16]) {
  stage<1>(r);
  stage<2>(r);
  stage<4>(r);
  stage<8>(r);
}

/// Transposes the 16 x k tile of 16 rows (`stride` apart from src, k <= 16 floats each,
/// the rest zero) into k pixel vectors at dst.
__attribute__((always_inline)) inline void rowsTile(const float* src, int64_t stride, int64_t k,
                                                    float* dst) {
  V16 r[16];
  for (int c = 0; c < 16; ++c) {
    r[c] = V16{} * 0.f;
    __builtin_memcpy(&r[c], src + c * stride, size_t(k) * sizeof(float));
  }
  transpose16(r);
  for (int64_t i = 0; i < k; ++i)
    __builtin_memcpy(dst + i * 16, &r[i], sizeof(V16));
}

/// Copies `n` floats of each of 16 rows (rows `stride` apart from src) into n pixel
/// vectors at dst (lane c = row c), 16 x 16 tiles transposed in registers, then one tile
/// of the n % 16 last columns (n is a constant of the kernel's instance, so are the
/// tail's copies).
inline void rowsToPixels(const float* src, int64_t stride, int64_t n, float* dst) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    rowsTile(src + j, stride, 16, dst + j * 16);
  if (j < n)
    rowsTile(src + j, stride, n - j, dst + j * 16);
}

/// The inverse of rowsTile with the activation: k pixel vectors at src into k floats of
/// 16 rows (`stride` apart from dst).
__attribute__((always_inline)) inline void pixelsTile(const float* src, int64_t k, int32_t act,
                                                      float lo, float hi, float* dst,
                                                      int64_t stride) {
  V16 r[16];
  for (int64_t i = 0; i < 16; ++i) {
    r[i] = V16{} * 0.f;
    if (i < k)
      __builtin_memcpy(&r[i], src + i * 16, sizeof(V16));
  }
  transpose16(r);
  for (int c = 0; c < 16; ++c) {
    libjit::activateV(act, r[c], lo, hi);
    __builtin_memcpy(dst + c * stride, &r[c], size_t(k) * sizeof(float));
  }
}

/// The inverse of rowsToPixels with the activation: n pixel vectors at src into 16 rows
/// (`stride` apart from dst).
inline void pixelsToRows(const float* src, int64_t n, int32_t act, float lo, float hi, float* dst,
                         int64_t stride) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    pixelsTile(src + j * 16, 16, act, lo, hi, dst + j, stride);
  if (j < n)
    pixelsTile(src + j * 16, n - j, act, lo, hi, dst + j, stride);
}

} // namespace

/// y = conv(x, w) + bias for a depthwise convolution (M == C, C a multiple of 16): each
/// thread takes blocks of 16 channels (over all images) and for each band of output rows
/// (ember::jitops::dwC16Geom) builds the band's padded pixel-major plane, computes every
/// output pixel's 16 channels in one vector and writes them back as 16 plane rows. Each
/// output is bias + the taps' products in kernel order, as in the per-plane kernel.
EMBER_KERNEL void ember_dwconv_f32_c16(EMBER_DWCONV_ARGS) {
  (void)M;
  const ember::jitops::DwC16Geom g = ember::jitops::dwC16Geom(OH, OW, KH, KW, sh, sw, dh, dw);
  float* plane = scratch;
  float* out = plane + g.Hb * g.Wp * 16;
  const int64_t CB = C / 16, P = OH * OW;
  // Columns of the input inside the padded plane (column q holds input column q - pw).
  const int64_t q0 = pw, q1 = pw + W < g.Wp ? pw + W : g.Wp;
  int64_t begin, end;
  libjit::threadRange(N * CB, tid, nth, &begin, &end);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / CB, c0 = (item % CB) * 16;
    const float* xc = x + (n * C + c0) * H * W;
    V16 wv[ember::jitops::kDwMaxTaps];
    V16 bv = V16{} * 0.f;
    for (int c = 0; c < 16; ++c)
      bv[c] = bias ? bias[c0 + c] : 0.f;
    const bool hoisted = KH * KW <= ember::jitops::kDwMaxTaps;
    for (int64_t t = 0; t < KH * KW && hoisted; ++t)
      for (int c = 0; c < 16; ++c)
        wv[t][c] = w[(c0 + c) * KH * KW + t];
    for (int64_t oh0 = 0; oh0 < OH; oh0 += g.R) {
      const int64_t rows = OH - oh0 < g.R ? OH - oh0 : g.R;
      const int64_t hb = (rows - 1) * sh + (KH - 1) * dh + 1;
      // The band's padded plane: row r holds input row oh0 * sh + r - ph.
      for (int64_t r = 0; r < hb; ++r) {
        float* row = plane + r * g.Wp * 16;
        const int64_t iy = oh0 * sh + r - ph;
        if (iy < 0 || iy >= H) {
          for (int64_t q = 0; q < g.Wp * 16; ++q)
            row[q] = 0.f;
          continue;
        }
        for (int64_t q = 0; q < q0 * 16; ++q)
          row[q] = 0.f;
        if (q1 > q0)
          rowsToPixels(xc + iy * W, H * W, q1 - q0, row + q0 * 16);
        for (int64_t q = (q1 > q0 ? q1 : q0) * 16; q < g.Wp * 16; ++q)
          row[q] = 0.f;
      }
      for (int64_t oh = 0; oh < rows; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          V16 acc = bv;
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              V16 v, wt;
              __builtin_memcpy(&v, plane + ((oh * sh + kh * dh) * g.Wp + ow * sw + kw * dw) * 16,
                               sizeof v);
              if (hoisted)
                wt = wv[kh * KW + kw];
              else
                for (int c = 0; c < 16; ++c)
                  wt[c] = w[(c0 + c) * KH * KW + kh * KW + kw];
              acc += wt * v;
            }
          __builtin_memcpy(out + (oh * OW + ow) * 16, &acc, sizeof acc);
        }
      pixelsToRows(out, rows * OW, act, lo, hi, y + (n * C + c0) * P + oh0 * OW, P);
    }
  }
}
