// Codegen of the float reductions ReduceSum/Mean/Max/Min/SumSquare/L1/L2/Prod/LogSum
// over any axes, and of the int8 ReduceMean: the kept dimensions and the reduced ones
// become two six-dimensional boxes of the input's strides. ArgMax / ArgMin along one axis.
#include "Codegen.h"
#include "Strides.h"
#include "libjit/OpCodes.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/quantization/Numerics.h"

namespace ember::cpu {

namespace {

using namespace jitops::reduce;

const std::pair<NodeKind, int> kOps[] = {
    {NodeKind::ReduceSum, kSum},
    {NodeKind::ReduceMean, kMean},
    {NodeKind::ReduceMax, kMax},
    {NodeKind::ReduceMin, kMin},
    {NodeKind::ReduceSumSquare, kSumSquare},
    {NodeKind::ReduceL2, kL2},
    {NodeKind::ReduceL1, kL1},
    {NodeKind::ReduceProd, kProd},
    {NodeKind::ReduceLogSum, kLogSum},
};

/// The kept and the reduced dimensions of the input as two boxes of its strides.
struct ReduceBoxes {
  Box6<1> kept, reduced;
};

ReduceBoxes reduceBoxes(const Op& n) {
  const Shape& x = n.input(0).dims();
  const std::vector<bool> r = reducedAxes(n.attrs(), x.size());
  const std::vector<int64_t> st = contiguousStrides(x);
  Shape kd, rd;
  std::vector<int64_t> ks, rs;
  for (size_t i = 0; i < r.size(); ++i) {
    (r[i] ? rd : kd).push_back(x[i]);
    (r[i] ? rs : ks).push_back(st[i]);
  }
  return {simplifyBox<1>(kd, {ks}), simplifyBox<1>(rd, {rs})};
}

/// The boxes, when they fit six dimensions and reduce at least one element per output.
bool reducible(const Op& n) {
  try {
    const ReduceBoxes b = reduceBoxes(n);
    return numElements(b.reduced.dims) > 0;
  } catch (const std::exception&) {
    return false;
  }
}

bool supportsReduce(const Op& n) {
  const Type& x = n.input(0).type();
  if (x.kind != ElemKind::Float32 || x.quant.isQuantized() || n.numInputs() != 1)
    return false;
  return reducible(n);
}

void emitReduce(const Op& n, CodegenContext& ctx) {
  const ReduceBoxes b = reduceBoxes(n);
  int op = kSum;
  for (const auto& [k, o] : kOps)
    if (k == n.kind())
      op = o;
  ctx.call("ember_reduce_f32",
           {ctx.i32(op), ctx.addr(n.input(0)), ctx.result(n), ctx.int64Array(b.kept.dims),
            ctx.int64Array(b.kept.strides[0]), ctx.int64Array(b.reduced.dims),
            ctx.int64Array(b.reduced.strides[0]), ctx.tid(), ctx.nth()});
}

/// Int8 ReduceMean (docs/numerics.md 4.5): the sum of (x - zp_x) over the reduced
/// elements, requantized by s_x / (s_y * n).
bool supportsReduceMeanInt8(const Op& n) {
  return n.numInputs() == 1 && n.input(0).type().isPerTensorInt8() &&
         n.resultType().isPerTensorInt8() && reducible(n);
}

void emitReduceMeanInt8(const Op& n, CodegenContext& ctx) {
  const ReduceBoxes b = reduceBoxes(n);
  const Type &x = n.input(0).type(), &y = n.resultType();
  const quant::Multiplier m =
      quant::averageMultiplier(x.quant.scales[0], y.quant.scales[0], numElements(b.reduced.dims));
  ctx.call("ember_reduce_mean_i8",
           {ctx.addr(n.input(0)), ctx.result(n), ctx.int64Array(b.kept.dims),
            ctx.int64Array(b.kept.strides[0]), ctx.int64Array(b.reduced.dims),
            ctx.int64Array(b.reduced.strides[0]), ctx.i32(x.quant.zeroPoints[0]), ctx.i32(m.M),
            ctx.i32(m.S), ctx.i32(y.quant.zeroPoints[0]), ctx.tid(), ctx.nth()});
}

bool supportsArg(const Op& n) {
  const Type& x = n.input(0).type();
  return x.kind == ElemKind::Float32 && !x.quant.isQuantized() && !x.dims.empty() &&
         n.resultType().kind == ElemKind::Int64;
}

void emitArg(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  const ArgReduceAttrs ar = argReduceOf(n.attrs());
  int64_t axis = ar.axis;
  if (axis < 0)
    axis += int64_t(d.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= d[size_t(i)];
  for (size_t i = size_t(axis) + 1; i < d.size(); ++i)
    inner *= d[i];
  if (outer * inner == 0)
    return;
  ctx.call("ember_argextreme_f32",
           {ctx.i32(n.kind() == NodeKind::ArgMax), ctx.i32(ar.selectLastIndex),
            ctx.addr(n.input(0)), ctx.result(n), ctx.i64(outer), ctx.i64(d[size_t(axis)]),
            ctx.i64(inner), ctx.tid(), ctx.nth()});
}

} // namespace

void registerReduceCodegen() {
  registerCodegenUnit(NodeKind::ArgMax, {"reduce", supportsArg, emitArg});
  registerCodegenUnit(NodeKind::ArgMin, {"reduce", supportsArg, emitArg});
  for (const auto& [k, op] : kOps)
    registerCodegenUnit(k, {"reduce", supportsReduce, emitReduce});
  registerCodegenUnit(NodeKind::ReduceMean, {"int8", supportsReduceMeanInt8, emitReduceMeanInt8});
}

} // namespace ember::cpu
