#pragma once
/// \file
/// Typed views of the attributes several backends read, with ONNX's defaults applied in
/// one place: the window of a convolution or pool (kernel, strides, pads, dilations,
/// group) and the flags of a Gemm. The interpreter, the cpu backend and the NPU read
/// these instead of looking up attribute strings each with its own defaults.

#include "ember/graph/Node.h"

#include <cstdint>
#include <vector>

namespace ember {

/// The window of a Conv, ConvTranspose, MaxPool or AveragePool node.
struct WindowAttrs {
  std::vector<int64_t> kernel;    ///< Per spatial dimension.
  std::vector<int64_t> strides;   ///< Default 1.
  std::vector<int64_t> pads;      ///< Begins, then ends; default 0.
  std::vector<int64_t> dilations; ///< Default 1.
  int64_t group = 1;              ///< Conv/ConvTranspose; 1 for pools.
  size_t spatial() const { return strides.size(); }
  int64_t padBegin(size_t d) const { return pads.at(d); }
  int64_t padEnd(size_t d) const { return pads.at(d + spatial()); }
};

/// Reads the window of a node with `spatial` spatial dimensions: the kernel from
/// `filterSpatial` (a convolution's filter) or else the kernel_shape attribute. Throws
/// ember::Error when an attribute has the wrong number of values.
WindowAttrs windowOf(const Attrs& a, size_t spatial, const Shape* filterSpatial = nullptr);

/// The flags of a Gemm node: Y = alpha * A' * B' + beta * C.
struct GemmAttrs {
  bool transA = false, transB = false;
  double alpha = 1.0, beta = 1.0;
  /// The normalize-gemm form the int8 kernels and the NPU take: transA = 0, alpha =
  /// beta = 1 (B may be transposed).
  bool normalized() const { return !transA && alpha == 1.0 && beta == 1.0; }
};
GemmAttrs gemmOf(const Attrs& a);

} // namespace ember
