// Codegen of data movement (any element kind, codes moved unchanged): Transpose,
// Slice, Expand, Concat, Split, DepthToSpace, constant-mode Pad and an int8 nearest
// Resize by whole factors are strided copies
// (ember_copy_strided) with the source and destination strides of each; Gather copies
// rows (an index out of range is a run-time error naming the node). Reshape is a view (in the
// low-level IR) and emits nothing.
#include "Codegen.h"
#include "Strides.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/InferUtil.h"
#include "ember/graph/ResizeNearest.h"
#include "ember/quantization/Numerics.h"

#include <algorithm>
#include <cstring>

namespace ember::cpu {

namespace {

/// Copies the box `dims` from src (strides ss) to dst (strides ds).
void stridedCopy(CodegenContext& ctx, ElemKind k, llvm::Value* src, llvm::Value* dst,
                 const Shape& dims, const std::vector<int64_t>& ss,
                 const std::vector<int64_t>& ds) {
  if (numElements(dims) == 0)
    return;
  const Box6<2> box = simplifyBox<2>(dims, {ss, ds});
  ctx.call("ember_copy_strided",
           {ctx.i32(int64_t(elemSize(k))), src, dst, ctx.int64Array(box.dims),
            ctx.int64Array(box.strides[0]), ctx.int64Array(box.strides[1]), ctx.tid(), ctx.nth()});
}

llvm::Value* offsetPtr(CodegenContext& ctx, llvm::Value* p, int64_t bytes) {
  return ctx.builder().CreateConstGEP1_64(ctx.builder().getInt8Ty(), p, uint64_t(bytes));
}

/// Moving codes keeps values only when the moved inputs (the first, or all for Concat)
/// have the result's quantization parameters (docs/numerics.md 4.4).
bool sameParams(const Op& n, bool allInputs) {
  for (size_t i = 0; i < (allInputs ? n.numInputs() : 1); ++i)
    if (n.input(i).type().quant != n.resultType().quant)
      return false;
  return true;
}

bool supportsSimple(const Op& n) {
  return n.numResults() == 1 && n.resultType().rank() <= 6 &&
         sameParams(n, n.kind() == NodeKind::Concat);
}

void emitTranspose(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  const std::vector<int64_t> perm = transposeOf(n.attrs()).resolved(d.size());
  const std::vector<int64_t> s = contiguousStrides(d);
  Shape walk;
  std::vector<int64_t> src;
  for (int64_t p : perm) {
    walk.push_back(d[size_t(p)]);
    src.push_back(s[size_t(p)]);
  }
  stridedCopy(ctx, n.resultType().kind, ctx.addr(n.input(0)), ctx.result(n), walk, src,
              contiguousStrides(walk));
}

void emitSlice(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  const SliceAttrs sl = sliceOf(n.attrs());
  const std::vector<int64_t> starts = sl.starts.value_or(std::vector<int64_t>{});
  const std::vector<int64_t> steps = sl.stepsOr(d.size());
  if (starts.size() != d.size() || steps.size() != d.size())
    throw Error("starts/steps do not cover every dimension");
  const std::vector<int64_t> s = contiguousStrides(d);
  std::vector<int64_t> src(d.size());
  int64_t base = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    base += starts[i] * s[i];
    src[i] = steps[i] * s[i];
  }
  const Shape& out = n.resultType().dims;
  const int64_t es = int64_t(elemSize(n.resultType().kind));
  stridedCopy(ctx, n.resultType().kind, offsetPtr(ctx, ctx.addr(n.input(0)), base * es),
              ctx.result(n), out, src, contiguousStrides(out));
}

void emitExpand(const Op& n, CodegenContext& ctx) {
  const Shape& out = n.resultType().dims;
  stridedCopy(ctx, n.resultType().kind, ctx.addr(n.input(0)), ctx.result(n), out,
              broadcastStrides(n.input(0).dims(), out), contiguousStrides(out));
}

/// Concat / Split: each part is a box of the joined tensor at an offset along the axis.
void emitConcat(const Op& n, CodegenContext& ctx) {
  const Shape& out = n.resultType().dims;
  const int64_t axis = normalizeAxis(axisOf(n.attrs()).axis, out.size());
  const std::vector<int64_t> os = contiguousStrides(out);
  const int64_t es = int64_t(elemSize(n.resultType().kind));
  int64_t at = 0;
  for (const OpInput& v : n.inputs()) {
    stridedCopy(ctx, n.resultType().kind, ctx.addr(v),
                offsetPtr(ctx, ctx.result(n), at * os[size_t(axis)] * es), v.dims(),
                contiguousStrides(v.dims()), os);
    at += v.dims()[size_t(axis)];
  }
}

void emitSplit(const Op& n, CodegenContext& ctx) {
  const Shape& in = n.input(0).dims();
  const int64_t axis = normalizeAxis(splitOf(n.attrs()).axis, in.size());
  const std::vector<int64_t> is = contiguousStrides(in);
  const int64_t es = int64_t(elemSize(n.input(0).kind()));
  int64_t at = 0;
  for (unsigned r = 0; r < n.numResults(); ++r) {
    const Shape& part = n.resultType(r).dims;
    stridedCopy(ctx, n.resultType(r).kind,
                offsetPtr(ctx, ctx.addr(n.input(0)), at * is[size_t(axis)] * es), ctx.result(n, r),
                part, is, contiguousStrides(part));
    at += part[size_t(axis)];
  }
}

bool supportsSplit(const Op& n) {
  if (n.numInputs() != 1 || n.input(0).dims().size() > 6)
    return false;
  for (const Type& t : n.resultTypes())
    if (t.quant != n.input(0).type().quant)
      return false;
  return true;
}

bool supportsPad(const Op& n) {
  return supportsSimple(n) && padOf(n.attrs()).mode == "constant" &&
         (n.numInputs() < 2 || !n.input(1) || n.input(1).isConstant());
}

void emitPad(const Op& n, CodegenContext& ctx) {
  const Shape& in = n.input(0).dims();
  const Shape& out = n.resultType().dims;
  const PadAttrs pa = padOf(n.attrs());
  const std::vector<int64_t> pads = pa.pads.value();
  const ElemKind k = n.resultType().kind;
  Tensor value(k, {});
  if (n.resultType().quant.isQuantized() && k == ElemKind::Int8)
    value.data<int8_t>()[0] =
        static_cast<int8_t>(quant::quantizeBound(pa.value, n.resultType().quant));
  else
    value.setFromDouble(0, pa.value);
  if (n.numInputs() > 1 && n.input(1))
    std::memcpy(value.raw(), n.input(1).constant(), value.sizeInBytes());
  uint64_t bits = 0;
  std::memcpy(&bits, value.raw(), value.sizeInBytes());
  ctx.call("ember_fill", {ctx.i32(int64_t(elemSize(k))), ctx.result(n), ctx.i64(numElements(out)),
                          ctx.i64(int64_t(bits)), ctx.tid(), ctx.nth()});
  ctx.barrier();
  // The interior: negative pads crop the input.
  const std::vector<int64_t> os = contiguousStrides(out), is = contiguousStrides(in);
  Shape box(in.size());
  int64_t src = 0, dst = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t b = pads[i], e = pads[in.size() + i];
    const int64_t lo = b < 0 ? -b : 0;
    box[i] = in[i] - lo - (e < 0 ? -e : 0);
    if (box[i] <= 0)
      return;
    src += lo * is[i];
    dst += (b > 0 ? b : 0) * os[i];
  }
  const int64_t es = int64_t(elemSize(k));
  stridedCopy(ctx, k, offsetPtr(ctx, ctx.addr(n.input(0)), src * es),
              offsetPtr(ctx, ctx.result(n), dst * es), box, is, os);
}

bool supportsGather(const Op& n) {
  const Shape& d = n.input(0).dims();
  const int64_t axis = axisOf(n.attrs()).axis;
  return supportsSimple(n) && !d.empty() && axis >= -int64_t(d.size()) && axis < int64_t(d.size());
}

void emitGather(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  const int64_t axis = normalizeAxis(axisOf(n.attrs()).axis, d.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= d[size_t(i)];
  for (size_t i = size_t(axis) + 1; i < d.size(); ++i)
    inner *= d[i];
  const OpInput idx = n.input(1);
  if (idx.type().size() == 0 || outer * inner == 0)
    return;
  ctx.call("ember_gather",
           {ctx.i32(int64_t(elemSize(n.resultType().kind))), ctx.addr(n.input(0)), ctx.addr(idx),
            ctx.i32(int64_t(elemSize(idx.kind()))), ctx.result(n), ctx.i64(outer),
            ctx.i64(d[size_t(axis)]), ctx.i64(inner), ctx.i64(idx.type().size()),
            ctx.errorFlag("an index is out of range for axis " + std::to_string(axis) +
                          " of extent " + std::to_string(d[size_t(axis)])),
            ctx.tid(), ctx.nth()});
}

/// DepthToSpace (DCR or CRD) as one strided copy: output (n, c, h, i, w, j) of
/// [N, C, H, b, W, b] reads input channel (i b + j) C + c (DCR) or c b b + i b + j (CRD).
void emitDepthToSpace(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  const BlockAttrs blk = blockOf(n.attrs());
  const int64_t b = blk.blockSize, C = d[1] / (b * b), plane = d[2] * d[3];
  const bool crd = blk.mode == "CRD";
  const Shape walk{d[0], C, d[2], b, d[3], b};
  const std::vector<int64_t> src{
      d[1] * plane,         (crd ? b * b : 1) * plane, d[3], (crd ? b : b * C) * plane, 1,
      (crd ? 1 : C) * plane};
  stridedCopy(ctx, n.resultType().kind, ctx.addr(n.input(0)), ctx.result(n), walk, src,
              contiguousStrides(walk));
}

bool supportsDepthToSpace(const Op& n) {
  return supportsSimple(n) && n.input(0).dims().size() == 4 && blockOf(n.attrs()).blockSize > 0;
}

/// The axes of an int8 nearest Resize by whole factors (codes picked, docs/numerics.md
/// 4.4), at most two of them upsampled, so that the strided copy has at most six axes.
bool supportsResizeNearest(const Op& n) {
  return n.numInputs() == 1 && n.resultType().kind == ElemKind::Int8 && supportsSimple(n) &&
         isInt8Upsample(n.attrs(), n.input(0).dims(), n.resultType().dims);
}

/// Each axis d of length x and factor f as (x, f) with source strides (s_d, 0): every
/// element repeated f times along each axis, one strided copy.
void emitResizeNearest(const Op& n, CodegenContext& ctx) {
  const Shape& d = n.input(0).dims();
  const std::vector<int64_t> f = nearestUpsampleFactors(n.attrs(), d, n.resultType().dims);
  const std::vector<int64_t> s = contiguousStrides(d);
  Shape walk;
  std::vector<int64_t> src;
  for (size_t i = 0; i < d.size(); ++i) {
    walk.insert(walk.end(), {d[i], f[i]});
    src.insert(src.end(), {s[i], 0});
  }
  stridedCopy(ctx, n.resultType().kind, ctx.addr(n.input(0)), ctx.result(n), walk, src,
              contiguousStrides(walk));
}

} // namespace

void registerMovementCodegen() {
  registerCodegenUnit(NodeKind::Transpose, {"movement", supportsSimple, emitTranspose});
  registerCodegenUnit(NodeKind::Slice, {"movement", supportsSimple, emitSlice});
  registerCodegenUnit(NodeKind::Expand, {"movement", supportsSimple, emitExpand});
  registerCodegenUnit(NodeKind::Concat, {"movement", supportsSimple, emitConcat});
  registerCodegenUnit(NodeKind::Split, {"movement", supportsSplit, emitSplit});
  registerCodegenUnit(NodeKind::Pad, {"movement", supportsPad, emitPad});
  registerCodegenUnit(NodeKind::Gather, {"movement", supportsGather, emitGather});
  registerCodegenUnit(NodeKind::DepthToSpace, {"movement", supportsDepthToSpace, emitDepthToSpace});
  registerCodegenUnit(NodeKind::Resize, {"movement", supportsResizeNearest, emitResizeNearest});
}

} // namespace ember::cpu
