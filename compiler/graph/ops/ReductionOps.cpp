// Type inference of the reduction node kinds: Reduce* (attributes axes, keepdims,
// noop_with_empty_axes) and ArgMax/ArgMin (axis, keepdims, select_last_index).
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

#include <algorithm>

namespace ember {

namespace {

std::vector<Type> reduceInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], wideNumericKinds(), "input");
  const Shape& d = in[0].dims();
  const std::vector<bool> reduced = reducedAxes(a, d.size());
  const bool keep = reduceOf(a).keepDims;
  Shape out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!reduced[i])
      out.push_back(d[i]);
    else if (keep)
      out.push_back(1);
  }
  return {Type(in[0].kind(), out)};
}

std::vector<Type> argInfer(const std::vector<NodeValue>& in, const Attrs& a) {
  requireKind(in[0], wideNumericKinds(), "input");
  Shape d = in[0].dims();
  if (d.empty())
    inferError("input must have rank >= 1");
  const ArgReduceAttrs ar = argReduceOf(a);
  const size_t axis = static_cast<size_t>(normalizeAxis(ar.axis, d.size()));
  if (d[axis] == 0)
    inferError("cannot take the arg-extremum of an empty axis");
  if (ar.keepDims)
    d[axis] = 1;
  else
    d.erase(d.begin() + static_cast<std::ptrdiff_t>(axis));
  return {Type(ElemKind::Int64, d)};
}

} // namespace

void registerReductionOps() {
  using K = NodeKind;
  for (K k : {K::ReduceMean, K::ReduceSum, K::ReduceMax, K::ReduceMin, K::ReduceProd, K::ReduceL1,
              K::ReduceL2, K::ReduceLogSum, K::ReduceLogSumExp, K::ReduceSumSquare})
    registerOpInfo({k, {"input"}, 1, reduceInfer});
  registerOpInfo({K::ArgMax, {"input"}, 1, argInfer});
  registerOpInfo({K::ArgMin, {"input"}, 1, argInfer});
}

} // namespace ember
