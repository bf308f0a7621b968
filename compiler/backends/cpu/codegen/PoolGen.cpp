// Codegen of the float pools (1-D to 3-D windows): MaxPool, AveragePool,
// GlobalAveragePool and GlobalMaxPool.
#include "Codegen.h"
#include "libjit/ConvScratch.h"

#include "ember/graph/AttrViews.h"
#include "ember/support/Error.h"

namespace ember::cpu {

namespace {

bool supportsPool(const Op& n) {
  const Type& x = n.input(0).type();
  if (x.kind != ElemKind::Float32 || x.quant.isQuantized() || n.numResults() != 1)
    return false;
  if (n.kind() == NodeKind::GlobalAveragePool || n.kind() == NodeKind::GlobalMaxPool)
    return x.rank() >= 3;
  return x.rank() >= 3 && x.rank() <= 5;
}

} // namespace

std::vector<int64_t> poolWindow(const Op& n) {
  const Shape& x = n.input(0).dims();
  const Shape& y = n.resultType().dims;
  const size_t nsp = x.size() - 2;
  const WindowAttrs a = windowOf(n.attrs(), nsp);
  const std::vector<int64_t>&k = a.kernel, &s = a.strides, &p = a.pads, &d = a.dilations;
  if (nsp == 1)
    return {1, x[2], 1, y[2], 1, k[0], 1, s[0], 0, p[0], 0, p[1], 1, d[0]};
  return {x[2], x[3], y[2], y[3], k[0], k[1], s[0], s[1], p[0], p[1], p[2], p[3], d[0], d[1]};
}

std::vector<int64_t> pool3Geom(const Op& n) {
  const Shape& x = n.input(0).dims();
  const Shape& y = n.resultType().dims;
  const WindowAttrs a = windowOf(n.attrs(), 3);
  std::vector<int64_t> geom(x.begin() + 2, x.end());
  geom.insert(geom.end(), y.begin() + 2, y.end());
  for (const std::vector<int64_t>* f : {&a.kernel, &a.strides, &a.dilations, &a.pads})
    geom.insert(geom.end(), f->begin(), f->end());
  return geom;
}

namespace {

/// A pool over three spatial dimensions: ember_pool3d_f32 (libjit/Pool.cpp).
void emitPool3d(const Op& n, CodegenContext& ctx) {
  const Shape& x = n.input(0).dims();
  ctx.call("ember_pool3d_f32",
           {ctx.i32(n.kind() == NodeKind::MaxPool), ctx.i32(windowOf(n.attrs(), 3).countIncludePad),
            ctx.addr(n.input(0)), ctx.result(n), ctx.i64(x[0] * x[1]), ctx.int64Array(pool3Geom(n)),
            ctx.tid(), ctx.nth()});
}

void emitPool(const Op& n, CodegenContext& ctx) {
  const Shape& x = n.input(0).dims();
  if (x.size() == 5)
    return emitPool3d(n, ctx);
  const WindowAttrs a = windowOf(n.attrs(), x.size() - 2);
  const std::vector<int64_t> v = poolWindow(n);
  std::vector<llvm::Value*> args = {ctx.i32(n.kind() == NodeKind::MaxPool),
                                    ctx.i32(a.countIncludePad), ctx.addr(n.input(0)), ctx.result(n),
                                    ctx.i64(x[0] * x[1])};
  for (int64_t e : v)
    args.push_back(ctx.i64(e));
  // Max pools of narrow planes run on the stride phases of each plane (libjit/Pool.cpp).
  if (n.kind() == NodeKind::MaxPool &&
      jitops::maxPoolOnPhases(v[1], v[3], v[5], v[6], v[7], v[9], v[13])) {
    const jitops::DwGeom g = jitops::dwGeom(v[2], v[3], v[4], v[5], v[6], v[7], v[12], v[13]);
    args.push_back(ctx.scratch(static_cast<size_t>(g.scratchFloats() * 4)));
  } else {
    args.push_back(ctx.nullPtr());
  }
  args.push_back(ctx.tid());
  args.push_back(ctx.nth());
  ctx.call("ember_pool_f32", args);
}

void emitGlobalPool(const Op& n, CodegenContext& ctx) {
  const Shape& x = n.input(0).dims();
  const int64_t planes = x[0] * x[1];
  ctx.call("ember_global_pool_f32",
           {ctx.i32(n.kind() == NodeKind::GlobalMaxPool), ctx.addr(n.input(0)), ctx.result(n),
            ctx.i64(planes), ctx.i64(planes ? numElements(x) / planes : 0), ctx.tid(), ctx.nth()});
}

} // namespace

void registerPoolCodegen() {
  registerCodegenUnit(NodeKind::MaxPool, {"pool", supportsPool, emitPool});
  registerCodegenUnit(NodeKind::AveragePool, {"pool", supportsPool, emitPool});
  registerCodegenUnit(NodeKind::GlobalAveragePool, {"pool", supportsPool, emitGlobalPool});
  registerCodegenUnit(NodeKind::GlobalMaxPool, {"pool", supportsPool, emitGlobalPool});
}

} // namespace ember::cpu
