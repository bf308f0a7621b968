// matmul-bias-to-gemm: a linear layer written as MatMul(x, W) + b with a constant W [K, M]
// and a constant b of M values (how torch exports nn.Linear on a sequence [B, T, K],
// and the transformers' projections and feed-forward layers) becomes one Gemm(x, W, b),
// between two Reshapes when x has rank > 2: x [.., K] -> [P, K] -> Gemm -> [.., M]. The
// bias then lives where a Gemm's bias lives (int32, added in the accumulator), not in a
// separate elementwise Add with its own rounding; on the NPU the layer needs no second
// pass over the activations. A Relu or Clip that is the Add's only user moves before the
// closing Reshape, so fuse-activation still finds it on the Gemm.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

namespace ember {

using namespace passes;

namespace {

/// The bias of M values `c` holds, if it is a constant that broadcasts along the last
/// axis only ([M], [1, M], [1, 1, M], ...).
std::optional<Tensor> biasOf(const NodeValue& c, int64_t m) {
  if (!isConstant(c) || !isPlainFloat(c.type()) || c.type().size() != m)
    return std::nullopt;
  const Shape& d = c.dims();
  if (d.empty() || d.back() != m)
    return std::nullopt;
  return c.node->payload().reshaped({m});
}

bool isActivation(const Node* n) {
  return n && (n->kind() == NodeKind::Relu || n->kind() == NodeKind::Clip) && n->numInputs() == 1 &&
         allPlainFloat(*n);
}

Node* reshape(Function& f, const std::string& name, NodeValue v, const Shape& to) {
  Attrs a;
  a.set("shape", std::vector<int64_t>(to.begin(), to.end()));
  return f.create(NodeKind::Reshape, name, {v}, a);
}

/// Rewrites Add `add` when one operand is a single-use MatMul by a constant and the
/// other a constant bias; false otherwise.
bool rewrite(Function& f, Node* add) {
  if (!allPlainFloat(*add) || FusedActivation::present(add->attrs()))
    return false;
  for (int side = 0; side < 2; ++side) {
    const NodeValue mv = add->input(side), cv = add->input(1 - side);
    Node* mm = mv.node;
    if (mm->kind() != NodeKind::MatMul || !allPlainFloat(*mm) ||
        FusedActivation::present(mm->attrs()) || singleUser(f, mm) != add)
      continue;
    const NodeValue x = mm->input(0), w = mm->input(1);
    const Shape& xd = x.dims();
    if (!isConstant(w) || w.dims().size() != 2 || xd.size() < 2 || !isPlainFloat(x.type()) ||
        add->resultType(0).dims != mm->resultType(0).dims)
      continue;
    const int64_t k = w.dims()[0], m = w.dims()[1];
    std::optional<Tensor> bias = biasOf(cv, m);
    if (!bias || xd.back() != k)
      continue;
    // On a sequence: rows in, the Gemm (and the Add's only Relu/Clip, on the rows), the
    // sequence back; the last node replaces the Add, or that activation, and its name.
    Node* replaced = add;
    Node* act = singleUser(f, add);
    if (xd.size() > 2 && isActivation(act))
      replaced = act;
    const std::string name = replaced->name();
    NodeValue v = x;
    if (xd.size() > 2)
      v = reshape(f, name + ".rows", x, {x.type().size() / k, k})->result();
    Node* last = f.create(NodeKind::Gemm, name + ".gemm",
                          {v, w, makeConstant(f, name + ".bias", std::move(*bias))}, Attrs{});
    if (replaced == act)
      last = f.create(act->kind(), name + ".act", {last->result()}, act->attrs());
    if (xd.size() > 2)
      last = reshape(f, name + ".seq", last->result(), add->resultType(0).dims);
    f.replaceAllUsesOf(replaced->result(), last->result());
    if (replaced == act)
      f.erase(act);
    f.erase(add);
    takeNameIfFree(f, last, name);
    return true;
  }
  return false;
}

} // namespace

size_t runMatMulBiasToGemm(Function& f, const PassContext&) {
  // Only Adds are visited; a rewrite erases its Add and possibly the Relu after it, so
  // the list is taken first and holds no other node.
  std::vector<Node*> adds;
  for (Node* n : snapshot(f))
    if (n->kind() == NodeKind::Add)
      adds.push_back(n);
  size_t changed = 0;
  for (Node* n : adds)
    changed += rewrite(f, n);
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
