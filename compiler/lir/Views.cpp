// Views: the data-movement nodes whose results are contiguous byte ranges of their input.
#include "Views.h"
#include "ember/graph/AttrViews.h"

namespace ember::lir {

namespace {

std::vector<int64_t> stridesOf(const Shape& d) {
  std::vector<int64_t> s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;)
    s[i - 1] = s[i] * d[i];
  return s;
}

/// A Slice is contiguous when, past the leading extent-1 axes, only the first remaining
/// axis is cut (step 1) and every later axis is kept whole.
std::optional<std::vector<size_t>> sliceView(const Node& n, const Type& in) {
  const Shape& d = in.dims;
  const Shape& out = n.resultType().dims;
  if (numElements(out) == 0)
    return std::nullopt;
  const SliceAttrs sl = sliceOf(n.attrs());
  const std::vector<int64_t> starts = sl.starts.value_or(std::vector<int64_t>{});
  const std::vector<int64_t> steps = sl.stepsOr(d.size());
  if (starts.size() != d.size() || steps.size() != d.size())
    return std::nullopt;
  size_t k = 0;
  while (k < out.size() && out[k] == 1)
    ++k;
  if (k < out.size() && steps[k] != 1)
    return std::nullopt;
  for (size_t j = k + 1; j < out.size(); ++j)
    if (out[j] != d[j] || (d[j] > 1 && steps[j] != 1))
      return std::nullopt;
  const std::vector<int64_t> s = stridesOf(d);
  int64_t offset = 0;
  for (size_t i = 0; i < d.size(); ++i)
    offset += starts[i] * s[i];
  return std::vector<size_t>{size_t(offset) * elemSize(in.kind)};
}

/// A Split is a set of views when the axes before its axis have one element in all.
std::optional<std::vector<size_t>> splitView(const Node& n, const Type& in) {
  const Shape& d = in.dims;
  int64_t axis = splitOf(n.attrs()).axis;
  if (axis < 0)
    axis += int64_t(d.size());
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= d[size_t(i)];
  if (outer != 1)
    return std::nullopt;
  std::vector<size_t> offsets;
  size_t offset = 0;
  for (const Type& t : n.resultTypes()) {
    offsets.push_back(offset);
    offset += t.sizeInBytes();
  }
  return offsets;
}

} // namespace

std::optional<std::vector<size_t>> viewOffsets(const Node& n) {
  if (n.numInputs() == 0 || !n.input(0))
    return std::nullopt;
  const Type& in = n.input(0).type();
  for (const Type& t : n.resultTypes())
    if (t.kind != in.kind || t.quant != in.quant)
      return std::nullopt;
  switch (n.kind()) {
  case NodeKind::Reshape:
    return std::vector<size_t>{0};
  case NodeKind::Slice:
    return sliceView(n, in);
  case NodeKind::Split:
    return splitView(n, in);
  default:
    return std::nullopt;
  }
}

} // namespace ember::lir
