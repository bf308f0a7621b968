#include "BufferPlan.h"

#include "ember/support/Error.h"

#include <algorithm>

namespace ember::cpu {

namespace {
constexpr size_t kAlign = 64;
size_t alignUp(size_t v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}
struct Interval {
  NodeValue value;
  size_t size, begin, end;
};
} // namespace

bool BufferPlan::isView(const Node& n) {
  return n.kind() == NodeKind::Reshape;
}

NodeValue BufferPlan::root(const NodeValue& v) const {
  auto it = alias_.find(v);
  return it == alias_.end() ? v : it->second;
}

bool BufferPlan::inArena(const NodeValue& v) const {
  return offsets_.count(root(v)) != 0;
}

size_t BufferPlan::offset(const NodeValue& v) const {
  auto it = offsets_.find(root(v));
  if (it == offsets_.end())
    throw Error("cpu backend", "value of '" + v.node->name() + "' has no arena buffer");
  return it->second;
}

BufferPlan::BufferPlan(const Function& f) {
  std::map<NodeValue, Interval> live;
  size_t pos = 0;
  for (Node* p : f.inputs())
    live[NodeValue(p, 0)] = Interval{NodeValue(p, 0), p->resultType().sizeInBytes(), 0, 0};
  auto use = [&](const NodeValue& v, size_t at) {
    auto it = live.find(root(v));
    if (it != live.end())
      it->second.end = std::max(it->second.end, at);
  };
  for (const auto& n : f.nodes()) {
    ++pos;
    for (const NodeValue& v : n->inputs())
      if (v)
        use(v, pos);
    if (isView(*n)) {
      alias_[NodeValue(n.get(), 0)] = root(n->input(0));
      continue;
    }
    for (unsigned i = 0; i < n->numResults(); ++i) {
      NodeValue v(n.get(), i);
      live[v] = Interval{v, n->resultType(i).sizeInBytes(), pos, pos};
    }
  }
  for (const auto& o : f.outputs())
    use(o.value, pos + 1);

  std::vector<Interval> order;
  for (const auto& [v, iv] : live)
    order.push_back(iv);
  std::stable_sort(order.begin(), order.end(), [](const Interval& a, const Interval& b) {
    return a.size != b.size ? a.size > b.size : a.begin < b.begin;
  });
  std::vector<std::pair<Interval, size_t>> placed;
  for (const Interval& iv : order) {
    const size_t size = alignUp(std::max<size_t>(iv.size, 1));
    sumBytes_ += size;
    std::vector<std::pair<size_t, size_t>> busy; // [offset, end) of conflicting buffers
    for (const auto& [other, off] : placed)
      if (other.begin <= iv.end && iv.begin <= other.end)
        busy.emplace_back(off, off + alignUp(std::max<size_t>(other.size, 1)));
    std::sort(busy.begin(), busy.end());
    size_t at = 0;
    for (const auto& [b, e] : busy) {
      if (at + size <= b)
        break;
      at = std::max(at, e);
    }
    placed.emplace_back(iv, at);
    offsets_[iv.value] = at;
    arenaBytes_ = std::max(arenaBytes_, at + size);
  }
}

} // namespace ember::cpu
