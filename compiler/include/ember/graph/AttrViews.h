#pragma once
/// \file
/// Typed views of node attributes, with ONNX's defaults applied in one place. Outside
/// the ONNX importer and the views themselves (this header, attrs/*.h and their
/// sources in compiler/graph/), nothing in the compiler reads an attribute by its name:
/// type inference, passes, quantization, the interpreter and the backends read these
/// views (tests/architecture/check_attr_reads.py enforces it).
///
/// This header holds the two views most kinds share: the window of a convolution or
/// pool and the flags of a Gemm. It includes every family's view.

#include "ember/graph/Node.h"
#include "ember/graph/attrs/DataMovementAttrs.h"
#include "ember/graph/attrs/ElementwiseAttrs.h"
#include "ember/graph/attrs/FusedActivation.h"
#include "ember/graph/attrs/NNAttrs.h"
#include "ember/graph/attrs/QuantAttrs.h"
#include "ember/graph/attrs/ReductionAttrs.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember {

/// The window of a Conv, ConvTranspose, MaxPool or AveragePool node: the one window
/// view of the compiler (type inference, the interpreter, the cpu backend and the NPU).
struct WindowAttrs {
  std::vector<int64_t> kernel;        ///< Per spatial dimension.
  std::vector<int64_t> strides;       ///< Default 1.
  std::vector<int64_t> pads;          ///< Begins, then ends; default 0.
  std::vector<int64_t> dilations;     ///< Default 1.
  std::vector<int64_t> outputPadding; ///< ConvTranspose; default 0.
  int64_t group = 1;                  ///< Conv/ConvTranspose; 1 for pools.
  bool ceilMode = false;              ///< Pools.
  bool countIncludePad = false;       ///< AveragePool.
  std::string autoPad = "NOTSET";     ///< The importer resolves it into pads.
  size_t spatial() const { return strides.size(); }
  int64_t padBegin(size_t d) const { return pads.at(d); }
  int64_t padEnd(size_t d) const { return pads.at(d + spatial()); }
};

/// Reads the window of a node with `spatial` spatial dimensions. The kernel is
/// `filterSpatial` (a convolution's filter; kernel_shape, when present, must agree) or
/// else the required kernel_shape attribute. Throws ember::Error when an attribute is
/// missing, has the wrong number of values or a value out of range (kernel, strides,
/// dilations >= 1; pads, output_padding >= 0).
WindowAttrs windowOf(const Attrs& a, size_t spatial, const Shape* filterSpatial = nullptr);

/// The group of a Conv or ConvTranspose (default 1), for checks that come before the
/// window's.
int64_t groupOf(const Attrs& a);

/// The flags of a Gemm node: Y = alpha * A' * B' + beta * C.
struct GemmAttrs {
  bool transA = false, transB = false;
  double alpha = 1.0, beta = 1.0;
  /// Whether any of transA, transB, alpha, beta is written (even with its default).
  bool anyWritten = false;
  /// The normalize-gemm form the int8 kernels and the NPU take: transA = 0, alpha =
  /// beta = 1 (B may be transposed).
  bool normalized() const { return !transA && alpha == 1.0 && beta == 1.0; }
};
GemmAttrs gemmOf(const Attrs& a);

} // namespace ember
