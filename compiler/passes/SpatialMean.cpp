// spatial-mean-to-pool: ReduceMean over exactly the spatial axes of an [N, C, H, W] value
// (how many networks write global pooling, e.g. torchvision's ShuffleNet and
// EfficientNet heads: x.mean([2, 3])) becomes GlobalAveragePool, followed by a Reshape to
// [N, C] when the axes are not kept. A ReduceSum over the same axes is that mean times
// H * W (a Mul by a constant scalar, which every backend and the int8 quantizer take).
// Every backend computes the same mean or sum either way (up to float rounding of the
// sum's order); a backend with pooling but no general reduction (the NPU) then runs it.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

#include <algorithm>

namespace ember {

using namespace passes;

namespace {

bool rewrite(Function& f, Node* n) {
  if (!allPlainFloat(*n) || n->input(0).dims().size() != 4)
    return false;
  const Attrs& a = n->attrs();
  const ReduceAttrs r = reduceOf(a);
  std::vector<int64_t> axes = r.axes;
  for (int64_t& ax : axes)
    ax = ax < 0 ? ax + 4 : ax;
  std::sort(axes.begin(), axes.end());
  if (axes != std::vector<int64_t>{2, 3})
    return false;
  const Shape& xd = n->input(0).dims();
  const std::string name = n->name();
  Node* gap = f.create(NodeKind::GlobalAveragePool, name + ".gap", {n->input(0)}, Attrs{});
  Node* out = gap;
  if (n->kind() == NodeKind::ReduceSum)
    out = f.create(NodeKind::Mul, name + ".sum",
                   {gap->result(), makeScalar(f, name + ".area", float(xd[2] * xd[3]))}, Attrs{});
  if (!r.keepDims) {
    Attrs flat;
    flat.set("shape", std::vector<int64_t>{xd[0], xd[1]});
    out = f.create(NodeKind::Reshape, name + ".flatten", {out->result()}, flat);
  }
  f.replaceAllUsesOf(n->result(), out->result());
  f.erase(n);
  takeNameIfFree(f, out, name);
  return true;
}

} // namespace

size_t runSpatialMeanToPool(Function& f, const PassContext&) {
  size_t changed = 0;
  for (Node* n : snapshot(f))
    if (n->kind() == NodeKind::ReduceMean || n->kind() == NodeKind::ReduceSum)
      changed += rewrite(f, n);
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
