// patches-to-sequence: a vision transformer's patch embedding turns the image of patch
// features into a sequence of tokens, `x.flatten(2).transpose(1, 2)` (torchvision's ViT:
// `reshape(n, hidden, h * w).permute(0, 2, 1)`): Reshape(x [1, C, H, W] -> [1, C, H*W]) ->
// Transpose(perm 0, 2, 1) -> [1, H*W, C]. With one image it becomes
//   Reshape(x -> [1, C, 1, H*W]) -> Transpose(perm 3, 1, 2, 0) -> [H*W, C, 1, 1] ->
//   Reshape(-> [1, H*W, C])
// and the way back to an image, Transpose(s [1, T, C], perm 0, 2, 1) -> Reshape(-> [1, C,
// H, W]) with H*W = T, becomes
//   Reshape(s -> [T, C, 1, 1]) -> Transpose(perm 3, 1, 2, 0) -> [1, C, 1, T] ->
//   Reshape(-> [1, C, H, W]).
// The same values, through a transpose that keeps the channel axis in place: a backend
// that keeps channels in lanes (the NPU, whose rank-3 values are channels-last, so
// [T, C, 1, 1] is the sequence's own bytes and [1, C, 1, H*W] the image's) moves whole
// rows for it, where the original Reshape of an image to [1, C, H*W] and the Transpose
// that moves the channels have no such form.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

#include <set>

namespace ember {

using namespace passes;

namespace {

Attrs ints(const char* name, std::vector<int64_t> v) {
  Attrs a;
  a.set(name, std::move(v));
  return a;
}

bool isSwapOfLastTwo(const Node& n) {
  return n.kind() == NodeKind::Transpose && allPlainFloat(n) &&
         transposeOf(n.attrs()).perm == std::vector<int64_t>{0, 2, 1};
}

/// Reshape `first` (x [1, C, H, W] -> [1, C, H*W]) and its only user, a Transpose (0, 2, 1).
bool imageToSequence(Function& f, Node* first, std::set<const Node*>& erased) {
  if (first->kind() != NodeKind::Reshape || !allPlainFloat(*first))
    return false;
  const Shape& x = first->input(0).dims();
  const Shape& s = first->resultType(0).dims;
  if (x.size() != 4 || x[0] != 1 || s != Shape{1, x[1], x[2] * x[3]})
    return false;
  Node* tr = singleUser(f, first);
  if (!tr || !isSwapOfLastTwo(*tr))
    return false;
  const std::string name = tr->name();
  const int64_t C = x[1], P = x[2] * x[3];
  NodeValue r =
      f.create(NodeKind::Reshape, name + ".line", {first->input(0)}, ints("shape", {1, C, 1, P}))
          ->result();
  NodeValue t =
      f.create(NodeKind::Transpose, name + ".rows", {r}, ints("perm", {3, 1, 2, 0}))->result();
  Node* seq = f.create(NodeKind::Reshape, name + ".seq", {t}, ints("shape", {1, P, C}));
  f.replaceAllUsesOf(tr->result(), seq->result());
  erased.insert(tr);
  f.erase(tr);
  takeNameIfFree(f, seq, name);
  return true;
}

/// Transpose `first` (0, 2, 1) of s [1, T, C] and its only user, a Reshape to [1, C, H, W]
/// with H*W = T.
bool sequenceToImage(Function& f, Node* first, std::set<const Node*>& erased) {
  if (!isSwapOfLastTwo(*first))
    return false;
  const Shape& s = first->input(0).dims();
  if (s.size() != 3 || s[0] != 1)
    return false;
  Node* re = singleUser(f, first);
  if (!re || re->kind() != NodeKind::Reshape || !allPlainFloat(*re))
    return false;
  const Shape y = re->resultType(0).dims;
  if (y.size() != 4 || y[0] != 1 || y[1] != s[2] || y[2] * y[3] != s[1])
    return false;
  const std::string name = re->name();
  const int64_t T = s[1], C = s[2];
  NodeValue r =
      f.create(NodeKind::Reshape, name + ".rows", {first->input(0)}, ints("shape", {T, C, 1, 1}))
          ->result();
  NodeValue t =
      f.create(NodeKind::Transpose, name + ".line", {r}, ints("perm", {3, 1, 2, 0}))->result();
  Node* img = f.create(NodeKind::Reshape, name + ".image", {t}, ints("shape", y));
  f.replaceAllUsesOf(re->result(), img->result());
  erased.insert(re);
  f.erase(re);
  takeNameIfFree(f, img, name);
  return true;
}

} // namespace

size_t runPatchesToSequence(Function& f, const PassContext&) {
  size_t changed = 0;
  std::set<const Node*> erased;
  for (Node* n : snapshot(f)) {
    if (erased.count(n))
      continue;
    if (imageToSequence(f, n, erased) || sequenceToImage(f, n, erased))
      ++changed;
  }
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
