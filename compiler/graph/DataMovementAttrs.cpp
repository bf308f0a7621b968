// Typed views of the data-movement and index kinds' attributes, with ONNX's defaults.
#include "ember/graph/attrs/DataMovementAttrs.h"

namespace ember {

namespace {

std::optional<std::vector<int64_t>> optInts(const Attrs& a, const char* name) {
  if (!a.has(name))
    return std::nullopt;
  return a.getInts(name);
}

} // namespace

ShapeAttrs shapeAttrsOf(const Attrs& a) {
  return {optInts(a, "shape")};
}

TransposeAttrs transposeOf(const Attrs& a) {
  TransposeAttrs t;
  t.perm = a.getInts("perm");
  t.hasPerm = a.has("perm");
  return t;
}

std::vector<int64_t> TransposeAttrs::resolved(size_t rank) const {
  if (hasPerm)
    return perm;
  std::vector<int64_t> p;
  for (size_t i = rank; i-- > 0;)
    p.push_back(int64_t(i));
  return p;
}

AxisAttrs axisOf(const Attrs& a) {
  return {a.getInt("axis", 0)};
}

SplitAttrs splitOf(const Attrs& a) {
  return {a.getInt("axis", 0), a.getInts("split")};
}

SliceAttrs sliceOf(const Attrs& a) {
  return {optInts(a, "starts"), optInts(a, "ends"), optInts(a, "steps")};
}

std::vector<int64_t> SliceAttrs::stepsOr(size_t rank) const {
  return steps.value_or(std::vector<int64_t>(rank, 1));
}

PadAttrs padOf(const Attrs& a) {
  PadAttrs p;
  p.pads = optInts(a, "pads");
  p.mode = a.getString("mode", "constant");
  p.value = a.getFloat("value", 0.0);
  return p;
}

TileAttrs tileOf(const Attrs& a) {
  return {optInts(a, "repeats")};
}

CumSumAttrs cumSumOf(const Attrs& a) {
  CumSumAttrs c;
  c.axis = a.getInt("axis", 0);
  c.exclusive = a.getInt("exclusive", 0) != 0;
  c.reverse = a.getInt("reverse", 0) != 0;
  return c;
}

TriluAttrs triluOf(const Attrs& a) {
  return {a.getInt("upper", 1) != 0, a.getInt("k", 0)};
}

BlockAttrs blockOf(const Attrs& a) {
  return {a.getInt("blocksize", 0), a.getString("mode", "DCR")};
}

ResizeAttrs resizeOf(const Attrs& a) {
  ResizeAttrs r;
  r.sizes = optInts(a, "sizes");
  if (a.has("scales"))
    r.scales = a.getFloats("scales");
  r.roi = a.getFloats("roi");
  r.mode = a.getString("mode", "nearest");
  r.coordinateTransformationMode = a.getString("coordinate_transformation_mode", "half_pixel");
  r.nearestMode = a.getString("nearest_mode", "round_prefer_floor");
  r.cubicCoeffA = a.getFloat("cubic_coeff_a", -0.75);
  r.excludeOutside = a.getInt("exclude_outside", 0) != 0;
  r.extrapolationValue = a.getFloat("extrapolation_value", 0.0);
  return r;
}

TopKAttrs topKOf(const Attrs& a) {
  TopKAttrs t;
  t.k = a.getInt("k", -1);
  t.axis = a.getInt("axis", -1);
  t.largest = a.getInt("largest", 1) != 0;
  return t;
}

OneHotAttrs oneHotOf(const Attrs& a) {
  return {a.getInt("depth", 0), a.getInt("axis", -1)};
}

GatherNDAttrs gatherNDOf(const Attrs& a) {
  return {a.getInt("batch_dims", 0)};
}

ScatterAttrs scatterOf(const Attrs& a) {
  return {a.getInt("axis", 0), a.getString("reduction", "none")};
}

} // namespace ember
