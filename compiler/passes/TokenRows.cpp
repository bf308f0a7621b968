// Windowed transformers (torchvision's Swin) keep their tokens as [N, H, W, C] and their
// attention as [windows, heads, T, T], values of rank 4 to 6 whose last axis is the
// channels. A backend that holds rank-4 values as NCHW images (the NPU: NCHWc rows) has
// no form for them. Two passes give them the forms such a backend has:
//
// collapse-batch-axes: from every LayerNormalization over the last axis of a value of
// rank > 3, every node downstream of it that works along the last axis (LayerNorm,
// Softmax, element-wise ops, MatMul, Concat along the last axis, the Transpose of the
// last two axes) and has rank > 3 is rewritten on its value with the leading axes merged:
// [P, C] (a MatMul of two values [P, M, K] x [P, K, N], a Transpose [P, a, b] ->
// [P, b, a]) between Reshapes. A constant operand that varies along more than the last
// axis is broadcast to the full shape (the relative-position bias and the window mask).
//
// moves-to-gather: a chain of nodes that only move values (Reshape, Transpose, Slice,
// Concat, Gather by constant indices, Pad by nothing) from one value of rank <= 3 to a
// value of rank <= 3 through values of rank > 3 (Swin's cyclic shift, window partition
// and reverse, head split and merge, patch merging's strided slices) is found to move
// whole runs of u values of its source (u a divisor of the source's last axis) by
// running it on the indices of the source's elements; it then becomes Reshape(source,
// [rows, u]) -> Gather(axis 0, constant row indices) -> Reshape.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/OpInfo.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/passes/Passes.h"

#include <algorithm>
#include <map>
#include <set>

namespace ember {

using namespace passes;

namespace {

Node* reshapeTo(Function& f, const std::string& name, NodeValue v, const Shape& to) {
  Attrs a;
  a.set("shape", std::vector<int64_t>(to.begin(), to.end()));
  return f.create(NodeKind::Reshape, name, {v}, a);
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= s[i];
  return p;
}

bool isLast(int64_t axis, size_t rank) {
  return axis == -1 || axis == int64_t(rank) - 1;
}

/// True when only result 0 of `n` is read (LayerNormalization's statistics unused).
bool onlyResult0Read(const Function& f, const Node* n) {
  for (const auto& m : f.nodes())
    for (const NodeValue& v : m->inputs())
      if (v.node == n && v.resNo != 0)
        return false;
  for (const auto& o : f.outputs())
    if (o.value.node == n && o.value.resNo != 0)
      return false;
  return true;
}

// ---------------------------------------------------------------- collapse-batch-axes

enum class Form { None, Rows, Batched };

/// A float constant `c` broadcast to `dims` (numpy rules), or nullopt when too large.
std::optional<Tensor> broadcastConstant(const Tensor& c, const Shape& dims) {
  const int64_t n = product(dims, 0, dims.size());
  if (n > (int64_t(1) << 22) || c.dims().size() > dims.size())
    return std::nullopt;
  Tensor out(ElemKind::Float32, dims);
  const size_t off = dims.size() - c.dims().size();
  std::vector<int64_t> cs(c.dims().size(), 1); // strides of c
  for (size_t i = cs.size(); i-- > 1;)
    cs[i - 1] = cs[i] * c.dims()[i];
  for (int64_t e = 0; e < n; ++e) {
    int64_t rest = e, src = 0;
    for (size_t i = dims.size(); i-- > 0;) {
      const int64_t d = rest % dims[i];
      rest /= dims[i];
      if (i >= off && c.dims()[i - off] != 1)
        src += d * cs[i - off];
    }
    out.data<float>()[e] = float(c.getAsDouble(src));
  }
  return out;
}

/// A constant that varies only along the last axis of `dims` (or is a scalar): usable on
/// the [P, C] form as it is, reshaped to [C] (or kept a scalar).
bool variesAlongLastOnly(const Shape& c, const Shape& dims) {
  for (size_t i = 0; i + 1 < c.size(); ++i)
    if (c[i] != 1)
      return false;
  return c.empty() || c.back() == 1 || c.back() == dims.back();
}

Form formOf(const Node& n) {
  if (!allPlainFloat(n) || FusedActivation::present(n.attrs()) || n.resultType().dims.size() < 4)
    return Form::None;
  const size_t r = n.resultType().dims.size();
  const NodeKind k = n.kind();
  if (k == NodeKind::LayerNormalization)
    return isLast(normOf(n.attrs()).axis, r) ? Form::Rows : Form::None;
  if (n.numResults() != 1)
    return Form::None;
  if (k == NodeKind::Softmax || k == NodeKind::LogSoftmax)
    return isLast(softmaxOf(n.attrs()).axis, r) ? Form::Rows : Form::None;
  if (k == NodeKind::Concat)
    return isLast(axisOf(n.attrs()).axis, r) ? Form::Rows : Form::None;
  if (hasTrait(k, OpTrait::ElementwiseUnary) && n.numInputs() == 1)
    return Form::Rows;
  if (hasTrait(k, OpTrait::ElementwiseBinary) && n.numInputs() == 2)
    return Form::Rows;
  if (k == NodeKind::Transpose) {
    const std::vector<int64_t> p = transposeOf(n.attrs()).resolved(r);
    for (size_t i = 0; i + 2 < r; ++i)
      if (p[i] != int64_t(i))
        return Form::None;
    return p[r - 2] == int64_t(r) - 1 ? Form::Batched : Form::None;
  }
  if (k == NodeKind::MatMul && n.numInputs() == 2) {
    const Shape &a = n.input(0).dims(), &b = n.input(1).dims();
    if (a.size() == r && isConstant(n.input(1)) && b.size() == 2)
      return Form::Rows;
    if (a.size() == r && b.size() == r && std::equal(a.begin(), a.end() - 2, b.begin()))
      return Form::Batched;
  }
  return Form::None;
}

/// Operand `v` of `n` (result dims `y`) in the collapsed form, or a null value when it has
/// none.
NodeValue collapsedOperand(Function& f, const Node& n, NodeValue v, Form form, const Shape& y) {
  const Shape& d = v.dims();
  const std::string base = n.name() + ".rows";
  if (n.kind() == NodeKind::LayerNormalization && v != n.input(0))
    return v; // scale and bias along the last axis
  if (n.kind() == NodeKind::MatMul && form == Form::Rows && v == n.input(1))
    return v;
  if (form == Form::Batched) {
    if (d.size() != y.size())
      return {};
    const int64_t P = product(d, 0, d.size() - 2);
    return reshapeTo(f, base, v, {P, d[d.size() - 2], d.back()})->result();
  }
  const bool binary = hasTrait(n.kind(), OpTrait::ElementwiseBinary);
  if (binary && isConstant(v)) {
    if (variesAlongLastOnly(d, y))
      return d.empty() || d.size() == 1
                 ? v
                 : makeConstant(f, base, v.node->payload().reshaped({d.back()}));
    auto full = broadcastConstant(v.node->payload(), y);
    if (!full)
      return {};
    return makeConstant(f, base, full->reshaped({product(y, 0, y.size() - 1), y.back()}));
  }
  if (d.size() != y.size() || !std::equal(d.begin(), d.end() - 1, y.begin()))
    return {}; // broadcasting between two values
  return reshapeTo(f, base, v, {product(d, 0, d.size() - 1), d.back()})->result();
}

/// Rewrites `n` in its collapsed form; false when an operand has none.
bool collapse(Function& f, Node* n, Form form) {
  const Shape y = n->resultType().dims;
  std::vector<NodeValue> ins;
  for (const NodeValue& v : n->inputs()) {
    if (!v) {
      ins.push_back(v);
      continue;
    }
    NodeValue c = collapsedOperand(f, *n, v, form, y);
    if (!c)
      return false; // the Reshapes made so far are dead and dropped by tidy
    ins.push_back(c);
  }
  Attrs a = n->attrs();
  if (n->kind() == NodeKind::Concat)
    a.set("axis", int64_t(1));
  if (n->kind() == NodeKind::LayerNormalization || n->kind() == NodeKind::Softmax ||
      n->kind() == NodeKind::LogSoftmax)
    a.set("axis", int64_t(-1));
  if (n->kind() == NodeKind::Transpose)
    a.set("perm", std::vector<int64_t>{0, 2, 1});
  Node* m = f.create(n->kind(), n->name() + ".rows", ins, a);
  Node* back = reshapeTo(f, n->name() + ".shape", m->result(), y);
  f.replaceAllUsesOf(n->result(), back->result());
  return true;
}

/// Whether the channels of a token value stay the last axis through `n`: a node of rank
/// <= 3 (a sequence's Gemm), a node with a collapsed form, a node that moves values other
/// than a Transpose, or a Transpose that keeps the last axis last.
bool keepsChannelsLast(const Node& n) {
  const size_t r = n.resultType().dims.size();
  if (r <= 3 || formOf(n) != Form::None)
    return true;
  const NodeKind k = n.kind(); // a membership test: any other kind (a new one too) is not
  if (k == NodeKind::Transpose)
    return transposeOf(n.attrs()).resolved(r).back() == int64_t(r) - 1;
  return k == NodeKind::Reshape || k == NodeKind::Slice || k == NodeKind::Concat ||
         k == NodeKind::Gather || k == NodeKind::Pad;
}

// ---------------------------------------------------------------- moves-to-gather

bool isMove(const Node* n) {
  if (!allPlainFloat(*n) || n->numResults() != 1)
    return false;
  const NodeKind k = n->kind(); // a membership test: any other kind (a new one too) is not
  if (k == NodeKind::Gather)
    return isConstant(n->input(1));
  if (k == NodeKind::Pad)
    return n->input(0).dims() == n->resultType().dims;
  return k == NodeKind::Reshape || k == NodeKind::Transpose || k == NodeKind::Slice ||
         k == NodeKind::Concat;
}

/// The data inputs of move `n` (Gather's and Pad's other operands are constants).
std::vector<NodeValue> dataInputs(const Node* n) {
  if (n->kind() == NodeKind::Concat)
    return n->inputs();
  return {n->input(0)};
}

/// The chain ending at move `end`: its nodes in graph order and its one source, or false.
bool chainOf(const Function& f, Node* end, std::vector<Node*>* nodes, NodeValue* src) {
  std::set<Node*> seen;
  std::vector<Node*> work = {end};
  while (!work.empty()) {
    Node* n = work.back();
    work.pop_back();
    if (!seen.insert(n).second)
      continue;
    for (const NodeValue& v : dataInputs(n)) {
      if (!v || isConstant(v))
        return false;
      if (isMove(v.node)) {
        work.push_back(v.node);
      } else if (!*src) {
        *src = v;
      } else if (*src != v) {
        return false;
      }
    }
    for (const NodeValue& v : n->inputs())
      if (v && !isConstant(v) && !isMove(v.node) && v != *src)
        return false;
  }
  if (!*src || seen.size() > 64)
    return false;
  for (const auto& p : f.nodes())
    if (seen.count(p.get()))
      nodes->push_back(p.get());
  return true;
}

/// Whether the chain is worth a Gather: from and to rank <= 3 through rank > 3, not only
/// Reshapes.
bool worthIt(const std::vector<Node*>& nodes, const NodeValue& src, const Node* end) {
  if (src.dims().size() > 3 || end->resultType().dims.size() > 3)
    return false;
  bool deep = false, moves = false;
  for (const Node* n : nodes) {
    deep = deep || n->resultType().dims.size() > 3;
    moves = moves || n->kind() != NodeKind::Reshape;
  }
  return deep && moves;
}

/// The source row of every row of u values of the chain's result, if each is a whole row.
std::optional<std::vector<int64_t>> rowsOf(const Tensor& r, int64_t u) {
  if (r.size() % u)
    return std::nullopt;
  const float* p = r.data<float>();
  std::vector<int64_t> idx(size_t(r.size() / u));
  for (size_t row = 0; row < idx.size(); ++row) {
    const int64_t base = int64_t(p[row * size_t(u)]);
    if (base % u)
      return std::nullopt;
    for (int64_t k = 1; k < u; ++k)
      if (int64_t(p[row * size_t(u) + size_t(k)]) != base + k)
        return std::nullopt;
    idx[row] = base / u;
  }
  return idx;
}

/// Rewrites the chain ending at `end` as a Gather of rows; false when it is not one.
bool gatherChain(Function& f, Node* end) {
  std::vector<Node*> nodes;
  NodeValue src;
  if (!chainOf(f, end, &nodes, &src) || !worthIt(nodes, src, end))
    return false;
  const Shape& sd = src.dims();
  const int64_t total = product(sd, 0, sd.size());
  if (sd.empty() || total > (int64_t(1) << 24))
    return false; // indices exact in float
  // Run the chain on the flat index of every source element.
  std::map<NodeValue, Tensor> val;
  Tensor iota(ElemKind::Float32, sd);
  for (int64_t i = 0; i < total; ++i)
    iota.data<float>()[i] = float(i);
  val[src] = std::move(iota);
  for (Node* n : nodes) {
    std::vector<const Tensor*> in;
    for (const NodeValue& v : n->inputs())
      in.push_back(!v ? nullptr : isConstant(v) ? &v.node->payload() : &val.at(v));
    val[n->result()] = std::move(evaluateNode(*n, in).at(0));
  }
  const Tensor& r = val.at(end->result());
  const int64_t C = sd.back();
  for (int64_t u = C; u >= 1; --u) {
    if (C % u || (u < 8 && u != C))
      continue;
    auto idx = rowsOf(r, u);
    if (!idx)
      continue;
    const int64_t rows = total / u;
    NodeValue rowsVal = reshapeTo(f, end->name() + ".rows", src, {rows, u})->result();
    bool identity = int64_t(idx->size()) == rows;
    for (size_t i = 0; identity && i < idx->size(); ++i)
      identity = (*idx)[i] == int64_t(i);
    if (!identity) {
      Attrs a;
      a.set("axis", int64_t(0));
      NodeValue ix = makeConstant(f, end->name() + ".idx",
                                  Tensor::fromVector<int64_t>({int64_t(idx->size())}, *idx));
      rowsVal = f.create(NodeKind::Gather, end->name() + ".gather", {rowsVal, ix}, a)->result();
    }
    Node* back = reshapeTo(f, end->name() + ".shape", rowsVal, end->resultType().dims);
    f.replaceAllUsesOf(end->result(), back->result());
    return true;
  }
  return false;
}

/// One image between NCHW and tokens through a transpose that keeps the channel axis
/// (which the NPU runs as a row permutation): Transpose(0, 2, 3, 1) of [1, C, H, W] read
/// only by a Reshape to [H*W, C] becomes Reshape [1, C, 1, H*W] -> Transpose(3, 1, 0, 2)
/// -> Reshape; Transpose(0, 3, 1, 2) of a Reshape of [H*W, C] to [1, H, W, C] becomes
/// Reshape [H*W, C, 1, 1] -> Transpose(2, 1, 3, 0) -> Reshape [1, C, H, W].
bool imageTokens(Function& f, Node* t) {
  if (t->kind() != NodeKind::Transpose || !allPlainFloat(*t) || t->input(0).dims().size() != 4)
    return false;
  const std::vector<int64_t> p = transposeOf(t->attrs()).resolved(4);
  const Shape& x = t->input(0).dims();
  if (p == std::vector<int64_t>{0, 2, 3, 1} && x[0] == 1) {
    Node* r = singleUser(f, t);
    if (!r || r->kind() != NodeKind::Reshape || r->resultType().dims != Shape{x[2] * x[3], x[1]})
      return false;
    Node* a = reshapeTo(f, t->name() + ".line", t->input(0), {1, x[1], 1, x[2] * x[3]});
    Attrs at;
    at.set("perm", std::vector<int64_t>{3, 1, 0, 2});
    Node* b = f.create(NodeKind::Transpose, t->name() + ".rows", {a->result()}, at);
    Node* c = reshapeTo(f, r->name() + ".tokens", b->result(), r->resultType().dims);
    f.replaceAllUsesOf(r->result(), c->result());
    return true;
  }
  const Node* r = t->input(0).node;
  if (p != std::vector<int64_t>{0, 3, 1, 2} || x[0] != 1 || r->kind() != NodeKind::Reshape ||
      r->input(0).dims() != Shape{x[1] * x[2], x[3]} || singleUser(f, r) != t)
    return false;
  Node* a = reshapeTo(f, t->name() + ".rows", r->input(0), {x[1] * x[2], x[3], 1, 1});
  Attrs at;
  at.set("perm", std::vector<int64_t>{2, 1, 3, 0});
  Node* b = f.create(NodeKind::Transpose, t->name() + ".line", {a->result()}, at);
  Node* c = reshapeTo(f, t->name() + ".image", b->result(), t->resultType().dims);
  f.replaceAllUsesOf(t->result(), c->result());
  return true;
}

} // namespace

size_t runCollapseBatchAxes(Function& f, const PassContext&) {
  // The nodes downstream of a LayerNormalization over the last axis of rank > 3 while the
  // channels stay the last axis (a Transpose that moves them, back to an NCHW image, ends
  // the region: the image's nodes are not rewritten).
  std::set<const Node*> down;
  for (const auto& p : f.nodes()) {
    const Node* n = p.get();
    bool d = n->kind() == NodeKind::LayerNormalization && formOf(*n) == Form::Rows;
    for (const NodeValue& v : n->inputs())
      d = d || (v && down.count(v.node) && keepsChannelsLast(*n));
    if (d)
      down.insert(n);
  }
  size_t changed = 0;
  const size_t before = f.numNodes();
  for (Node* n : snapshot(f)) {
    if (!down.count(n))
      continue;
    const Form form = formOf(*n);
    if (form == Form::None || !onlyResult0Read(f, n))
      continue;
    changed += collapse(f, n, form);
  }
  if (changed || f.numNodes() != before) // (a node refused midway leaves dead Reshapes)
    tidy(f);
  return changed;
}

size_t runMovesToGather(Function& f, const PassContext&) {
  size_t changed = 0;
  for (Node* n : snapshot(f))
    changed += imageTokens(f, n);
  std::vector<Node*> work;
  std::set<const Node*> outputs;
  for (const auto& o : f.outputs())
    outputs.insert(o.value.node);
  std::map<const Node*, std::vector<const Node*>> users;
  for (const auto& p : f.nodes())
    for (const NodeValue& v : p->inputs())
      if (v)
        users[v.node].push_back(p.get());
  for (Node* n : snapshot(f)) {
    if (!isMove(n))
      continue;
    bool end = outputs.count(n) > 0;
    for (const Node* u : users[n])
      end = end || !isMove(u);
    if (end)
      work.push_back(n);
  }
  std::set<const Node*> tried;
  while (!work.empty()) {
    Node* n = work.back();
    work.pop_back();
    if (!tried.insert(n).second)
      continue;
    if (gatherChain(f, n)) {
      ++changed;
      continue;
    }
    for (const NodeValue& v : dataInputs(n)) // a shorter chain may still be rows
      if (v && isMove(v.node))
        work.push_back(v.node);
  }
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
