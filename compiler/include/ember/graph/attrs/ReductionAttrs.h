#pragma once
/// \file
/// Typed views of the attributes of the reduction kinds (Reduce*, ArgMax, ArgMin), with
/// ONNX's defaults.

#include "ember/graph/Node.h"

#include <cstdint>
#include <vector>

namespace ember {

/// Reduce*: the axes (empty: all, unless noopWithEmptyAxes) and keepdims.
struct ReduceAttrs {
  std::vector<int64_t> axes;
  bool keepDims = true;
  bool noopWithEmptyAxes = false;
};
ReduceAttrs reduceOf(const Attrs& a);

/// ArgMax / ArgMin: the axis (default 0), keepdims and select_last_index.
struct ArgReduceAttrs {
  int64_t axis = 0;
  bool keepDims = true;
  bool selectLastIndex = false;
};
ArgReduceAttrs argReduceOf(const Attrs& a);

} // namespace ember
