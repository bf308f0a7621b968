// Type inference of the data-movement node kinds. Shapes are static, so every
// shape-like operand is an attribute, already resolved by the importer (Reshape's
// shape has no 0 or -1, Slice's starts/ends/steps are per dimension and clamped).
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

/// The list attribute `name` (`v`, as its view read it), requiring `count` values.
template <typename T>
std::vector<T> listOf(const std::optional<std::vector<T>>& v, const char* name, size_t count) {
  if (!v)
    inferError(std::string("attribute ") + name + " is required");
  if (v->size() != count)
    inferError(std::string("attribute ") + name + " has " + str(int64_t(v->size())) +
               " values, expected " + str(int64_t(count)));
  return *v;
}

Types reshapeInfer(const Ins& in, const Attrs& a) {
  const std::optional<Shape> shape = shapeAttrsOf(a).shape;
  if (!shape)
    inferError("attribute shape is required");
  const Shape& s = *shape;
  for (int64_t d : s)
    if (d < 0)
      inferError("attribute shape " + shapeToString(s) + " is not fully resolved");
  if (numElements(s) != in[0].type().size())
    inferError("cannot reshape " + shapeToString(in[0].dims()) + " (" + str(in[0].type().size()) +
               " elements) to " + shapeToString(s) + " (" + str(numElements(s)) + " elements)");
  return {Type(in[0].kind(), s, in[0].type().quant)};
}

Types transposeInfer(const Ins& in, const Attrs& a) {
  const Shape& d = in[0].dims();
  const std::vector<int64_t> perm = transposeOf(a).resolved(d.size());
  if (perm.size() != d.size())
    inferError("perm " + shapeToString(perm) + " does not match rank " + str(int64_t(d.size())));
  std::vector<bool> seen(d.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(d.size()) || seen[size_t(p)])
      inferError("perm " + shapeToString(perm) + " is not a permutation");
    seen[size_t(p)] = true;
    out.push_back(d[size_t(p)]);
  }
  return {Type(in[0].kind(), out, in[0].type().quant)};
}

Types concatInfer(const Ins& in, const Attrs& a) {
  const Shape& d0 = in[0].dims();
  if (d0.empty())
    inferError("cannot concatenate scalars");
  const size_t axis = size_t(normalizeAxis(axisOf(a).axis, d0.size()));
  Shape out = d0;
  out[axis] = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& d = in[i].dims();
    if (in[i].kind() != in[0].kind())
      inferError("input " + str(int64_t(i)) + " has element kind " + elemKindName(in[i].kind()) +
                 ", input 0 has " + elemKindName(in[0].kind()));
    bool ok = d.size() == d0.size();
    for (size_t k = 0; ok && k < d.size(); ++k)
      ok = k == axis || d[k] == d0[k];
    if (!ok)
      inferError("input " + str(int64_t(i)) + " has shape " + shapeToString(d) +
                 ", which does not match input 0 " + shapeToString(d0) + " outside axis " +
                 str(int64_t(axis)));
    out[axis] += d[axis];
  }
  return {Type(in[0].kind(), out, in[0].type().quant)};
}

Types splitInfer(const Ins& in, const Attrs& a) {
  const Shape& d = in[0].dims();
  if (d.empty())
    inferError("cannot split a scalar");
  const SplitAttrs split = splitOf(a);
  const size_t axis = size_t(normalizeAxis(split.axis, d.size()));
  const std::vector<int64_t>& sizes = split.sizes;
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      inferError("attribute split " + shapeToString(sizes) + " has a negative size");
    total += s;
  }
  if (sizes.empty() || total != d[axis])
    inferError("attribute split " + shapeToString(sizes) + " does not sum to dimension " +
               str(int64_t(axis)) + " of " + shapeToString(d));
  Types out;
  for (int64_t s : sizes) {
    Shape o = d;
    o[axis] = s;
    out.push_back(Type(in[0].kind(), o, in[0].type().quant));
  }
  return out;
}

Types sliceInfer(const Ins& in, const Attrs& a) {
  const Shape& d = in[0].dims();
  const size_t r = d.size();
  const SliceAttrs sl = sliceOf(a);
  std::vector<int64_t> starts = listOf(sl.starts, "starts", r), ends = listOf(sl.ends, "ends", r);
  std::vector<int64_t> steps = sl.steps ? listOf(sl.steps, "steps", r) : sl.stepsOr(r);
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t s = starts[i], e = ends[i], st = steps[i];
    const bool ok = st > 0 ? (0 <= s && s <= d[i] && 0 <= e && e <= d[i])
                           : (st < 0 && -1 <= s && s < std::max<int64_t>(d[i], 1) && -1 <= e &&
                              e < std::max<int64_t>(d[i], 1));
    if (!ok)
      inferError("dimension " + str(int64_t(i)) + " of " + shapeToString(d) + ": start " + str(s) +
                 ", end " + str(e) + ", step " + str(st) + " are not normalised");
    out[i] = d[i] == 0 ? 0
             : st > 0  ? std::max<int64_t>(0, (e - s + st - 1) / st)
                       : std::max<int64_t>(0, (s - e + (-st) - 1) / (-st));
  }
  return {Type(in[0].kind(), out, in[0].type().quant)};
}

Types gatherInfer(const Ins& in, const Attrs& a) {
  const Shape& d = in[0].dims();
  requireKind(in[1], {ElemKind::Int32, ElemKind::Int64}, "indices");
  if (d.empty())
    inferError("data must have rank >= 1");
  const size_t axis = size_t(normalizeAxis(axisOf(a).axis, d.size()));
  Shape out(d.begin(), d.begin() + std::ptrdiff_t(axis));
  out.insert(out.end(), in[1].dims().begin(), in[1].dims().end());
  out.insert(out.end(), d.begin() + std::ptrdiff_t(axis) + 1, d.end());
  return {Type(in[0].kind(), out, in[0].type().quant)};
}

Types gatherElementsInfer(const Ins& in, const Attrs& a) {
  const Shape& d = in[0].dims();
  requireKind(in[1], {ElemKind::Int32, ElemKind::Int64}, "indices");
  if (d.empty() || in[1].dims().size() != d.size())
    inferError("indices " + shapeToString(in[1].dims()) + " must have the rank of data " +
               shapeToString(d) + " (>= 1)");
  const size_t axis = size_t(normalizeAxis(axisOf(a).axis, d.size()));
  for (size_t i = 0; i < d.size(); ++i)
    if (i != axis && in[1].dims()[i] > d[i])
      inferError("indices " + shapeToString(in[1].dims()) + " exceed data " + shapeToString(d) +
                 " in dimension " + str(int64_t(i)));
  return {Type(in[0].kind(), in[1].dims(), in[0].type().quant)};
}

Types padInfer(const Ins& in, const Attrs& a) {
  const Shape& d = in[0].dims();
  const PadAttrs pa = padOf(a);
  const std::vector<int64_t> pads = listOf(pa.pads, "pads", 2 * d.size());
  const std::string& mode = pa.mode;
  if (in.size() > 1 && in[1] && (in[1].kind() != in[0].kind() || in[1].type().size() != 1))
    inferError("value operand " + in[1].type().toString() + " must be one element of the " +
               "input's kind");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    inferError("mode '" + mode + "' is not constant, reflect or edge");
  Shape out(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    const std::string what = "dimension " + str(int64_t(i)) + " of the result";
    out[i] = checkedAdd(checkedAdd(d[i], pads[i], what), pads[i + d.size()], what);
    if (out[i] < 0)
      inferError("pads " + shapeToString(pads) + " remove more than dimension " + str(int64_t(i)) +
                 " of " + shapeToString(d));
    const int64_t p = std::max(pads[i], pads[i + d.size()]);
    if (p > 0 && mode != "constant" && (d[i] == 0 || (mode == "reflect" && p >= d[i])))
      inferError("mode " + mode + " cannot pad dimension " + str(int64_t(i)) + " of extent " +
                 str(d[i]) + " by " + str(p));
  }
  return {Type(in[0].kind(), out, in[0].type().quant)};
}

Types expandInfer(const Ins& in, const Attrs& a) {
  const std::optional<Shape> shape = shapeAttrsOf(a).shape;
  if (!shape)
    inferError("attribute shape is required");
  return {Type(in[0].kind(), broadcastShapes(in[0].dims(), *shape), in[0].type().quant)};
}

Types tileInfer(const Ins& in, const Attrs& a) {
  const Shape& d = in[0].dims();
  const std::vector<int64_t> rep = listOf(tileOf(a).repeats, "repeats", d.size());
  Shape out(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    if (rep[i] < 0)
      inferError("repeats " + shapeToString(rep) + " has a negative value");
    out[i] = checkedMul(d[i], rep[i], "dimension " + str(int64_t(i)) + " of the result");
  }
  return {Type(in[0].kind(), out, in[0].type().quant)};
}

Types cumSumInfer(const Ins& in, const Attrs& a) {
  requireKind(in[0], wideNumericKinds(), "input");
  if (in[0].dims().empty())
    inferError("input must have rank >= 1");
  normalizeAxis(cumSumOf(a).axis, in[0].dims().size());
  return {in[0].type()};
}

Types triluInfer(const Ins& in, const Attrs&) {
  if (in[0].dims().size() < 2)
    inferError("input " + shapeToString(in[0].dims()) + " must have rank >= 2");
  return {in[0].type()};
}

Types depthToSpaceInfer(const Ins& in, const Attrs& a) {
  requireRank(in[0], 4, "input");
  const BlockAttrs blk = blockOf(a);
  const int64_t b = blk.blockSize;
  const Shape& d = in[0].dims();
  const std::string& mode = blk.mode;
  if (mode != "DCR" && mode != "CRD")
    inferError("mode '" + mode + "' is not DCR or CRD");
  if (b < 1 || b > d[1] || d[1] % (b * b) != 0)
    inferError("blocksize " + str(b) + " squared does not divide the channels of " +
               shapeToString(d));
  return {Type(in[0].kind(),
               {d[0], d[1] / (b * b), checkedMul(d[2], b, "the result's height"),
                checkedMul(d[3], b, "the result's width")},
               in[0].type().quant)};
}

Types spaceToDepthInfer(const Ins& in, const Attrs& a) {
  requireRank(in[0], 4, "input");
  const int64_t b = blockOf(a).blockSize;
  const Shape& d = in[0].dims();
  if (b < 1 || d[2] % b != 0 || d[3] % b != 0)
    inferError("blocksize " + str(b) + " does not divide the spatial dimensions of " +
               shapeToString(d));
  const int64_t c =
      checkedMul(checkedMul(d[1], b, "the result's channels"), b, "the result's channels");
  return {Type(in[0].kind(), {d[0], c, d[2] / b, d[3] / b}, in[0].type().quant)};
}

Types resizeInfer(const Ins& in, const Attrs& a) {
  requireKind(in[0], {ElemKind::Float32, ElemKind::Int8, ElemKind::Int32, ElemKind::Int64},
              "input");
  const ResizeAttrs rs = resizeOf(a);
  const Shape sizes = listOf(rs.sizes, "sizes", in[0].dims().size());
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 0 || (sizes[i] > 0 && in[0].dims()[i] == 0))
      inferError("attribute sizes " + shapeToString(sizes) + " cannot be reached from " +
                 shapeToString(in[0].dims()));
  if (rs.scales && rs.scales->size() != sizes.size())
    inferError("attribute scales must have one value per dimension");
  const std::string& mode = rs.mode;
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    inferError("mode '" + mode + "' is not nearest, linear or cubic");
  return {Type(in[0].kind(), sizes, in[0].type().quant)};
}

// Expand, Tile, Pad and Resize can ask for absurd sizes from small attributes:
// Function::create refuses results over kMaxTensorElements before anything is allocated.
void add(NodeKind k, InferFn fn, std::vector<std::string> operands, unsigned minInputs = 1) {
  registerOpInfo({k, std::move(operands), minInputs, std::move(fn)});
}

} // namespace

void registerDataMovementOps() {
  using K = NodeKind;
  add(K::Reshape, reshapeInfer, {"input"});
  add(K::Transpose, transposeInfer, {"input"});
  add(K::Concat, concatInfer, {"input", "..."});
  add(K::Split, splitInfer, {"input"});
  add(K::Slice, sliceInfer, {"input"});
  add(K::Gather, gatherInfer, {"data", "indices"}, 2);
  add(K::GatherElements, gatherElementsInfer, {"data", "indices"}, 2);
  add(K::Pad, padInfer, {"input", "value"});
  add(K::Expand, expandInfer, {"input"});
  add(K::Tile, tileInfer, {"input"});
  add(K::CumSum, cumSumInfer, {"input"});
  add(K::Trilu, triluInfer, {"input"});
  add(K::DepthToSpace, depthToSpaceInfer, {"input"});
  add(K::SpaceToDepth, spaceToDepthInfer, {"input"});
  add(K::Resize, resizeInfer, {"input"});
  // Their int8 forms move codes: the result keeps the input's parameters (a Resize's only
  // when nearest, the one the quantizer makes int8).
  addOpTraits({K::Reshape, K::Transpose, K::Slice, K::Pad, K::Gather, K::Split, K::Expand, K::Tile,
               K::DepthToSpace, K::SpaceToDepth, K::Resize},
              {OpTrait::KeepsQuantization});
}

} // namespace ember
