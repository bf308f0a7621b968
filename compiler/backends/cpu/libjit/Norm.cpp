// Softmax / LogSoftmax along one axis (outer x len x inner lines, maximum subtracted
// first, e^x in float by libjit::expFast, sums in double as the interpreter) and
// LayerNormalization over lines of `len` elements `inner` apart (statistics in double,
// the normalised values in float); BatchNormalization as a per-channel scale and shift.
#include "Libjit.h"

EMBER_KERNEL void ember_softmax_f32(int32_t isLog, const float* x, float* y, int64_t outer,
                                    int64_t len, int64_t inner, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(outer * inner, tid, nth, &begin, &end);
  for (int64_t line = begin; line < end; ++line) {
    const int64_t o = line / inner, i = line % inner;
    const float* xl = x + o * len * inner + i;
    float* yl = y + o * len * inner + i;
    float mx = xl[0];
    for (int64_t k = 1; k < len; ++k)
      mx = xl[k * inner] > mx ? xl[k * inner] : mx;
    // e^(x - max) once per element (into y), summed in double.
    for (int64_t k = 0; k < len; ++k)
      yl[k * inner] = libjit::expFast(xl[k * inner] - mx);
    const double sum = libjit::sumAsDouble(yl, len, inner);
    if (isLog) {
      const double logSum = log(sum);
      for (int64_t k = 0; k < len; ++k)
        yl[k * inner] = static_cast<float>(static_cast<double>(xl[k * inner]) - mx - logSum);
    } else {
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t k = 0; k < len; ++k)
        yl[k * inner] *= inv;
    }
  }
}

/// y = (x - mean) / sqrt(var + eps) * scale + bias over each line of `len` elements
/// `inner` apart (outer x len x inner: rows of `len` when inner is 1, a pixel's channels of
/// NCHW when inner is H * W); the line's mean and 1 / sqrt(var + eps) go to meanOut /
/// invOut (indexed o * inner + i) when not null.
EMBER_KERNEL void ember_layernorm_f32(const float* x, const float* scale, const float* bias,
                                      float* y, float* meanOut, float* invOut, int64_t outer,
                                      int64_t len, int64_t inner, double eps, int64_t tid,
                                      int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(outer * inner, tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    const int64_t base = (r / inner) * len * inner + r % inner;
    const float* xr = x + base;
    float* yr = y + base;
    const double mean = libjit::sumAsDouble(xr, len, inner) / static_cast<double>(len);
    const double var =
        libjit::sumSquaredDeviations(xr, len, mean, inner) / static_cast<double>(len);
    const double inv = 1.0 / sqrt(var + eps);
    const float m = static_cast<float>(mean), s = static_cast<float>(inv);
    for (int64_t c = 0; c < len; ++c)
      yr[c * inner] = (xr[c * inner] - m) * (s * scale[c]) + (bias ? bias[c] : 0.f);
    if (meanOut)
      meanOut[r] = m;
    if (invOut)
      invOut[r] = s;
  }
}

/// Inference BatchNormalization with per-channel factors folded at compile time:
/// y = x * mul[c] + add[c] over [N, C, plane].
EMBER_KERNEL void ember_scale_shift_f32(const float* x, const float* mul, const float* add,
                                        float* y, int64_t N, int64_t C, int64_t plane, int64_t tid,
                                        int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(N * C, tid, nth, &begin, &end);
  for (int64_t nc = begin; nc < end; ++nc) {
    const float m = mul[nc % C], a = add[nc % C];
    const float* xr = x + nc * plane;
    float* yr = y + nc * plane;
    for (int64_t i = 0; i < plane; ++i)
      yr[i] = xr[i] * m + a;
  }
}
