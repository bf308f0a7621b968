#include "ember/graph/InferUtil.h"

#include "ember/graph/AttrViews.h"

#include <algorithm>

namespace ember {

int64_t checkedAdd(int64_t a, int64_t b, const std::string& what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    inferError(what + " overflows (" + std::to_string(a) + " + " + std::to_string(b) + ")");
  return r;
}

int64_t checkedMul(int64_t a, int64_t b, const std::string& what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    inferError(what + " overflows (" + std::to_string(a) + " * " + std::to_string(b) + ")");
  return r;
}

void inferError(const std::string& reason) {
  throw Error(reason);
}

Shape broadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      inferError("shapes " + shapeToString(a) + " and " + shapeToString(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalizeAxis(int64_t axis, size_t rank, const char* what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    inferError(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
               std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

AxisSplit splitAtAxis(const Shape& dims, int64_t axis) {
  const size_t a = static_cast<size_t>(normalizeAxis(axis, dims.size()));
  AxisSplit r;
  for (size_t d = 0; d < dims.size(); ++d)
    (d < a ? r.outer : d == a ? r.len : r.inner) *= dims[d];
  return r;
}

AxisSplit layerNormLines(NodeKind kind, const Shape& x, const Attrs& a) {
  if (kind == NodeKind::ChannelLayerNormalization) {
    if (x.size() < 2)
      inferError("a ChannelLayerNormalization needs an input of rank >= 2 (N, C, ...), not " +
                 shapeToString(x));
    return splitAtAxis(x, 1);
  }
  const AxisSplit s = splitAtAxis(x, normOf(a).axis);
  AxisSplit r;
  r.outer = s.outer;
  r.len = s.len * s.inner;
  return r;
}

std::vector<bool> reducedAxes(const Attrs& a, size_t rank) {
  const ReduceAttrs r = reduceOf(a);
  std::vector<bool> reduced(rank, r.axes.empty() && !r.noopWithEmptyAxes);
  for (int64_t ax : r.axes) {
    const int64_t n = normalizeAxis(ax, rank, "axes value");
    if (reduced[static_cast<size_t>(n)])
      inferError("axes lists axis " + std::to_string(n) + " twice");
    reduced[static_cast<size_t>(n)] = true;
  }
  return reduced;
}

bool isUnbroadcastMatMul(const Shape& a, const Shape& b) {
  if (a.size() < 2 || b.size() < 2 || a.back() != b[b.size() - 2])
    return false;
  return b.size() == 2 || (a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin()));
}

bool broadcastsTo(const Shape& s, const Shape& target) {
  if (s.size() > target.size())
    return false;
  const size_t lead = target.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d)
    if (s[d] != 1 && s[d] != target[lead + d])
      return false;
  return true;
}

const std::vector<ElemKind>& wideNumericKinds() {
  static const std::vector<ElemKind> kinds = [] {
    std::vector<ElemKind> v;
    for (ElemKind k : numericElemKinds())
      if (k != ElemKind::Float16)
        v.push_back(k);
    return v;
  }();
  return kinds;
}

const std::vector<ElemKind>& wideFloatKinds() {
  static const std::vector<ElemKind> kinds = {ElemKind::Float32, ElemKind::Float64};
  return kinds;
}

void requireKind(const NodeValue& v, const std::vector<ElemKind>& kinds, const char* operand) {
  for (ElemKind k : kinds)
    if (v.kind() == k)
      return;
  std::string allowed;
  for (ElemKind k : kinds)
    allowed += std::string(allowed.empty() ? "" : "/") + elemKindName(k);
  inferError(std::string(operand) + " has element kind " + elemKindName(v.kind()) + ", expected " +
             allowed);
}

void requireRank(const NodeValue& v, size_t rank, const char* operand) {
  if (v.dims().size() != rank)
    inferError(std::string(operand) + " has rank " + std::to_string(v.dims().size()) +
               ", expected " + std::to_string(rank));
}

} // namespace ember
