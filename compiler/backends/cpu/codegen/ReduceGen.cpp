// Codegen of the float reductions ReduceSum/Mean/Max/Min/SumSquare/L1/L2/Prod/LogSum
// over any axes: the kept dimensions and the reduced ones become two six-dimensional
// boxes of the input's strides. ArgMax / ArgMin along one axis.
#include "Codegen.h"
#include "Strides.h"
#include "libjit/OpCodes.h"

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

/// Whether each input axis is reduced (ONNX: empty axes = all, unless noop_with_empty_axes).
std::vector<bool> reducedAxes(const Op& n) {
  const size_t rank = n.input(0).dims().size();
  const std::vector<int64_t> axes = n.attrs().getInts("axes");
  std::vector<bool> r(rank, axes.empty() && n.attrs().getInt("noop_with_empty_axes", 0) == 0);
  for (int64_t a : axes)
    r.at(size_t(a < 0 ? a + int64_t(rank) : a)) = true;
  return r;
}

bool supportsReduce(const Op& n) {
  const Type& x = n.input(0).type();
  if (x.kind != ElemKind::Float32 || x.quant.isQuantized() || n.numInputs() != 1)
    return false;
  try {
    const std::vector<bool> r = reducedAxes(n);
    const std::vector<int64_t> st = contiguousStrides(x.dims);
    Shape kd, rd;
    std::vector<int64_t> ks, rs;
    for (size_t i = 0; i < r.size(); ++i) {
      (r[i] ? rd : kd).push_back(x.dims[i]);
      (r[i] ? rs : ks).push_back(st[i]);
    }
    simplifyBox<1>(kd, {ks});
    simplifyBox<1>(rd, {rs});
    return numElements(rd) > 0;
  } catch (const std::exception&) {
    return false;
  }
}

void emitReduce(const Op& n, CodegenContext& ctx) {
  const Shape& x = n.input(0).dims();
  const std::vector<bool> r = reducedAxes(n);
  const std::vector<int64_t> st = contiguousStrides(x);
  Shape kd, rd;
  std::vector<int64_t> ks, rs;
  for (size_t i = 0; i < r.size(); ++i) {
    (r[i] ? rd : kd).push_back(x[i]);
    (r[i] ? rs : ks).push_back(st[i]);
  }
  const Box6<1> kept = simplifyBox<1>(kd, {ks}), red = simplifyBox<1>(rd, {rs});
  int op = kSum;
  for (const auto& [k, o] : kOps)
    if (k == n.kind())
      op = o;
  ctx.call("ember_reduce_f32",
           {ctx.i32(op), ctx.addr(n.input(0)), ctx.result(n), ctx.int64Array(kept.dims),
            ctx.int64Array(kept.strides[0]), ctx.int64Array(red.dims),
            ctx.int64Array(red.strides[0]), ctx.tid(), ctx.nth()});
}

bool supportsArg(const Op& n) {
  const Type& x = n.input(0).type();
  return x.kind == ElemKind::Float32 && !x.quant.isQuantized() && !x.dims.empty() &&
         n.resultType().kind == ElemKind::Int64;
}

void emitArg(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  int64_t axis = n.attrs().getInt("axis", 0);
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
           {ctx.i32(n.kind() == NodeKind::ArgMax),
            ctx.i32(n.attrs().getInt("select_last_index", 0) != 0), ctx.addr(n.input(0)),
            ctx.result(n), ctx.i64(outer), ctx.i64(d[size_t(axis)]), ctx.i64(inner), ctx.tid(),
            ctx.nth()});
}

} // namespace

void registerReduceCodegen() {
  registerCodegenUnit(NodeKind::ArgMax, {"reduce", supportsArg, emitArg});
  registerCodegenUnit(NodeKind::ArgMin, {"reduce", supportsArg, emitArg});
  for (const auto& [k, op] : kOps)
    registerCodegenUnit(k, {"reduce", supportsReduce, emitReduce});
}

} // namespace ember::cpu
