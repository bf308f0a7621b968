// conv1d-to-conv2d: a 1-D convolution (Conv on [N, C, T], as in speech and Conformer
// blocks, depthwise Conv1d included) becomes the 2-D convolution of the same values on
// [N, C, 1, T]: weights [K, C/g, k] -> [K, C/g, 1, k], kernel 1 x k, pads, strides and
// dilations along W. The element-wise nodes between such convolutions (the GLU's Split,
// Sigmoid and Mul, BatchNormalization, SiLU, PRelu, Add) are carried into the rank-4 form
// with them, so that chained convolutions meet without a Reshape between them: the region
// grows from every Conv1d over the element-wise nodes that read or produce its rank-3
// values, constants broadcast onto [N, C, T] get a unit axis before T. A value that enters
// the region is reshaped to [N, C, 1, T]; a value that leaves it is reshaped back.
//
// With one sequence (N = 1), a region fed by Transpose(x [1, T, C], perm 0, 2, 1) (the
// Conformer's way from channels-last features to channels-first convolutions) reads x as
// Reshape(x, [T, C, 1, 1]) -> Transpose(perm 2, 1, 3, 0) -> [1, C, 1, T], and a Transpose(0,
// 2, 1) reading a region value becomes Transpose(perm 3, 1, 0, 2) -> [T, K, 1, 1] ->
// Reshape [1, T, K]: the same values, through transposes that keep the channel axis in
// place (a backend keeping channels in lanes, the NPU, moves whole rows for them; its
// rank-3 values are channels-last, so [T, C, 1, 1] is x's own bytes).
//
// split-to-slices: a Split becomes one Slice per result (the same values), which a
// backend with channel selection but no multi-result Split (the NPU) runs.
#include "PassUtil.h"

#include "ember/graph/AttrViews.h"
#include "ember/graph/OpInfo.h"
#include "ember/passes/Passes.h"

#include <map>
#include <set>

namespace ember {

using namespace passes;

namespace {

bool isConv1d(const Node& n) {
  if (n.kind() != NodeKind::Conv || !allPlainFloat(n) || n.input(0).dims().size() != 3 ||
      !isConstant(n.input(1)) || n.input(1).dims().size() != 3)
    return false;
  const Shape ks{n.input(1).dims()[2]};
  const std::string pad = windowOf(n.attrs(), 1, &ks).autoPad;
  return pad == "NOTSET" || pad.empty();
}

/// A normalized axis of a rank-3 node attribute equal to 1 (the channels).
bool channelAxisAttr(const Node& n) {
  const int64_t a = axisOf(n.attrs()).axis;
  return a == 1 || a == -2;
}

/// A constant that broadcasts onto a [N, C, T] value (its rank-4 form is made later).
bool broadcastsOnto(const NodeValue& c, const Shape& d) {
  if (!isConstant(c) || c.dims().size() > 3)
    return false;
  const Shape& s = c.dims();
  for (size_t i = 0; i < s.size(); ++i) {
    const int64_t di = d[3 - s.size() + i];
    if (s[i] != 1 && s[i] != di)
      return false;
  }
  return true;
}

/// Whether `n` can be carried into the rank-4 form (its rank-3 operands checked too).
bool liftable(const Node& n) {
  if (isConv1d(n))
    return true;
  if (!allPlainFloat(n) || FusedActivation::present(n.attrs()) || n.numResults() == 0)
    return false;
  for (const Type& t : n.resultTypes())
    if (t.dims.size() != 3)
      return false;
  const Shape& d = n.resultType().dims;
  const NodeKind k = n.kind();
  if (k == NodeKind::Split || k == NodeKind::Concat) {
    if (!channelAxisAttr(n))
      return false;
    for (const NodeValue& v : n.inputs())
      if (v.dims().size() != 3 || isConstant(v))
        return false;
    return true;
  }
  if (n.numResults() != 1)
    return false;
  if (k == NodeKind::BatchNormalization)
    return n.input(0).dims() == d;
  const bool unary = hasTrait(k, OpTrait::ElementwiseUnary) && n.numInputs() == 1;
  const bool binary =
      (hasTrait(k, OpTrait::ElementwiseBinary) || k == NodeKind::PRelu) && n.numInputs() == 2;
  if (!unary && !binary)
    return false;
  for (const NodeValue& v : n.inputs())
    if (v.dims() != d && !broadcastsOnto(v, d))
      return false;
  return true;
}

/// [N, C, T] -> [N, C, 1, T].
Shape lifted(const Shape& d) {
  return {d[0], d[1], 1, d[2]};
}

Attrs ints(const char* name, std::vector<int64_t> v) {
  Attrs a;
  a.set(name, std::move(v));
  return a;
}

/// One region and its rewrite.
class Lift {
public:
  explicit Lift(Function& f) : f_(f) {}

  /// Grows the region from `seed` over liftable producers and users.
  void grow(Node* seed, const std::map<const Node*, std::vector<Node*>>& users) {
    std::vector<Node*> work{seed};
    nodes_.insert(seed);
    while (!work.empty()) {
      Node* n = work.back();
      work.pop_back();
      std::vector<Node*> next;
      for (const NodeValue& v : n->inputs())
        if (v && !v.node->isStorage() && v.dims().size() == 3)
          next.push_back(v.node);
      auto it = users.find(n);
      if (it != users.end())
        next.insert(next.end(), it->second.begin(), it->second.end());
      for (Node* m : next)
        if (!nodes_.count(m) && liftable(*m)) {
          nodes_.insert(m);
          work.push_back(m);
        }
    }
  }

  const std::set<Node*>& nodes() const { return nodes_; }

  /// Rewrites the region (nodes in topological order `order`).
  void rewrite(const std::vector<Node*>& order) {
    for (Node* n : order)
      if (nodes_.count(n))
        liftNode(*n);
    for (Node* n : order)
      if (nodes_.count(n))
        for (unsigned r = 0; r < n->numResults(); ++r)
          leave(n->result(r));
  }

private:
  /// The rank-4 form of value `v` read by the region.
  NodeValue in4(const NodeValue& v) {
    auto it = map_.find(v);
    if (it != map_.end())
      return it->second;
    if (isConstant(v)) {
      Shape s = v.dims();
      if (s.size() == 3)
        s = lifted(s);
      else if (s.size() == 2)
        s = {s[0], 1, s[1]};
      const Tensor t = v.node->payload().reshaped(s);
      return map_[v] = makeConstant(f_, v.node->name() + ".4d", t);
    }
    const Shape& d = v.dims();
    const Node* p = v.node;
    NodeValue out;
    if (d[0] == 1 && p->kind() == NodeKind::Transpose && allPlainFloat(*p) &&
        transposeOf(p->attrs()).perm == std::vector<int64_t>{0, 2, 1}) {
      // [1, T, C] -> [T, C, 1, 1] -> [1, C, 1, T]
      NodeValue x = p->input(0);
      NodeValue r =
          f_.create(NodeKind::Reshape, p->name() + ".rows", {x}, ints("shape", {d[2], d[1], 1, 1}))
              ->result();
      out = f_.create(NodeKind::Transpose, p->name() + ".to_nchw", {r}, ints("perm", {2, 1, 3, 0}))
                ->result();
    } else {
      out = f_.create(NodeKind::Reshape, v.node->name() + ".4d", {v}, ints("shape", lifted(d)))
                ->result();
    }
    return map_[v] = out;
  }

  void liftNode(Node& n) {
    std::vector<NodeValue> in;
    for (size_t i = 0; i < n.numInputs(); ++i) {
      const NodeValue& v = n.input(i);
      if (!v)
        in.push_back(v);
      else if (isConv1d(n) && i == 1)
        in.push_back(
            makeConstant(f_, v.node->name() + ".4d", v.node->payload().reshaped(lifted(v.dims()))));
      else if (isConv1d(n) && i == 2)
        in.push_back(v); // the bias [K]
      else if (n.kind() == NodeKind::BatchNormalization && i > 0)
        in.push_back(v); // per-channel [C] parameters
      else
        in.push_back(in4(v));
    }
    Attrs a = n.attrs();
    if (isConv1d(n)) {
      const Attrs& o = n.attrs();
      const Shape ks{n.input(1).dims()[2]};
      const WindowAttrs w = windowOf(o, 1, &ks);
      const std::vector<int64_t>& pads = w.pads;
      a.set("kernel_shape", std::vector<int64_t>{1, n.input(1).dims()[2]});
      a.set("strides", std::vector<int64_t>{1, w.strides.at(0)});
      a.set("dilations", std::vector<int64_t>{1, w.dilations.at(0)});
      a.set("pads", std::vector<int64_t>{0, pads.at(0), 0, pads.at(1)});
    }
    if (n.kind() == NodeKind::Split || n.kind() == NodeKind::Concat)
      a.set("axis", int64_t(1));
    Node* m = f_.create(n.kind(), n.name() + ".2d", std::move(in), std::move(a));
    for (unsigned r = 0; r < n.numResults(); ++r)
      map_[n.result(r)] = m->result(r);
  }

  /// Readers of `v` outside the region read it back in rank 3.
  void leave(const NodeValue& v) {
    const NodeValue v4 = map_.at(v);
    const Shape& d = v.dims();
    std::vector<std::pair<Node*, size_t>> outside;
    std::vector<Node*> exits;
    for (const auto& m : f_.nodes()) {
      if (nodes_.count(m.get()) || created(m.get()))
        continue;
      for (size_t i = 0; i < m->numInputs(); ++i)
        if (m->input(i) == v)
          outside.push_back({m.get(), i});
    }
    bool output = false;
    for (const auto& o : f_.outputs())
      output |= o.value == v;
    NodeValue back;
    for (auto [m, i] : outside) {
      if (d[0] == 1 && m->kind() == NodeKind::Transpose && allPlainFloat(*m) &&
          transposeOf(m->attrs()).perm == std::vector<int64_t>{0, 2, 1}) {
        // [1, K, 1, T] -> [T, K, 1, 1] -> [1, T, K]
        NodeValue t = f_.create(NodeKind::Transpose, m->name() + ".from_nchw", {v4},
                                ints("perm", {3, 1, 0, 2}))
                          ->result();
        NodeValue r =
            f_.create(NodeKind::Reshape, m->name() + ".seq", {t}, ints("shape", {1, d[2], d[1]}))
                ->result();
        f_.replaceAllUsesOf(m->result(), r);
        continue;
      }
      if (!back)
        back =
            f_.create(NodeKind::Reshape, v.node->name() + ".3d", {v4}, ints("shape", d))->result();
      m->setInput(i, back);
    }
    if (output) {
      if (!back)
        back =
            f_.create(NodeKind::Reshape, v.node->name() + ".3d", {v4}, ints("shape", d))->result();
      for (size_t i = 0; i < f_.outputs().size(); ++i)
        if (f_.outputs()[i].value == v)
          f_.setOutputValue(i, back);
    }
  }

  bool created(const Node* n) const {
    for (const auto& [_, v] : map_)
      if (v.node == n)
        return true;
    return false;
  }

  Function& f_;
  std::set<Node*> nodes_;
  std::map<NodeValue, NodeValue> map_;
};

std::map<const Node*, std::vector<Node*>> usersOf(const Function& f) {
  std::map<const Node*, std::vector<Node*>> u;
  for (const auto& n : f.nodes())
    for (const NodeValue& v : n->inputs())
      if (v)
        u[v.node].push_back(n.get());
  return u;
}

} // namespace

size_t runConv1dToConv2d(Function& f, const PassContext&) {
  size_t changed = 0;
  for (;;) {
    const std::vector<Node*> order = snapshot(f);
    Node* seed = nullptr;
    for (Node* n : order)
      if (isConv1d(*n)) {
        seed = n;
        break;
      }
    if (!seed)
      break;
    Lift l(f);
    l.grow(seed, usersOf(f));
    l.rewrite(order);
    changed += l.nodes().size();
    tidy(f);
  }
  return changed;
}

size_t runSplitToSlices(Function& f, const PassContext&) {
  size_t changed = 0;
  for (Node* n : snapshot(f)) {
    if (n->kind() != NodeKind::Split || n->numInputs() != 1)
      continue;
    const Shape& d = n->input(0).dims();
    const size_t axis =
        size_t(axisOf(n->attrs()).axis + (axisOf(n->attrs()).axis < 0 ? int64_t(d.size()) : 0));
    int64_t start = 0;
    for (unsigned r = 0; r < n->numResults(); ++r) {
      const int64_t len = n->resultType(r).dims[axis];
      std::vector<int64_t> starts(d.size(), 0), ends(d), steps(d.size(), 1);
      starts[axis] = start;
      ends[axis] = start + len;
      Attrs a;
      a.set("starts", starts);
      a.set("ends", ends);
      a.set("steps", steps);
      Node* s = f.create(NodeKind::Slice, n->name() + "." + std::to_string(r), {n->input(0)},
                         std::move(a), std::vector<Type>{n->resultType(r)});
      f.replaceAllUsesOf(n->result(r), s->result());
      start += len;
    }
    ++changed;
  }
  if (changed)
    tidy(f);
  return changed;
}

} // namespace ember
