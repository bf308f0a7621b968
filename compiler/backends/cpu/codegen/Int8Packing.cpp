// The constant operands of the int8 convolution kernels (see Int8Packing.h). Every sum
// is computed in uint32, so it wraps as docs/numerics.md section 4 requires.
#include "Int8Packing.h"

#include <string>

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

/// Byte t (0..3) of a quad at its place in the kernel's packing of `isa`: the code
/// itself (vnni), or the 16-bit pairs (w0, w2), (w1, w3) (avx512bw, avx2; little
/// endian, so the int16 of byte t starts at byte 2 * ((t % 2) * 2 + t / 2)).
void putQuadByte(int8_t* quad, int64_t t, int8_t v, Int8Isa isa) {
  if (isa == Int8Isa::Vnni) {
    quad[t] = v;
    return;
  }
  const int64_t at = 2 * ((t % 2) * 2 + t / 2);
  quad[at] = v;
  quad[at + 1] = v < 0 ? int8_t(-1) : int8_t(0);
}

/// The quad kernels: blocks of MR = 16 channels, [K4][MR][quad] where the K4 = taps *
/// ceil(cg / 4) quads are tap-major, quad (tap, c4) holding input channels 4 c4 .. 4 c4 +
/// 3 of that tap (zero past cg) as putQuadByte places them; the kernel adds 128 to every
/// activation, so fold = b - (zp_x + 128) * sum w.
Int8ConvPacking packQuads(const int8_t* w, const int32_t* bias, int64_t M, int64_t group, int64_t K,
                          int64_t taps, int32_t zpx, Int8Isa isa) {
  constexpr int64_t mr = 16, nr = 16;
  const int64_t mg = M / group, mblocks = (mg + mr - 1) / mr, cg = K / taps, C4 = (cg + 3) / 4;
  const int64_t K4 = taps * C4;
  Int8ConvPacking p;
  const int64_t qb = isa == Int8Isa::Vnni ? 4 : 8;
  p.kernel = std::string("ember_conv_i8_") + int8IsaName(isa);
  p.weights.assign(size_t(group * mblocks * K4 * mr * qb), 0);
  p.fold.resize(size_t(M));
  for (int64_t m = 0; m < M; ++m) {
    const uint32_t shift = uint32_t(zpx) + 128u;
    p.fold[size_t(m)] = int32_t(uint32_t(bias ? bias[m] : 0) + (0u - shift) * weightSum(w, m, K));
    const int64_t grp = m / mg, mb = (m % mg) / mr, i = (m % mg) % mr;
    int8_t* dst = p.weights.data() + (grp * mblocks + mb) * K4 * mr * qb + i * qb;
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t tap = 0; tap < taps; ++tap)
        putQuadByte(dst + (tap * C4 + c / 4) * mr * qb, c % 4, w[m * K + c * taps + tap], isa);
  }
  // packPanel's rows and the panels (two at a time for vnni: blockVnniPair).
  p.scratchBytes = size_t((K + 4 * K4 * (isa == Int8Isa::Vnni ? 2 : 1)) * nr);
  return p;
}

} // namespace

Int8ConvPacking packInt8Conv(const int8_t* w, const int32_t* bias, int64_t M, int64_t group,
                             int64_t K, int64_t taps, int32_t zpx, Int8Isa isa) {
  return isa == Int8Isa::Portable ? packPortable(w, bias, M, group, K, zpx)
                                  : packQuads(w, bias, M, group, K, taps, zpx, isa);
}

Int8GemmPacking packInt8Gemm(const int8_t* b, const int32_t* c, const std::vector<int32_t>& Mq,
                             const std::vector<int32_t>& Sq, int64_t K, int64_t N, int32_t zpa,
                             Int8Isa isa) {
  Int8GemmPacking p;
  const bool quads = isa != Int8Isa::Portable;
  // The quad kernels add 128 to every code of A.
  const uint32_t shift = uint32_t(zpa) + (quads ? 128u : 0u);
  const int64_t blocks = (N + 15) / 16, padded = quads ? blocks * 16 : N;
  p.fold.assign(size_t(padded), 0);
  p.M.assign(size_t(padded), 0);
  p.S.assign(size_t(padded), 1);
  for (int64_t j = 0; j < N; ++j) {
    uint32_t sum = 0;
    for (int64_t k = 0; k < K; ++k)
      sum += uint32_t(int32_t(b[k * N + j]));
    const int32_t cv = c ? c[j] : 0;
    p.fold[size_t(j)] = int32_t(uint32_t(cv) + (0u - shift) * sum);
    p.M[size_t(j)] = Mq[size_t(j)];
    p.S[size_t(j)] = Sq[size_t(j)];
  }
  if (!quads) {
    p.kernel = "ember_gemm_i8";
    p.scratchBytes = size_t(N) * 4;
    return p;
  }
  // [block][K4][16][4 codes] (vnni) or [block][K4][2][16][16-bit pair] (the others).
  const int64_t K4 = (K + 3) / 4, vectors = isa == Int8Isa::Vnni ? 1 : 2;
  p.kernel = std::string("ember_gemm_i8_") + int8IsaName(isa);
  p.weights.assign(size_t(blocks * K4 * vectors * 64), 0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) {
      const int64_t blk = j / 16, lane = j % 16, q = k / 4, t = k % 4;
      int8_t* v = p.weights.data() + (blk * K4 + q) * vectors * 64;
      if (isa == Int8Isa::Vnni) {
        v[lane * 4 + t] = b[k * N + j];
        continue;
      }
      // Even bytes (t = 0, 2) in the first vector, odd ones (1, 3) in the second.
      int8_t* at = v + (t % 2) * 64 + lane * 4 + (t / 2) * 2;
      at[0] = b[k * N + j];
      at[1] = b[k * N + j] < 0 ? int8_t(-1) : int8_t(0);
    }
  p.scratchBytes = size_t(16 * K4);
  return p;
}

bool int8ConvByChannels(Int8Isa isa, int64_t group, int64_t C, int64_t M, int64_t taps, int64_t P,
                        int64_t planeBytes) {
  const int64_t panels = (P + 15) / 16 * 16, tiles = (P + 6) / 7 * 7;
  const bool wins = taps > 1 || C >= M || panels * 100 >= tiles * 120;
  return isa == Int8Isa::Vnni && group == 1 && wins && planeBytes <= (int64_t(1) << 20);
}

Int8GemmPacking packInt8ConvByChannels(const int8_t* w, const int32_t* bias,
                                       const std::vector<int32_t>& Mq,
                                       const std::vector<int32_t>& Sq, int64_t M, int64_t cg,
                                       int64_t taps, int32_t zpx) {
  const int64_t C4 = (cg + 3) / 4, K = 4 * C4 * taps;
  std::vector<int8_t> b(size_t(K * M), 0); // [quad (tap, c4)][t][m], zero past cg
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t tap = 0; tap < taps; ++tap)
        b[size_t(((tap * C4 + c / 4) * 4 + c % 4) * M + m)] = w[(m * cg + c) * taps + tap];
  Int8GemmPacking p = packInt8Gemm(b.data(), bias, Mq, Sq, K, M, zpx, Int8Isa::Vnni);
  p.kernel = "ember_conv_i8_vnni_t";
  p.scratchBytes = 0;
  return p;
}

} // namespace ember::cpu
