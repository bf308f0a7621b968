// Typed views of the reduction kinds' attributes, with ONNX's defaults.
#include "ember/graph/attrs/ReductionAttrs.h"

namespace ember {

ReduceAttrs reduceOf(const Attrs& a) {
  ReduceAttrs r;
  r.axes = a.getInts("axes");
  r.keepDims = a.getInt("keepdims", 1) != 0;
  r.noopWithEmptyAxes = a.getInt("noop_with_empty_axes", 0) != 0;
  return r;
}

ArgReduceAttrs argReduceOf(const Attrs& a) {
  ArgReduceAttrs r;
  r.axis = a.getInt("axis", 0);
  r.keepDims = a.getInt("keepdims", 1) != 0;
  r.selectLastIndex = a.getInt("select_last_index", 0) != 0;
  return r;
}

} // namespace ember
