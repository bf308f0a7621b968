// ONNX importers of the reductions. Reduce* take their axes from the attribute, or
// from a constant operand (ReduceSum from opset 13, the others from opset 18); axes
// are normalised and sorted here. ArgMax/ArgMin forward axis, keepdims and
// select_last_index.
#include "ember/importer/OnnxOpImporter.h"

#include <algorithm>

namespace ember {

namespace {

struct Reduce {
  const char* op;
  NodeKind kind;
};

const Reduce kReduces[] = {
    {"ReduceMean", NodeKind::ReduceMean},
    {"ReduceSum", NodeKind::ReduceSum},
    {"ReduceMax", NodeKind::ReduceMax},
    {"ReduceMin", NodeKind::ReduceMin},
    {"ReduceProd", NodeKind::ReduceProd},
    {"ReduceL1", NodeKind::ReduceL1},
    {"ReduceL2", NodeKind::ReduceL2},
    {"ReduceLogSum", NodeKind::ReduceLogSum},
    {"ReduceLogSumExp", NodeKind::ReduceLogSumExp},
    {"ReduceSumSquare", NodeKind::ReduceSumSquare},
};

void importReduce(OnnxNodeContext& ctx, NodeKind kind) {
  const NodeValue x = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(x.dims().size());
  std::vector<int64_t> axes;
  const bool axesOperand = ctx.opset() >= (kind == NodeKind::ReduceSum ? 13 : 18);
  if (axesOperand && ctx.hasInput(1))
    axes = ctx.constantInts(1, "axes");
  else if (!axesOperand)
    axes = ctx.attrInts("axes");
  for (int64_t& a : axes) {
    if (a < -rank || a >= rank)
      ctx.fail("axis " + std::to_string(a) + " is out of range for input " +
               shapeToString(x.dims()));
    a = a < 0 ? a + rank : a;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    ctx.fail("axes " + shapeToString(axes) + " repeat an axis");
  Attrs attrs;
  attrs.set("axes", axes);
  attrs.set("keepdims", ctx.attrInt("keepdims", 1));
  if (axesOperand)
    attrs.set("noop_with_empty_axes", ctx.attrInt("noop_with_empty_axes", 0));
  ctx.setOutput(0, ctx.emit(kind, {x}, std::move(attrs)));
}

void importArg(OnnxNodeContext& ctx, NodeKind kind) {
  Attrs attrs;
  attrs.set("axis", ctx.attrInt("axis", 0));
  attrs.set("keepdims", ctx.attrInt("keepdims", 1));
  attrs.set("select_last_index", ctx.attrInt("select_last_index", 0));
  ctx.setOutput(0, ctx.emit(kind, {ctx.input(0)}, std::move(attrs)));
}

} // namespace

void registerOnnxReductionImporters() {
  for (const Reduce& r : kReduces) {
    const NodeKind k = r.kind;
    // noop_with_empty_axes comes with the axes operand (ReduceSum 13, the others 18).
    std::vector<std::string> attrs = {"axes", "keepdims"};
    if (k == NodeKind::ReduceSum)
      attrs.push_back("noop_with_empty_axes");
    registerOnnxOp(r.op, attrs, [k](OnnxNodeContext& ctx) { importReduce(ctx, k); });
  }
  registerOnnxOp("ArgMax", {"axis", "keepdims", "select_last_index"},
                 [](OnnxNodeContext& c) { importArg(c, NodeKind::ArgMax); });
  registerOnnxOp("ArgMin", {"axis", "keepdims", "select_last_index"},
                 [](OnnxNodeContext& c) { importArg(c, NodeKind::ArgMin); });
}

} // namespace ember
