// The geometry and the order of arithmetic of the convolutions that repeat the
// interpreter's arithmetic (libjit/ConvNd.cpp: 3-D Conv, ConvTranspose; libjit/Int8.cpp:
// the int8 3-D Conv), shared with their code generators (codegen/ConvGen.cpp,
// Int8Gen.cpp): one definition, so the two sides cannot disagree on a field or a path.
#pragma once

#include <cstdint>

namespace ember::jitops {

/// The window of a convolution over three spatial dimensions (a 1-D or 2-D one has
/// leading dimensions of extent 1), as the interpreter's Window3; passed to the kernels as
/// an array of int64 in this order. For ConvTranspose `in` is its input, `out` its result.
struct NdGeom {
  int64_t N, C, M, group;
  int64_t in[3], out[3], k[3], s[3], d[3], p[3]; ///< p: the padding at the beginning
  int64_t kSize() const { return k[0] * k[1] * k[2]; }
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
};

/// The output columns [*lo, *hi) of a row of `outLen` whose input column o * s + off lies
/// inside [0, in) (the interpreter's Window3::validRange).
inline void validRange(int64_t outLen, int64_t in, int64_t s, int64_t off, int64_t* lo,
                       int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  const int64_t last = in - 1 - off;
  *hi = last < 0 ? 0 : (outLen < last / s + 1 ? outLen : last / s + 1);
  if (*lo > *hi)
    *lo = *hi;
}

/// Fields of NdGeom.
constexpr int kNdGeomFields = 22;

/// Multiply-adds of one chain of the interpreter's blocked product (GemmCore.cpp's KC):
/// the chains' sums are added to the result one after the other.
constexpr int64_t kNdChain = 256;

/// How the interpreter sums one output of a convolution: the path its GEMM core
/// (interpreter/kernels/GemmCore.cpp) takes for the product's shape, or Conv's direct
/// depthwise loop (interpreter/kernels/ConvKernels.cpp).
enum NdSum : int32_t {
  /// Blocked: chains of kNdChain multiply-adds from 0 (fused when its micro-kernel is),
  /// the first chain's sum added to the bias (Conv) or taken as it is (ConvTranspose),
  /// each later one added to the result.
  kNdBlocked,
  /// gemv of one row of A: one chain over all of K, multiply then add, plus the bias
  /// (Conv) or +0 (ConvTranspose).
  kNdRowVector,
  /// gemv of one column of B: dot(), sixteen products at a time into two sets of eight
  /// lane sums, the second set added to the first, the eight lanes summed from 0 in
  /// order, then the rest one at a time; plus the bias (Conv) or +0 (ConvTranspose).
  kNdDot,
  /// Depthwise Conv: the bias, then each tap inside the input, multiply then add.
  kNdDepthwise,
};

/// The path of a Conv with output channels `mg` and input channels `cg` per group over
/// `outPlane` output positions.
inline NdSum convSum(int64_t mg, int64_t cg, int64_t group, int64_t outPlane) {
  if (cg == 1 && group > 1)
    return kNdDepthwise;
  if (outPlane == 1)
    return kNdDot;
  return mg == 1 ? kNdRowVector : kNdBlocked;
}

/// The path of a ConvTranspose: its product has mg * kSize rows and inPlane columns.
inline NdSum convTransposeSum(int64_t mg, int64_t kSize, int64_t inPlane) {
  if (mg * kSize > 1)
    return kNdBlocked;
  return inPlane == 1 ? kNdDot : kNdRowVector;
}

/// Output positions (one vector) and output channels that ember_conv3d_f32's blocked
/// path sums at once, in registers.
constexpr int64_t kNdLanes = 16;
constexpr int64_t kNdChannels = 4;

/// The zero-padded input rows the blocked path of ember_conv3d_f32 reads for one output
/// row: row (ci, kd, kh) holds input columns -p[2] .. width - p[2] - 1 of the tap's input
/// row (zeros outside the input), so tap kw of output column o is element o * s + kw * d.
struct NdRows {
  int64_t rows = 0, width = 0;
  int64_t floats() const { return rows * width; }
};

inline NdRows ndRows(const NdGeom& g) {
  const int64_t lanes = (g.out[2] + kNdLanes - 1) / kNdLanes * kNdLanes;
  return {g.C / g.group * g.k[0] * g.k[1], (lanes - 1) * g.s[2] + (g.k[2] - 1) * g.d[2] + 1};
}

/// Whether a Conv of path `sum` takes the register-blocked path: kNdBlocked, when its
/// padded rows take at most 1 MiB per thread (else it sums a row at a time in memory).
inline bool conv3dOnRows(const NdGeom& g, int32_t sum) {
  return sum == kNdBlocked && ndRows(g).floats() * 4 <= (int64_t(1) << 20);
}

/// Floats of scratch one thread of ember_conv3d_f32 needs: the padded rows (blocked path
/// on rows), else a row of chain sums and a row of results, or (kNdDot) one column of the
/// product.
inline int64_t conv3dScratchFloats(const NdGeom& g, int32_t sum) {
  if (conv3dOnRows(g, sum))
    return ndRows(g).floats();
  const int64_t K = g.C / g.group * g.kSize();
  return 2 * g.out[2] > K ? 2 * g.out[2] : K;
}

/// Floats of scratch one thread of ember_conv_transpose_f32 needs: a row of results and
/// two input rows of chain sums.
inline int64_t convTransposeScratchFloats(const NdGeom& g) {
  return g.out[2] + 2 * g.in[2];
}

} // namespace ember::jitops
