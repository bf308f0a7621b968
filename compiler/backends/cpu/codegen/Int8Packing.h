#pragma once
// Packing of the constant operands of the int8 packed-GEMM convolution (the kernels
// ember_conv_i8 of libjit/Int8.cpp and ember_conv_i8_vnni of libjit/Int8Vnni.cpp): the
// weights in the kernel's blocking and the bias with the input's zero point folded in.

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
/// 0) and the optional int32 bias of a convolution whose input has zero point `zpx`: for
/// ember_conv_i8_vnni when `vnni` (the host has avx512vnni), else for ember_conv_i8.
Int8ConvPacking packInt8Conv(const int8_t* w, const int32_t* bias, int64_t M, int64_t group,
                             int64_t K, int64_t taps, int32_t zpx, bool vnni);

} // namespace ember::cpu
