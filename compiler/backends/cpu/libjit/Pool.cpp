// Pooling kernels (2-D; 1-D as height 1): MaxPool (dilations), AveragePool
// (count_include_pad counts the taps inside the padded input, as the interpreter does),
// GlobalAveragePool (sum in double, as the interpreter) and GlobalMaxPool. Threads
// split the (image, channel) planes.
#include "Libjit.h"

namespace {

using libjit::F16;

/// max(m, v) with the window loop's NaN rule: a NaN already in m stays, else a NaN v or
/// a larger v replaces m.
inline float maxStep(float m, float v) {
  return m != m ? m : (v > m || v != v ? v : m);
}

/// The same on 16 lanes.
inline void maxStepV(F16& m, const F16& v) {
  m = m != m ? m : (((v > m) | (v != v)) ? v : m);
}

/// MaxPool of planes [begin, end) a row of outputs at a time: for each tap, the outputs
/// whose input column lies inside the row form one range, updated without bounds checks
/// (vectorisable). The taps of each output are visited in the same order as a window
/// loop, with the same NaN rule (the first NaN wins), so the bits are the same.
void maxPoolRows(const float* x, float* y, int64_t begin, int64_t end, int64_t H, int64_t W,
                 int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,
                 int64_t pw, int64_t dh, int64_t dw) {
  for (int64_t p = begin; p < end; ++p) {
    const float* xp = x + p * H * W;
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* __restrict yr = y + (p * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ++ow)
        yr[ow] = -__builtin_inff();
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * sh - ph + kh * dh;
        if (ih < 0 || ih >= H)
          continue;
        const float* __restrict xr = xp + ih * W;
        for (int64_t kw = 0; kw < KW; ++kw) {
          // iw = ow * sw + off lies in [0, W) for ow in [lo, hi).
          const int64_t off = kw * dw - pw;
          const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
          int64_t hi = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
          hi = hi < OW ? hi : OW;
          int64_t ow = lo;
          if (sw == 2)
            // The even lanes of 32 consecutive inputs while they lie inside the row.
            for (; ow + 16 <= hi && 2 * ow + off + 32 <= W; ow += 16) {
              F16 v, m;
              libjit::evenLanes(xr + 2 * ow + off, v);
              __builtin_memcpy(&m, yr + ow, sizeof m);
              maxStepV(m, v);
              __builtin_memcpy(yr + ow, &m, sizeof m);
            }
          for (; ow < hi; ++ow)
            yr[ow] = maxStep(yr[ow], xr[ow * sw + off]);
        }
      }
    }
  }
}

} // namespace

EMBER_KERNEL void ember_pool_f32(int32_t isMax, int32_t includePad, const float* x, float* y,
                                 int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW,
                                 int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,
                                 int64_t pw, int64_t peh, int64_t pew, int64_t dh, int64_t dw,
                                 int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(planes, tid, nth, &begin, &end);
  if (isMax) {
    maxPoolRows(x, y, begin, end, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw);
    return;
  }
  for (int64_t p = begin; p < end; ++p) {
    const float* xp = x + p * H * W;
    float* yp = y + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t h0 = oh * sh - ph, w0 = ow * sw - pw;
        float m = -__builtin_inff(), s = 0.f;
        int64_t count = 0, padded = 0;
        for (int64_t kh = 0; kh < KH; ++kh) {
          const int64_t ih = h0 + kh * dh;
          const bool inPadH = ih >= -ph && ih < H + peh;
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t iw = w0 + kw * dw;
            padded += inPadH && iw >= -pw && iw < W + pew;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
              continue;
            const float v = xp[ih * W + iw];
            if (v > m || v != v)
              m = m != m ? m : v;
            s += v;
            ++count;
          }
        }
        if (isMax) {
          yp[oh * OW + ow] = m;
        } else {
          const int64_t div = includePad ? padded : count;
          yp[oh * OW + ow] = div > 0 ? s / static_cast<float>(div) : 0.f;
        }
      }
  }
}

EMBER_KERNEL void ember_global_pool_f32(int32_t isMax, const float* x, float* y, int64_t planes,
                                        int64_t size, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(planes, tid, nth, &begin, &end);
  for (int64_t p = begin; p < end; ++p) {
    const float* v = x + p * size;
    if (isMax) {
      float m = -__builtin_inff();
      for (int64_t i = 0; i < size; ++i)
        if (v[i] > m || v[i] != v[i])
          m = v[i];
      y[p] = m;
    } else {
      double s = 0;
      for (int64_t i = 0; i < size; ++i)
        s += v[i];
      y[p] = static_cast<float>(s / static_cast<double>(size));
    }
  }
}
