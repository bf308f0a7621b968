// The constant operands of the int8 convolution kernels (see Int8Packing.h). Every sum
// is computed in uint32, so it wraps as docs/numerics.md section 4 requires.
#include "Int8Packing.h"

namespace ember::cpu {

namespace {

/// sum_k w[m][k], wrapping.
uint32_t weightSum(const int8_t* w, int64_t m, int64_t K) {
  uint32_t sum = 0;
  for (int64_t k = 0; k < K; ++k)
    sum += uint32_t(int32_t(w[m * K + k]));
  return sum;
}

/// ember_conv_i8: blocks of MR = 8 channels, k-major; fold = b - zp_x * sum w.
Int8ConvPacking packPortable(const int8_t* w, const int32_t* bias, int64_t M, int64_t group,
                             int64_t K, int32_t zpx) {
  constexpr int64_t mr = 8;
  const int64_t mg = M / group, mblocks = (mg + mr - 1) / mr;
  Int8ConvPacking p;
  p.kernel = "ember_conv_i8";
  p.weights.assign(size_t(group * mblocks * K * mr), 0);
  p.fold.resize(size_t(M));
  for (int64_t m = 0; m < M; ++m) {
    p.fold[size_t(m)] =
        int32_t(uint32_t(bias ? bias[m] : 0) + (0u - uint32_t(zpx)) * weightSum(w, m, K));
    const int64_t grp = m / mg, mb = (m % mg) / mr, i = (m % mg) % mr;
    int8_t* dst = p.weights.data() + (grp * mblocks + mb) * K * mr + i;
    for (int64_t k = 0; k < K; ++k)
      dst[k * mr] = w[m * K + k];
  }
  p.scratchBytes = size_t(K * 16);
  return p;
}

/// ember_conv_i8_vnni: blocks of MR = 16 channels, [K4][MR][4] where the K4 = taps *
/// ceil(cg / 4) quads are tap-major, quad (tap, c4) holding input channels 4 c4 .. 4 c4 +
/// 3 of that tap (zero past cg); the kernel adds 128 to every activation, so fold = b -
/// (zp_x + 128) * sum w.
Int8ConvPacking packVnni(const int8_t* w, const int32_t* bias, int64_t M, int64_t group, int64_t K,
                         int64_t taps, int32_t zpx) {
  constexpr int64_t mr = 16, nr = 16;
  const int64_t mg = M / group, mblocks = (mg + mr - 1) / mr, cg = K / taps, C4 = (cg + 3) / 4;
  const int64_t K4 = taps * C4;
  Int8ConvPacking p;
  p.kernel = "ember_conv_i8_vnni";
  p.weights.assign(size_t(group * mblocks * K4 * mr * 4), 0);
  p.fold.resize(size_t(M));
  for (int64_t m = 0; m < M; ++m) {
    const uint32_t shift = uint32_t(zpx) + 128u;
    p.fold[size_t(m)] = int32_t(uint32_t(bias ? bias[m] : 0) + (0u - shift) * weightSum(w, m, K));
    const int64_t grp = m / mg, mb = (m % mg) / mr, i = (m % mg) % mr;
    int8_t* dst = p.weights.data() + (grp * mblocks + mb) * K4 * mr * 4 + i * 4;
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t tap = 0; tap < taps; ++tap)
        dst[(tap * C4 + c / 4) * mr * 4 + c % 4] = w[m * K + c * taps + tap];
  }
  p.scratchBytes = size_t((K + 4 * K4) * nr);
  return p;
}

} // namespace

Int8ConvPacking packInt8Conv(const int8_t* w, const int32_t* bias, int64_t M, int64_t group,
                             int64_t K, int64_t taps, int32_t zpx, bool vnni) {
  return vnni ? packVnni(w, bias, M, group, K, taps, zpx) : packPortable(w, bias, M, group, K, zpx);
}

} // namespace ember::cpu
