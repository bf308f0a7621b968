// sink-permutation: a region of the graph that lies between a Transpose P and the
// Transposes that undo it (ConvNeXt's [0, 2, 3, 1] ... [0, 3, 1, 2]: channels-last
// LayerNorm, Linear layers, GELU) is rewritten in the layout before P, and the
// Transposes are dropped:
//   - element-wise unary ops, and binary ops between two values of the region or with a
//     scalar constant: unchanged;
//   - binary ops with another constant (that broadcasts onto the region's value): the
//     constant transposed by P^-1 (a [C] bias of a channels-last value becomes [1, C, 1, 1]);
//   - Softmax / LogSoftmax along axis a: along P[a];
//   - MatMul by a constant W [C, K] along the channels (P's last axis is the layout's axis
//     1), and an Add of a constant of K values that is its only user: a 1x1 Conv with the
//     weight W^T [K, C, 1, 1] and that bias;
//   - LayerNormalization over the last axis when that axis is the layout's axis 1 (P's
//     last entry is 1: ConvNeXt's [0, 2, 3, 1]): a ChannelLayerNormalization, which
//     normalises axis 1 for every other index (ONNX's LayerNormalization over axis 1 of
//     an NCHW value would normalise channels and pixels together);
//   - LayerNormalization over the last axis otherwise: it stays between its own
//     Transpose P and P^-1.
// A Transpose Q that reads a value of the region becomes Transpose(P o Q) (nothing when
// that is the identity). The region grows over every user of its values and over other
// Transposes P that feed it; it is rewritten only when every node of it has a form above,
// no value of it is a function output, and the rewrite removes more Transposes than it
// adds or turns a MatMul into a Conv. Otherwise the graph is left as it is.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/OpInfo.h"
#include "ember/passes/Passes.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace ember {

using namespace passes;

namespace {

using Perm = std::vector<int64_t>;

Perm permOf(const Node& t) {
  return transposeOf(t.attrs()).resolved(t.input(0).dims().size());
}

Perm inverse(const Perm& p) {
  Perm q(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    q[static_cast<size_t>(p[i])] = int64_t(i);
  return q;
}

bool isIdentity(const Perm& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != int64_t(i))
      return false;
  return true;
}

bool isTransposeBy(const Node* n, const Perm& p) {
  return n->kind() == NodeKind::Transpose && allPlainFloat(*n) && permOf(*n) == p;
}

/// How a node of the region is rewritten.
enum class Form { Unary, Binary, Softmax, MatMul, LayerNorm, ChannelNorm };

/// The users of every node of `f` (each user once per node) and the nodes that are outputs.
struct Uses {
  std::map<const Node*, std::vector<Node*>> users;
  std::set<const Node*> outputs;
  explicit Uses(const Function& f) {
    for (const auto& n : f.nodes())
      for (const NodeValue& v : n->inputs())
        if (v) {
          auto& u = users[v.node];
          if (std::find(u.begin(), u.end(), n.get()) == u.end())
            u.push_back(n.get());
        }
    for (const auto& o : f.outputs())
      outputs.insert(o.value.node);
  }
  const std::vector<Node*>& of(const Node* n) const {
    static const std::vector<Node*> none;
    auto it = users.find(n);
    return it == users.end() ? none : it->second;
  }
};

/// A region found from one entry Transpose.
struct Region {
  Perm perm, inv;
  std::vector<Node*> entries;    ///< Transposes by perm whose results the region reads
  std::map<Node*, Form> nodes;   ///< rewritten nodes
  std::vector<Node*> exits;      ///< Transposes reading a value of the region
  std::map<Node*, Node*> biasOf; ///< MatMul -> the Add of its constant bias
  std::set<Node*> absorbed;      ///< Adds absorbed as a Conv's bias
  bool isEntry(const Node* n) const {
    return std::find(entries.begin(), entries.end(), n) != entries.end();
  }
  bool holds(const Node* n) const { return isEntry(n) || nodes.count(const_cast<Node*>(n)); }
};

/// A constant of K values along the last axis ([K], [1, K], ...), as a [K] tensor.
std::optional<Tensor> biasVector(const NodeValue& c, int64_t k) {
  if (!isConstant(c) || !isPlainFloat(c.type()) || c.type().size() != k || c.dims().empty() ||
      c.dims().back() != k)
    return std::nullopt;
  return c.node->payload().reshaped({k});
}

/// The form of `n` in a region permuted by `perm`, if it has one (operands are checked
/// later, once the region is known).
std::optional<Form> formOf(const Node& n, const Perm& perm) {
  const NodeKind k = n.kind();
  // LayerNormalization's Mean and InvStdDev results must be unused (growRegion checks).
  if ((n.numResults() != 1 && k != NodeKind::LayerNormalization) || !allPlainFloat(n) ||
      FusedActivation::present(n.attrs()))
    return std::nullopt;
  const size_t rank = perm.size();
  if (n.resultType().dims.size() != rank)
    return std::nullopt;
  if (hasTrait(k, OpTrait::ElementwiseUnary) && n.numInputs() == 1)
    return Form::Unary;
  if (hasTrait(k, OpTrait::ElementwiseBinary) && n.numInputs() == 2)
    return Form::Binary;
  if ((k == NodeKind::Softmax || k == NodeKind::LogSoftmax) && n.numInputs() == 1)
    return Form::Softmax;
  if (k == NodeKind::MatMul && n.numInputs() == 2 && isConstant(n.input(1)) &&
      isPlainFloat(n.input(1).type()) && n.input(1).dims().size() == 2 &&
      (rank == 3 || rank == 4) && perm.back() == 1)
    return Form::MatMul;
  if (k == NodeKind::LayerNormalization) {
    const int64_t axis = normOf(n.attrs()).axis;
    if (axis == -1 || axis == int64_t(rank) - 1)
      return perm.back() == 1 ? Form::ChannelNorm : Form::LayerNorm;
  }
  return std::nullopt;
}

/// Whether operand `i` of region node `n` is acceptable: a value of the region (entries
/// included), or a constant the form can carry over.
bool operandOk(const Region& r, const Node* n, Form form, size_t i) {
  const NodeValue v = n->input(i);
  const bool norm = form == Form::LayerNorm || form == Form::ChannelNorm;
  if (!v)
    return norm; // LayerNormalization's optional bias
  if (r.holds(v.node))
    return !(form == Form::MatMul && i == 1) && !(norm && i > 0);
  if (!isConstant(v) || !isPlainFloat(v.type()))
    return false;
  switch (form) {
  case Form::Binary: // the constant must broadcast onto the region's value
    return v.dims().size() <= r.perm.size() && n->resultType().dims == n->input(1 - i).dims() &&
           r.holds(n->input(1 - i).node);
  case Form::MatMul:
    return i == 1;
  case Form::LayerNorm:
  case Form::ChannelNorm:
    return i > 0;
  default:
    return false;
  }
}

/// Grows the region from entry `t`; false when it cannot be rewritten.
bool growRegion(const Uses& uses, Node* t, Region* r) {
  r->perm = permOf(*t);
  r->inv = inverse(r->perm);
  r->entries = {t};
  std::vector<Node*> work = {t};
  while (!work.empty()) {
    Node* v = work.back();
    work.pop_back();
    if (uses.outputs.count(v))
      return false; // a value of the region escapes as a function output
    for (Node* u : uses.of(v)) {
      for (const NodeValue& in : u->inputs())
        if (in.node == v && in.resNo != 0)
          return false; // a LayerNormalization's statistics are read
      if (r->holds(u) || std::find(r->exits.begin(), r->exits.end(), u) != r->exits.end())
        continue;
      if (u->kind() == NodeKind::Transpose && allPlainFloat(*u)) {
        r->exits.push_back(u);
        continue;
      }
      const std::optional<Form> form = formOf(*u, r->perm);
      if (!form)
        return false; // a consumer with no form in the other layout
      r->nodes[u] = *form;
      work.push_back(u);
      // Other Transposes by the same perm that feed it join as entries.
      for (const NodeValue& in : u->inputs())
        if (in && !r->holds(in.node) && isTransposeBy(in.node, r->perm)) {
          r->entries.push_back(in.node);
          work.push_back(in.node);
        }
    }
  }
  for (const auto& [n, form] : r->nodes)
    for (size_t i = 0; i < n->numInputs(); ++i)
      if (!operandOk(*r, n, form, i))
        return false;
  // An exit is a Transpose of a region value: it cannot also be an entry.
  for (Node* e : r->exits)
    if (r->isEntry(e))
      return false;
  // A MatMul's bias: a single-use Add of K values in the region.
  for (const auto& [n, form] : r->nodes) {
    if (form != Form::MatMul)
      continue;
    const std::vector<Node*>& us = uses.of(n);
    if (us.size() != 1 || uses.outputs.count(n) || us[0]->kind() != NodeKind::Add ||
        !r->nodes.count(us[0]))
      continue;
    Node* add = us[0];
    const NodeValue other = add->input(0).node == n ? add->input(1) : add->input(0);
    if (add->input(0).node != add->input(1).node && biasVector(other, n->input(1).dims()[1]) &&
        add->resultType().dims == n->resultType().dims) {
      r->biasOf[n] = add;
      r->absorbed.insert(add);
    }
  }
  // Worth it: more Transposes removed than added, or a MatMul made a Conv.
  size_t removed = r->entries.size(), added = 0, convs = 0;
  for (Node* e : r->exits) {
    Perm merged(r->perm.size());
    const Perm q = permOf(*e);
    for (size_t i = 0; i < q.size(); ++i)
      merged[i] = r->perm[static_cast<size_t>(q[i])];
    removed += isIdentity(merged);
  }
  for (const auto& [n, form] : r->nodes) {
    added += form == Form::LayerNorm ? 2 : 0;
    convs += form == Form::MatMul;
  }
  return !r->exits.empty() && (removed > added || convs > 0);
}

/// `t` (in the permuted layout) transposed back: result[j] = t[i] where i_k = j_{P[k]},
/// after broadcasting t to the region's rank.
Tensor unpermuted(const Tensor& t, const Perm& perm) {
  const size_t rank = perm.size();
  Shape s(rank - t.dims().size(), 1);
  s.insert(s.end(), t.dims().begin(), t.dims().end());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k)
    out[static_cast<size_t>(perm[k])] = s[k];
  Tensor r(ElemKind::Float32, out);
  std::vector<int64_t> strides(rank, 1); // of t, in the permuted layout
  for (size_t k = rank - 1; k-- > 0;)
    strides[k] = strides[k + 1] * s[k + 1];
  std::vector<int64_t> idx(rank, 0);
  const float* src = t.data<float>();
  float* dst = r.data<float>();
  for (int64_t j = 0; j < r.size(); ++j) {
    int64_t off = 0;
    for (size_t k = 0; k < rank; ++k)
      off += idx[static_cast<size_t>(perm[k])] * strides[k];
    dst[j] = src[off];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out[d])
        break;
      idx[d] = 0;
    }
  }
  return r;
}

Node* transpose(Function& f, const std::string& name, NodeValue v, const Perm& p) {
  Attrs a;
  a.set("perm", p);
  return f.create(NodeKind::Transpose, name, {v}, a);
}

/// The 1x1 Conv of MatMul `mm` (x in the layout before the perm) and its bias Add, if any.
Node* convOf(Function& f, Node* mm, NodeValue x, Node* add) {
  const Tensor& w = mm->input(1).node->payload();
  const int64_t c = w.dims()[0], k = w.dims()[1];
  Shape wd = {k, c, 1};
  if (x.dims().size() == 4)
    wd.push_back(1);
  Tensor wc(ElemKind::Float32, wd);
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t ki = 0; ki < k; ++ki)
      wc.data<float>()[ki * c + ci] = w.data<float>()[ci * k + ki];
  const std::string name = (add ? add : mm)->name();
  std::vector<NodeValue> in = {x, makeConstant(f, name + ".weight", std::move(wc))};
  if (add) {
    const NodeValue b = add->input(0).node == mm ? add->input(1) : add->input(0);
    in.push_back(makeConstant(f, name + ".bias", *biasVector(b, k)));
  }
  return f.create(NodeKind::Conv, name + ".conv", in, Attrs{});
}

/// Rewrites region `r` of `f`; returns the new nodes and the names they should take.
void rewrite(Function& f, const Region& r) {
  std::map<const Node*, NodeValue> mapped; // region node -> its value in the layout before P
  for (Node* e : r.entries)
    mapped[e] = e->input(0);
  std::vector<std::pair<Node*, std::string>> renames;
  auto operand = [&](const Node* n, size_t i) -> NodeValue {
    const NodeValue v = n->input(i);
    if (!v || !r.holds(v.node))
      return v;
    return mapped.at(v.node);
  };
  for (Node* n : snapshot(f)) {
    auto it = r.nodes.find(n);
    if (it == r.nodes.end())
      continue;
    const std::string name = n->name();
    Node* made = nullptr;
    switch (it->second) {
    case Form::Unary:
      made = f.create(n->kind(), name + ".unpermuted", {operand(n, 0)}, n->attrs());
      break;
    case Form::Binary: {
      if (r.absorbed.count(n)) {
        continue; // mapped with its MatMul
      }
      std::vector<NodeValue> in = {operand(n, 0), operand(n, 1)};
      for (size_t i = 0; i < 2; ++i)
        if (!r.holds(n->input(i).node) && n->input(i).type().size() != 1)
          in[i] = makeConstant(f, name + ".c" + std::to_string(i),
                               unpermuted(n->input(i).node->payload(), r.perm));
      made = f.create(n->kind(), name + ".unpermuted", in, n->attrs());
      break;
    }
    case Form::Softmax: {
      Attrs a = n->attrs();
      const int64_t rank = int64_t(r.perm.size());
      int64_t axis = softmaxOf(a).axis;
      axis = axis < 0 ? axis + rank : axis;
      a.set("axis", r.perm[static_cast<size_t>(axis)]);
      made = f.create(n->kind(), name + ".unpermuted", {operand(n, 0)}, a);
      break;
    }
    case Form::MatMul: {
      auto b = r.biasOf.find(n);
      Node* add = b == r.biasOf.end() ? nullptr : b->second;
      made = convOf(f, n, operand(n, 0), add);
      if (add) {
        mapped[add] = made->result();
        renames.emplace_back(made, add->name());
      }
      break;
    }
    case Form::LayerNorm: {
      Node* in = transpose(f, name + ".to_last", operand(n, 0), r.perm);
      std::vector<NodeValue> ins(n->inputs().begin(), n->inputs().end());
      ins[0] = in->result();
      Node* ln = f.create(n->kind(), name + ".channels_last", ins, n->attrs());
      renames.emplace_back(ln, name);
      made = transpose(f, name + ".from_last", ln->result(), r.inv);
      break;
    }
    case Form::ChannelNorm: {
      std::vector<NodeValue> ins(n->inputs().begin(), n->inputs().end());
      ins[0] = operand(n, 0);
      Attrs a;
      a.set("epsilon", normOf(n->attrs()).epsilon);
      made = f.create(NodeKind::ChannelLayerNormalization, name + ".channels", ins, a);
      break;
    }
    }
    mapped[n] = made->result();
    if (it->second != Form::LayerNorm && !(it->second == Form::MatMul && r.biasOf.count(n)))
      renames.emplace_back(made, name);
  }
  for (Node* e : r.exits) {
    const NodeValue src = mapped.at(e->input(0).node);
    const Perm q = permOf(*e);
    Perm merged(q.size());
    for (size_t i = 0; i < q.size(); ++i)
      merged[i] = r.perm[static_cast<size_t>(q[i])];
    if (isIdentity(merged)) {
      f.replaceAllUsesOf(e->result(), src);
    } else {
      Node* t = transpose(f, e->name() + ".merged", src, merged);
      f.replaceAllUsesOf(e->result(), t->result());
      renames.emplace_back(t, e->name());
    }
  }
  tidy(f);
  for (auto& [n, name] : renames)
    takeNameIfFree(f, n, name);
}

/// Rewrites the first region that can be rewritten; false when none is left.
bool rewriteOne(Function& f, std::set<const Node*>* tried) {
  const Uses uses(f);
  for (Node* n : snapshot(f)) {
    if (n->kind() != NodeKind::Transpose || !allPlainFloat(*n) || tried->count(n))
      continue;
    tried->insert(n);
    Region r;
    if (!growRegion(uses, n, &r))
      continue;
    rewrite(f, r);
    return true;
  }
  return false;
}

} // namespace

size_t runSinkPermutation(Function& f, const PassContext&) {
  size_t changed = 0;
  std::set<const Node*> tried; // entries whose region cannot be rewritten
  while (rewriteOne(f, &tried)) {
    ++changed;
    tried.clear(); // a rewrite may have made another region rewritable
  }
  return changed;
}

} // namespace ember
