#pragma once
/// \file
/// Typed views of the attributes of the data-movement kinds (Nodes.def: "Data
/// movement") and of the index kinds (TopK, OneHot, GatherND, Scatter*), with ONNX's
/// defaults. Shape-like operands are attributes in Ember, so most of these are lists;
/// a list the type inference requires is std::optional here, so that "absent" stays
/// distinguishable from "empty".

#include "ember/graph/Node.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember {

/// Reshape and Expand: the target shape.
struct ShapeAttrs {
  std::optional<std::vector<int64_t>> shape;
};
ShapeAttrs shapeAttrsOf(const Attrs& a);

/// Transpose: the permutation as written (empty when absent, which ONNX reads as the
/// reversal of the dimensions: see resolved()).
struct TransposeAttrs {
  std::vector<int64_t> perm;
  bool hasPerm = false;
  /// The permutation of a rank-`rank` input: perm, or the reversal when absent.
  std::vector<int64_t> resolved(size_t rank) const;
};
TransposeAttrs transposeOf(const Attrs& a);

/// The single `axis` of Concat, Gather, GatherElements, ScatterElements and CumSum
/// (ONNX default 0).
struct AxisAttrs {
  int64_t axis = 0;
};
AxisAttrs axisOf(const Attrs& a);

/// Split: the axis (default 0) and the sizes of the results.
struct SplitAttrs {
  int64_t axis = 0;
  std::vector<int64_t> sizes;
};
SplitAttrs splitOf(const Attrs& a);

/// Slice (normalised by the importer: one value per dimension).
struct SliceAttrs {
  std::optional<std::vector<int64_t>> starts, ends, steps;
  /// Steps, or 1 for each of `rank` dimensions when absent.
  std::vector<int64_t> stepsOr(size_t rank) const;
};
SliceAttrs sliceOf(const Attrs& a);

/// Pad: pads (all begins, then all ends), mode and the constant value.
struct PadAttrs {
  std::optional<std::vector<int64_t>> pads;
  std::string mode = "constant";
  double value = 0.0;
};
PadAttrs padOf(const Attrs& a);

/// Tile: the repeats per dimension.
struct TileAttrs {
  std::optional<std::vector<int64_t>> repeats;
};
TileAttrs tileOf(const Attrs& a);

/// CumSum: axis (default 0), exclusive and reverse.
struct CumSumAttrs {
  int64_t axis = 0;
  bool exclusive = false, reverse = false;
};
CumSumAttrs cumSumOf(const Attrs& a);

/// Trilu: upper (default true) and the diagonal offset k.
struct TriluAttrs {
  bool upper = true;
  int64_t k = 0;
};
TriluAttrs triluOf(const Attrs& a);

/// DepthToSpace and SpaceToDepth: blocksize (required: 0 when absent, which type
/// inference rejects) and DepthToSpace's mode.
struct BlockAttrs {
  int64_t blockSize = 0;
  std::string mode = "DCR";
};
BlockAttrs blockOf(const Attrs& a);

/// Resize, with the ONNX attributes the importer resolves (sizes always; scales and roi
/// when the model gave them).
struct ResizeAttrs {
  std::optional<std::vector<int64_t>> sizes;
  std::optional<std::vector<double>> scales;
  std::vector<double> roi;
  std::string mode = "nearest";
  std::string coordinateTransformationMode = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
};
ResizeAttrs resizeOf(const Attrs& a);

/// TopK: k (required: -1 when absent, which type inference rejects), axis (default -1)
/// and largest.
struct TopKAttrs {
  int64_t k = -1;
  int64_t axis = -1;
  bool largest = true;
};
TopKAttrs topKOf(const Attrs& a);

/// OneHot: depth (required: 0 when absent) and the axis of the new dimension (-1).
struct OneHotAttrs {
  int64_t depth = 0;
  int64_t axis = -1;
};
OneHotAttrs oneHotOf(const Attrs& a);

/// GatherND: batch_dims.
struct GatherNDAttrs {
  int64_t batchDims = 0;
};
GatherNDAttrs gatherNDOf(const Attrs& a);

/// ScatterElements and ScatterND: axis (ScatterElements, default 0) and reduction
/// (none, add or mul).
struct ScatterAttrs {
  int64_t axis = 0;
  std::string reduction = "none";
};
ScatterAttrs scatterOf(const Attrs& a);

} // namespace ember
