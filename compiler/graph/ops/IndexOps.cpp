// Type inference of the index node kinds: TopK, OneHot, GatherND, ScatterElements and
// ScatterND. Index operands are int32 or int64; k and depth are attributes (the
// importer resolves them at compile time).
#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/OpInfo.h"

#include <algorithm>

namespace ember {

namespace {

using Ins = std::vector<NodeValue>;
using Types = std::vector<Type>;

std::string str(int64_t v) {
  return std::to_string(v);
}

void requireIndices(const NodeValue& v) {
  requireKind(v, {ElemKind::Int32, ElemKind::Int64}, "indices");
}

Types topKInfer(const Ins& in, const Attrs& a) {
  requireKind(in[0], wideNumericKinds(), "input");
  Shape d = in[0].dims();
  if (d.empty())
    inferError("input must have rank >= 1");
  const TopKAttrs t = topKOf(a);
  const size_t axis = size_t(normalizeAxis(t.axis, d.size()));
  const int64_t k = t.k;
  if (k < 0 || k > d[axis])
    inferError("k = " + str(k) + " is not in [0, " + str(d[axis]) + "] (axis " +
               str(int64_t(axis)) + " of " + shapeToString(d) + ")");
  d[axis] = k;
  return {Type(in[0].kind(), d), Type(ElemKind::Int64, d)};
}

Types oneHotInfer(const Ins& in, const Attrs& a) {
  requireKind(in[0], wideNumericKinds(), "indices");
  if (in[1].dims() != Shape{2})
    inferError("values " + shapeToString(in[1].dims()) + " must be [2] (off, on)");
  const OneHotAttrs oh = oneHotOf(a);
  const int64_t depth = oh.depth;
  if (depth < 1)
    inferError("depth " + str(depth) + " must be >= 1");
  Shape out = in[0].dims();
  const int64_t rank = int64_t(out.size()) + 1;
  int64_t axis = oh.axis;
  if (axis < -rank || axis >= rank)
    inferError("axis " + str(axis) + " is out of range for a result of rank " + str(rank));
  if (axis < 0)
    axis += rank;
  out.insert(out.begin() + axis, depth);
  numElements(out);
  return {Type(in[1].kind(), out)};
}

Types gatherNDInfer(const Ins& in, const Attrs& a) {
  requireIndices(in[1]);
  const Shape& d = in[0].dims();
  const Shape& idx = in[1].dims();
  const int64_t b = gatherNDOf(a).batchDims;
  if (idx.empty())
    inferError("indices must have rank >= 1");
  const int64_t m = idx.back();
  if (b < 0 || b >= int64_t(std::min(d.size(), idx.size())) || m < 1 || b + m > int64_t(d.size()))
    inferError("indices " + shapeToString(idx) + " with batch_dims " + str(b) +
               " do not fit data " + shapeToString(d));
  for (int64_t i = 0; i < b; ++i)
    if (d[size_t(i)] != idx[size_t(i)])
      inferError("batch dimension " + str(i) + " differs: data " + shapeToString(d) + ", indices " +
                 shapeToString(idx));
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), d.begin() + b + m, d.end());
  return {Type(in[0].kind(), out)};
}

void checkReduction(const Attrs& a) {
  const std::string r = scatterOf(a).reduction;
  if (r != "none" && r != "add" && r != "mul")
    inferError("reduction '" + r + "' is not none, add or mul");
}

Types scatterElementsInfer(const Ins& in, const Attrs& a) {
  requireIndices(in[1]);
  requireKind(in[2], {in[0].kind()}, "updates");
  const Shape& d = in[0].dims();
  if (d.empty() || in[1].dims().size() != d.size() || in[2].dims() != in[1].dims())
    inferError("indices " + shapeToString(in[1].dims()) + " and updates " +
               shapeToString(in[2].dims()) + " must have one shape, of the rank of data " +
               shapeToString(d));
  const size_t axis = size_t(normalizeAxis(scatterOf(a).axis, d.size()));
  for (size_t i = 0; i < d.size(); ++i)
    if (i != axis && in[1].dims()[i] > d[i])
      inferError("indices " + shapeToString(in[1].dims()) + " exceed data " + shapeToString(d) +
                 " in dimension " + str(int64_t(i)));
  checkReduction(a);
  return {in[0].type()};
}

Types scatterNDInfer(const Ins& in, const Attrs& a) {
  requireIndices(in[1]);
  requireKind(in[2], {in[0].kind()}, "updates");
  const Shape& d = in[0].dims();
  const Shape& idx = in[1].dims();
  if (idx.empty() || idx.back() < 1 || idx.back() > int64_t(d.size()))
    inferError("indices " + shapeToString(idx) + " do not fit data " + shapeToString(d));
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), d.begin() + idx.back(), d.end());
  if (in[2].dims() != want)
    inferError("updates " + shapeToString(in[2].dims()) + " must be " + shapeToString(want));
  checkReduction(a);
  return {in[0].type()};
}

void add(NodeKind k, InferFn fn, std::vector<std::string> operands, unsigned minInputs) {
  registerOpInfo({k, std::move(operands), minInputs, std::move(fn)});
}

} // namespace

void registerIndexOps() {
  using K = NodeKind;
  add(K::TopK, topKInfer, {"input"}, 1);
  add(K::OneHot, oneHotInfer, {"indices", "values"}, 2);
  add(K::GatherND, gatherNDInfer, {"data", "indices"}, 2);
  add(K::ScatterElements, scatterElementsInfer, {"data", "indices", "updates"}, 3);
  add(K::ScatterND, scatterNDInfer, {"data", "indices", "updates"}, 3);
}

} // namespace ember
