// sink-token-concat: a vision transformer puts its class token before its patch tokens,
// Concat([cls, patches], axis 1) of [B, T, C] sequences, with the class token a constant
// (torchvision's ViT: zeros until trained). The nodes after it work on each token's row
// alone: the position embedding's Add, the LayerNormalizations over the channels, the
// residual Adds. This pass moves such a Concat below every node of that kind that reads it,
// so the node runs once per part of the Concat:
//   - LayerNormalization over the last axis (Mean and InvStdDev unused): one per part;
//   - Add, Sub, Mul, Div with the Concat as one operand: the other operand, when it spans
//     the tokens, is taken per part (the parts of a Concat of the same split, or the part's
//     rows gathered: Reshape to [B*T, C], Gather of rows, Reshape back; a constant's folds),
//     else (broadcast along the tokens) it is read whole by every part;
//   - Gather of one token (Gather along axis 1 with a constant scalar index, the class token
//     x[:, 0] taken for the head): the Gather of that token of its part.
// The new Concat of the results moves on below their readers in turn. Other readers read
// the Concat. The values are the same (each part is the same arithmetic on the same rows).
//
// Why: a part made of constants stays constant, so constant folding computes the class
// token's Add and first LayerNorm in float at compile time; and every part gets its own
// int8 range. With a zero class token the token's row in the first layer is the position
// embedding (N(0, 0.02^2)) plus an attention output of the same size, below one int8 step
// of the residual stream (the patch tokens are of unit scale): quantized with the patch
// tokens it is noise, which the LayerNorms normalise (docs/results/hand/bench_partition.md,
// ViT-B/16). Run on its own rows, it is quantized with its own, finer scale.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/passes/Passes.h"

#include <deque>

namespace ember {

using namespace passes;

namespace {

constexpr int64_t kTokenAxis = 1;

/// The parts of a Concat of [B, T, C] sequences along the tokens, or an empty list.
std::vector<NodeValue> tokenParts(const Node& n) {
  if (n.kind() != NodeKind::Concat || !allPlainFloat(n) || n.resultType(0).dims.size() != 3)
    return {};
  const int64_t axis = axisOf(n.attrs()).axis;
  if (axis != kTokenAxis && axis != kTokenAxis - 3)
    return {};
  std::vector<NodeValue> parts(n.inputs().begin(), n.inputs().end());
  return parts.size() >= 2 ? parts : std::vector<NodeValue>{};
}

/// Whether a seed: a Concat of tokens with a constant part and a computed one.
bool isSeed(const Node& n) {
  const std::vector<NodeValue> parts = tokenParts(n);
  size_t constants = 0;
  for (const NodeValue& p : parts)
    constants += isConstant(p) ? 1 : 0;
  return constants > 0 && constants < parts.size();
}

/// The nodes of `f` that read `v`, each once.
std::vector<Node*> readersOf(const Function& f, NodeValue v) {
  std::vector<Node*> out;
  for (const auto& m : f.nodes())
    for (const NodeValue& in : m->inputs())
      if (in == v) {
        out.push_back(m.get());
        break;
      }
  return out;
}

/// Tokens [begin, end) of the sequences `v` [B, T, C], as Reshape to [B*T, C], Gather of
/// those rows of every sequence (axis 0, constant indices) and Reshape to [B, end - begin,
/// C]: the form pass moves-to-gather gives token movement, which the NPU copies by DMA in
/// runs of rows of any length (a Slice of tokens is copied as one stream, which must fit a
/// tile).
NodeValue takeTokens(Function& f, const std::string& name, NodeValue v, int64_t begin,
                     int64_t end) {
  const Shape& d = v.dims();
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < d[0]; ++b)
    for (int64_t t = begin; t < end; ++t)
      rows.push_back(b * d[1] + t);
  Attrs flat, back, gather;
  flat.set("shape", std::vector<int64_t>{d[0] * d[1], d[2]});
  back.set("shape", std::vector<int64_t>{d[0], end - begin, d[2]});
  gather.set("axis", int64_t(0));
  const int64_t n = int64_t(rows.size());
  NodeValue idx = makeConstant(f, name + ".rows", Tensor::fromVector<int64_t>({n}, rows));
  NodeValue r = f.create(NodeKind::Reshape, name + ".flat", {v}, std::move(flat))->result();
  NodeValue g = f.create(NodeKind::Gather, name + ".gather", {r, idx}, std::move(gather))->result();
  return f.create(NodeKind::Reshape, name, {g}, std::move(back))->result();
}

/// The split of a Concat of tokens: its parts and where each one starts.
struct TokenSplit {
  Node* concat = nullptr;
  std::vector<NodeValue> parts;
  std::vector<int64_t> begins;
};

TokenSplit splitOf(Node* c) {
  TokenSplit s{c, tokenParts(*c), {}};
  int64_t at = 0;
  for (const NodeValue& p : s.parts) {
    s.begins.push_back(at);
    at += p.dims()[kTokenAxis];
  }
  return s;
}

/// The other operand of a binary reader, per part: the parts of a Concat of the same split,
/// its rows of the part when it spans the tokens, or itself when it broadcasts along them.
/// Empty when it does neither.
std::vector<NodeValue> operandParts(Function& f, const TokenSplit& s, NodeValue w,
                                    const std::string& name) {
  const Shape& full = s.concat->resultType(0).dims;
  const Shape& d = w.dims();
  std::vector<NodeValue> out;
  if (w == s.concat->result())
    return s.parts;
  if (w.node->kind() == NodeKind::Concat) {
    const TokenSplit o = splitOf(w.node);
    if (o.begins == s.begins && o.parts.size() == s.parts.size())
      return o.parts;
  }
  if (d.size() < 2 || d[d.size() - 2] == 1) // broadcast along the tokens
    return std::vector<NodeValue>(s.parts.size(), w);
  if (d.size() != 3 || d != full)
    return {};
  for (size_t i = 0; i < s.parts.size(); ++i) {
    const int64_t b = s.begins[i];
    out.push_back(takeTokens(f, name + ".tokens" + std::to_string(i), w, b,
                             b + s.parts[i].dims()[kTokenAxis]));
  }
  return out;
}

bool isBinary(NodeKind k) {
  return k == NodeKind::Add || k == NodeKind::Sub || k == NodeKind::Mul || k == NodeKind::Div;
}

/// LayerNormalization over the channels of `s`, only its first result read.
bool rowNorm(const Function& f, const Node& u, const TokenSplit& s) {
  if (u.kind() != NodeKind::LayerNormalization || u.input(0) != s.concat->result() ||
      !allPlainFloat(u))
    return false;
  const int64_t axis = normOf(u.attrs()).axis;
  if (axis != 2 && axis != -1)
    return false;
  for (unsigned r = 1; r < u.numResults(); ++r)
    for (const auto& m : f.nodes())
      for (const NodeValue& in : m->inputs())
        if (in.node == &u && in.resNo == r)
          return false;
  for (unsigned i = 1; i < u.numInputs(); ++i)
    if (u.input(i) == s.concat->result())
      return false;
  return true;
}

/// The parts of `u`'s result, each computed on one part of `s`; empty when `u` does not
/// work on each token alone.
std::vector<NodeValue> rewritePerPart(Function& f, Node* u, const TokenSplit& s) {
  const std::string name = u->name();
  std::vector<NodeValue> out;
  if (rowNorm(f, *u, s)) {
    for (size_t i = 0; i < s.parts.size(); ++i) {
      std::vector<NodeValue> ins(u->inputs().begin(), u->inputs().end());
      ins[0] = s.parts[i];
      out.push_back(
          f.create(u->kind(), name + ".part" + std::to_string(i), ins, u->attrs())->result(0));
    }
    return out;
  }
  if (isBinary(u->kind()) && allPlainFloat(*u) &&
      u->resultType(0).dims == s.concat->resultType(0).dims) {
    const bool left = u->input(0) == s.concat->result();
    std::vector<NodeValue> other = operandParts(f, s, u->input(left ? 1 : 0), name);
    if (other.empty())
      return {};
    for (size_t i = 0; i < s.parts.size(); ++i) {
      std::vector<NodeValue> ins = left ? std::vector<NodeValue>{s.parts[i], other[i]}
                                        : std::vector<NodeValue>{other[i], s.parts[i]};
      out.push_back(
          f.create(u->kind(), name + ".part" + std::to_string(i), ins, u->attrs())->result());
    }
  }
  return out;
}

/// A Gather of one token of `s` (axis 1, constant scalar index) becomes the Gather of that
/// token of its part.
bool gatherOneToken(Function& f, Node* u, const TokenSplit& s) {
  if (u->kind() != NodeKind::Gather || u->input(0) != s.concat->result() || !allPlainFloat(*u))
    return false;
  const int64_t axis = axisOf(u->attrs()).axis;
  const NodeValue idx = u->input(1);
  if ((axis != kTokenAxis && axis != kTokenAxis - 3) || !isConstant(idx) || !idx.dims().empty())
    return false;
  const int64_t T = s.concat->resultType(0).dims[kTokenAxis];
  int64_t t = int64_t(idx.node->payload().getAsDouble(0));
  t = t < 0 ? t + T : t;
  for (size_t i = 0; i < s.parts.size(); ++i) {
    const int64_t len = s.parts[i].dims()[kTokenAxis];
    if (t < s.begins[i] || t >= s.begins[i] + len)
      continue;
    Tensor local = Tensor::scalar<int64_t>(t - s.begins[i]);
    if (idx.kind() == ElemKind::Int32)
      local = Tensor::scalar<int32_t>(int32_t(t - s.begins[i]));
    NodeValue li = makeConstant(f, u->name() + ".index", std::move(local));
    Node* g = f.create(NodeKind::Gather, u->name() + ".part", {s.parts[i], li}, u->attrs());
    f.replaceAllUsesOf(u->result(), g->result());
    const std::string name = u->name();
    f.erase(u);
    takeNameIfFree(f, g, name);
    return true;
  }
  return false;
}

/// Moves the Concat `c` below its readers that work on each token alone; the new Concats
/// go on `work`. Returns the number of readers rewritten.
size_t sinkBelowReaders(Function& f, Node* c, std::deque<Node*>& work) {
  const TokenSplit s = splitOf(c);
  size_t changed = 0;
  for (Node* u : readersOf(f, c->result())) {
    if (gatherOneToken(f, u, s)) {
      ++changed;
      continue;
    }
    std::vector<NodeValue> parts = rewritePerPart(f, u, s);
    if (parts.empty())
      continue;
    const std::string name = u->name();
    Attrs a;
    a.set("axis", kTokenAxis);
    Node* joined = f.create(NodeKind::Concat, name + ".tokens", parts, std::move(a));
    f.replaceAllUsesOf(u->result(0), joined->result());
    f.erase(u);
    takeNameIfFree(f, joined, name);
    work.push_back(joined);
    ++changed;
  }
  return changed;
}

} // namespace

size_t runSinkTokenConcat(Function& f, const PassContext& ctx) {
  std::deque<Node*> work;
  for (Node* n : snapshot(f))
    if (isSeed(*n))
      work.push_back(n);
  size_t changed = 0;
  while (!work.empty()) {
    Node* c = work.front();
    work.pop_front();
    changed += sinkBelowReaders(f, c, work);
  }
  if (!changed)
    return 0;
  tidy(f);
  runConstantFold(f, ctx); // the constant parts (a class token's Add and LayerNorm)
  runMergeReshape(f, ctx); // a gathered operand's Reshape with its producer's
  runDce(f, ctx);
  return changed;
}

} // namespace ember
