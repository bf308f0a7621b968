// Pooling kernels (2-D; 1-D as height 1): MaxPool (dilations), AveragePool
// (count_include_pad counts the taps inside the padded input, as the interpreter does),
// GlobalAveragePool (sum in double, as the interpreter, in eight partial sums) and
// GlobalMaxPool. Threads split the (image, channel) planes. MaxPool and AveragePool over
// three spatial dimensions walk each window as the interpreter does (ember_pool3d_f32).
#include "ConvScratch.h"
#include "Libjit.h"
#include "Phases.h"
#include "Pool3.h"

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

typedef int32_t I16 __attribute__((vector_size(64)));

/// m = the maximum over taps [0, taps) of 16 lanes, `tap(t, v)` loading tap t's vector
/// (-inf for a tap in the padding): plain compares (one vmaxps each) and a flag of the
/// NaNs seen; only a block where one was seen takes its taps again with maxStepV's rule
/// (the first NaN wins), so the bits are always the rule's.
template <typename Tap> inline void maxOverTaps(int64_t taps, Tap tap, F16& m) {
  m = F16{} - __builtin_inff();
  I16 nan = {};
  for (int64_t t = 0; t < taps; ++t) {
    F16 v;
    tap(t, v);
    m = v > m ? v : m;
    nan |= v != v;
  }
  if (!__builtin_reduce_or(nan))
    return;
  m = F16{} - __builtin_inff();
  for (int64_t t = 0; t < taps; ++t) {
    F16 v;
    tap(t, v);
    maxStepV(m, v);
  }
}

/// v = the inputs of 16 outputs at stride `sw` (1 or 2) from x: x[0, 16) or the even
/// lanes of x[0, 32) (by reference: vectors by value change the ABI).
inline void strideLoad(const float* x, int64_t sw, F16& v) {
  if (sw == 1)
    __builtin_memcpy(&v, x, sizeof v);
  else
    libjit::evenLanes(x, v);
}

/// MaxPool of planes [begin, end) a row of outputs at a time. The outputs whose every
/// tap lies inside the row (horizontally) go 16 at a time at strides 1 and 2, the
/// maximum kept in a register over the taps and stored once (the row's last block
/// overlaps the one before instead of a scalar tail); the others, and every output at
/// other strides, one at a time. Each output visits its taps in the window loop's order
/// with the same NaN rule (the first NaN wins), so the bits are the same either way.
void maxPoolRows(const float* x, float* y, int64_t begin, int64_t end, int64_t H, int64_t W,
                 int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,
                 int64_t pw, int64_t dh, int64_t dw) {
  const ember::jitops::MaxPoolRowBlocks rb = ember::jitops::maxPoolRowBlocks(W, OW, KW, sw, pw, dw);
  for (int64_t p = begin; p < end; ++p) {
    const float* xp = x + p * H * W;
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* yr = y + (p * OH + oh) * OW;
      auto block = [&](int64_t ow) {
        F16 m;
        maxOverTaps(
            KH * KW,
            [&](int64_t t, F16& v) {
              const int64_t ih = oh * sh - ph + (t / KW) * dh;
              if (ih < 0 || ih >= H)
                v = F16{} - __builtin_inff();
              else
                strideLoad(xp + ih * W + ow * sw - pw + (t % KW) * dw, sw, v);
            },
            m);
        __builtin_memcpy(yr + ow, &m, sizeof m);
      };
      auto one = [&](int64_t ow) {
        float m = -__builtin_inff();
        libjit::forEachTap(oh, ow, H, W, KH, KW, sh, sw, ph, pw, dh, dw,
                           [&](int64_t at) { m = maxStep(m, xp[at]); });
        yr[ow] = m;
      };
      int64_t done = rb.lo; // outputs [rb.lo, done) are written by blocks
      if (rb.vector) {
        for (; done + 16 <= rb.hi && done <= rb.lastStart; done += 16)
          block(done);
        const int64_t last = (rb.hi < rb.lastStart + 16 ? rb.hi : rb.lastStart + 16) - 16;
        if (done < rb.hi && last >= rb.lo) {
          block(last);
          done = last + 16;
        }
      }
      for (int64_t ow = 0; ow < OW; ++ow)
        if (ow < rb.lo || ow >= done)
          one(ow);
    }
  }
}

/// MaxPool of planes [begin, end) too narrow for blocks of a row (14x14, 7x7): each plane
/// is copied into its stride phases with -inf in the padding (Phases.h), where each tap
/// of 16 output positions flattened over the phase width is one contiguous load, the
/// maximum over the taps stays in a register, and the rows are copied out at the end.
/// The taps are visited in the window loop's order; a tap in the padding is -inf, which
/// changes no maximum, so the bits are those of maxPoolRows.
void maxPoolPhases(const float* x, float* y, int64_t begin, int64_t end, int64_t H, int64_t W,
                   int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
                   int64_t ph, int64_t pw, int64_t dh, int64_t dw, float* scratch) {
  using ember::jitops::kDwStep;
  const ember::jitops::DwGeom g = ember::jitops::dwGeom(OH, OW, KH, KW, sh, sw, dh, dw);
  float* phases = scratch;
  float* out = phases + g.phases * g.plane;
  for (int64_t p = begin; p < end; ++p) {
    libjit::buildPhases(x + p * H * W, H, W, KH, KW, sh, sw, ph, pw, dh, dw, g, -__builtin_inff(),
                        phases);
    for (int64_t q = 0; q < g.outLen; q += kDwStep) {
      F16 m;
      maxOverTaps(
          KH * KW,
          [&](int64_t t, F16& v) {
            const int64_t kh = t / KW, kw = t % KW;
            const int64_t a = (kh * dh) % sh, i0 = (kh * dh) / sh;
            const int64_t b = (kw * dw) % sw, j0 = (kw * dw) / sw;
            __builtin_memcpy(&v, phases + (a * sw + b) * g.plane + i0 * g.Wq + j0 + q, sizeof v);
          },
          m);
      __builtin_memcpy(out + q, &m, sizeof m);
    }
    libjit::storeRows(out, g.Wq, OH, OW, 0, 0.f, 0.f, y + p * OH * OW);
  }
}

} // namespace

EMBER_KERNEL void ember_pool_f32(int32_t isMax, int32_t includePad, const float* x, float* y,
                                 int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW,
                                 int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t ph,
                                 int64_t pw, int64_t peh, int64_t pew, int64_t dh, int64_t dw,
                                 float* scratch, int64_t tid, int64_t nth) {
  int64_t begin, end;
  libjit::threadRange(planes, tid, nth, &begin, &end);
  if (isMax) {
    // Scratch (for max pools only): ember::jitops::dwGeom(...).scratchFloats() per thread.
    if (ember::jitops::maxPoolOnPhases(W, OW, KW, sh, sw, pw, dw))
      maxPoolPhases(x, y, begin, end, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, scratch);
    else
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
      // In double, eight partial sums (a plain loop keeps its order and stays scalar:
      // EfficientNet-B0's 17 squeezes took 1.7 ms).
      const double sum = libjit::sumAsDouble(v, size);
      y[p] = static_cast<float>(sum / static_cast<double>(size));
    }
  }
}

namespace {

/// One output of a float 3-D pool over plane xp, as the interpreter's forEachWindow walks
/// it: the taps inside the input in (kd, kh, kw) order; an average divides the float sum
/// by the taps inside the input, or inside the padded input with `includePad`.
float pool3Output(const libjit::Pool3& g, const float* xp, const int64_t* o, int32_t isMax,
                  int32_t includePad) {
  float m = -__builtin_inff(), sum = 0.f;
  const libjit::Pool3Counts c = libjit::pool3Window(g, o, [&](int64_t at) {
    const float v = xp[at];
    if (v > m || v != v)
      m = m != m ? m : v;
    sum += v;
  });
  if (isMax)
    return m;
  const int64_t div = includePad ? c.padded : c.inside;
  return div > 0 ? sum / static_cast<float>(div) : 0.f;
}

} // namespace

/// MaxPool and AveragePool over three spatial dimensions with the interpreter's
/// arithmetic (its forEachWindow): `planes` (image, channel) planes, `geom` the 21 values
/// of libjit::Pool3. Threads split the planes' output rows.
EMBER_KERNEL void ember_pool3d_f32(int32_t isMax, int32_t includePad, const float* x, float* y,
                                   int64_t planes, const int64_t* geom, int64_t tid, int64_t nth) {
  libjit::Pool3 g;
  __builtin_memcpy(&g, geom, sizeof g);
  const int64_t inPlane = g.in[0] * g.in[1] * g.in[2];
  int64_t begin, end;
  libjit::threadRange(planes * g.out[0] * g.out[1], tid, nth, &begin, &end);
  for (int64_t r = begin; r < end; ++r) {
    int64_t o[3] = {r / g.out[1] % g.out[0], r % g.out[1], 0};
    const float* xp = x + r / g.out[1] / g.out[0] * inPlane;
    float* yr = y + r * g.out[2];
    for (o[2] = 0; o[2] < g.out[2]; ++o[2])
      yr[o[2]] = pool3Output(g, xp, o, isMax, includePad);
  }
}
