// channel-shuffle-to-gather: ShuffleNet's channel shuffle, Reshape(x [N, C, H, W] ->
// [N, g, C/g, H, W]) -> Transpose(perm 0, 2, 1, 3, 4) -> Reshape(-> [N, C, H, W]), is one
// permutation of the channels: Gather(x, idx, axis 1) with idx[j * g + i] = i * (C/g) + j.
// The same values, without a rank-5 intermediate: a backend that keeps rank-4 values
// (the NPU) then runs the shuffle as one channel selection.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

#include <set>

namespace ember {

using namespace passes;

namespace {

/// Rewrites the shuffle starting at Reshape `first`; the final Reshape, erased, goes into
/// `erased`.
bool rewrite(Function& f, Node* first, std::set<const Node*>& erased) {
  if (!allPlainFloat(*first) || first->input(0).dims().size() != 4)
    return false;
  const Shape& x = first->input(0).dims();
  const Shape& s5 = first->resultType(0).dims;
  if (s5.size() != 5 || s5[0] != x[0] || s5[1] * s5[2] != x[1] || s5[3] != x[2] || s5[4] != x[3])
    return false;
  Node* tr = singleUser(f, first);
  if (!tr || tr->kind() != NodeKind::Transpose ||
      transposeOf(tr->attrs()).perm != std::vector<int64_t>{0, 2, 1, 3, 4})
    return false;
  Node* last = singleUser(f, tr);
  if (!last || last->kind() != NodeKind::Reshape || last->resultType(0).dims != x)
    return false;
  const int64_t g = s5[1], per = s5[2];
  Tensor idx(ElemKind::Int64, {x[1]});
  for (int64_t j = 0; j < per; ++j)
    for (int64_t i = 0; i < g; ++i)
      idx.data<int64_t>()[j * g + i] = i * per + j;
  const std::string name = last->name();
  Attrs a;
  a.set("axis", int64_t(1));
  Node* gather = f.create(NodeKind::Gather, name + ".shuffle",
                          {first->input(0), makeConstant(f, name + ".perm", std::move(idx))}, a);
  f.replaceAllUsesOf(last->result(), gather->result());
  erased.insert(last);
  f.erase(last);
  takeNameIfFree(f, gather, name);
  return true;
}

} // namespace

size_t runChannelShuffleToGather(Function& f, const PassContext&) {
  size_t changed = 0;
  std::set<const Node*> erased;
  for (Node* n : snapshot(f))
    if (!erased.count(n) && n->kind() == NodeKind::Reshape)
      changed += rewrite(f, n, erased);
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
