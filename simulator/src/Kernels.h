// Internal: the host kernels of the MAC array's data path. Machine::gemm decides which
// rows a GEMM touches; a GemmKernel computes them, with AVX-512 VNNI when the host has it
// and a portable loop otherwise. Both give the same bits: int32 accumulation modulo 2^32
// (docs/numerics.md, NPU part).
#pragma once

#include "PlatformTypes.h"
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::sim::detail {

/// Host kernels the simulator can use.
enum class HostKernels { Portable, Vnni };

/// The best kernels this host runs (Vnni needs avx512f, bw, dq, vl and vnni, and an array
/// of a multiple of 16 rows).
HostKernels bestHostKernels(unsigned n);

/// One weight block of an n x n MAC array, prepared for the host, and the rows it streams.
class GemmKernel {
public:
  /// `kernels` Vnni falls back to Portable when bestHostKernels(n) is Portable.
  GemmKernel(unsigned n, HostKernels kernels);

  /// Loads a weight block: byte k * n + c holds W[k][c] (output channel k, input c).
  void load(const std::int8_t* w);

  /// For i1 < n1, i0 < n0 (i0 innermost): acc row += act row x W, where the act row of
  /// (i0, i1) starts at `act + i0 * actStep0 + i1 * actStep1` (n int8) and the acc row
  /// at `acc + i0 * accStep0 + i1 * accStep1` (n int32, wrapping). Rows are updated one
  /// after another, so acc rows may repeat.
  void rows(const std::uint8_t* act, std::size_t actStep0, std::size_t actStep1, std::uint8_t* acc,
            std::size_t accStep0, std::size_t accStep1, std::uint64_t n0, std::uint64_t n1) const;

  HostKernels kernels() const { return kernels_; }

private:
  void rowsPortable(const std::uint8_t* act, std::size_t actStep0, std::size_t actStep1,
                    std::uint8_t* acc, std::size_t accStep0, std::size_t accStep1, std::uint64_t n0,
                    std::uint64_t n1) const;

  unsigned n_;
  HostKernels kernels_;
  /// Portable: W transposed to int32 [c][k]. Vnni: dword (j, k) holds W[k][4j..4j+3].
  std::vector<std::int32_t> w_;
  /// Vnni: -128 * sum_c W[k][c] (the activations enter as unsigned a + 128).
  std::vector<std::int32_t> corr_;
  mutable std::vector<std::uint32_t> scratch_; ///< Portable: one acc row.
};

/// The requantize class's lanes (ARCHITECTURE section 4) over whole rows: int32 acc lanes
/// in, int8 act lanes out (the requantized value saturated to int8, as the act memory
/// stores it). With HostKernels::Vnni it runs on AVX-512 (8 lanes an instruction).
class RequantKernel {
public:
  /// `M` and `S` hold `lanes` multipliers and shifts (1..62), as the param rows do.
  RequantKernel(unsigned lanes, HostKernels kernels, const std::int32_t* M, const std::int32_t* S,
                std::int32_t zp, std::int32_t lo, std::int32_t hi);

  /// One row: `acc` holds `lanes` int32 (little-endian), `act` receives `lanes` int8.
  void row(const std::uint8_t* acc, std::uint8_t* act) const;

  HostKernels kernels() const { return kernels_; }

private:
  unsigned n_;
  HostKernels kernels_;
  std::int32_t zp_, lo_, hi_;
  std::vector<std::int32_t> m32_, s32_; ///< Portable.
  std::vector<std::int64_t> m_, r_, s_; ///< Vnni: M, 2^(S-1), S as int64.
};

} // namespace ember::sim::detail
