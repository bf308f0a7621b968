#pragma once
// Packing of the constant operands of the int8 packed-GEMM convolution and of the int8
// Gemm (the kernels ember_conv_i8 / ember_gemm_i8 of libjit/Int8.cpp and their quad
// variants of libjit/Int8Vnni.cpp): the weights in the kernel's blocking and the bias
// with the input's zero point folded in.

#include "Jit.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember::cpu {

/// What an int8 convolution passes to its packed-GEMM kernel.
struct Int8ConvPacking {
  std::string kernel;          ///< the libjit kernel to call
  std::vector<int8_t> weights; ///< the weights in the kernel's blocking
  std::vector<int32_t> fold;   ///< per output channel: bias - zp * sum w (wrapping)
  size_t scratchBytes = 0;     ///< scratch the kernel needs per thread
};

/// Packs the weights w [M][K] (K = C / group * taps, taps = KH * KW, codes of zero point
/// 0) and the optional int32 bias of a convolution whose input has zero point `zpx` for
/// the kernel of `isa` (ember_conv_i8_vnni, _avx512bw, _avx2, or ember_conv_i8).
Int8ConvPacking packInt8Conv(const int8_t* w, const int32_t* bias, int64_t M, int64_t group,
                             int64_t K, int64_t taps, int32_t zpx, Int8Isa isa);

/// What an int8 Gemm with a constant B passes to its kernel.
struct Int8GemmPacking {
  std::string kernel;          ///< the libjit kernel to call
  std::vector<int8_t> weights; ///< B in the kernel's blocking (or as it is: portable)
  std::vector<int32_t> fold;   ///< per column: c - zp * colsum(B) (wrapping)
  std::vector<int32_t> M, S;   ///< per column: the requantization (padded as fold)
  size_t scratchBytes = 0;     ///< scratch the kernel needs per thread
};

/// Packs B [K][N] (codes of zero point 0), the columns' bias c (N values, or null) and
/// multipliers (Mq, Sq) of a Gemm whose A has zero point `zpa`, for the kernel of `isa`
/// (ember_gemm_i8_vnni, _avx512bw, _avx2, or ember_gemm_i8 which reads B in place:
/// `weights` is then empty).
Int8GemmPacking packInt8Gemm(const int8_t* b, const int32_t* c, const std::vector<int32_t>& Mq,
                             const std::vector<int32_t>& Sq, int64_t K, int64_t N, int32_t zpa,
                             Int8Isa isa);

/// Whether an int8 convolution of one group (C -> M channels, taps = KH * KW, P = OH * OW
/// output positions) takes the channel-vectorised kernel ember_conv_i8_vnni_t
/// (AVX512-VNNI only; its image's quad plane, `planeBytes`, within 1 MiB): every kernel
/// larger than 1 x 1 (it reads the taps in place where ember_conv_i8_vnni gathers them),
/// 1 x 1 layers that do not widen (C >= M), and widening 1 x 1 layers on planes where its
/// tiles of 7 positions pad at least 20 % less than the other's panels of 16 (a 7 x 7
/// plane). Elsewhere its transposed stores of the output cost more than it saves.
bool int8ConvByChannels(Int8Isa isa, int64_t group, int64_t C, int64_t M, int64_t taps, int64_t P,
                        int64_t planeBytes);

/// ember_conv_i8_vnni_t's operands: the weights w [M][cg * taps] as ember_gemm_i8_vnni's
/// B of ceil(cg / 4) * taps quads (tap-major, quad (tap, c4) holding channels 4 c4 .. 4 c4
/// + 3), fold, multipliers and shifts padded to blocks of 16 channels; scratchBytes is
/// left to the caller (the quad plane).
Int8GemmPacking packInt8ConvByChannels(const int8_t* w, const int32_t* bias,
                                       const std::vector<int32_t>& Mq,
                                       const std::vector<int32_t>& Sq, int64_t M, int64_t cg,
                                       int64_t taps, int32_t zpx);

} // namespace ember::cpu
