// The minimum-cut placement: Dinic's maximum flow on a graph of the function's nodes,
// with one pair of auxiliary vertices per value so that a value crossing the boundary
// pays one transfer however many readers it has.
#include "PlacementCut.h"

#include <algorithm>
#include <deque>
#include <limits>

namespace ember::partition::detail {

namespace {

constexpr double kInf = 1e18;  ///< Capacity no cut pays (seconds).
constexpr double kEps = 1e-13; ///< Residual below which an edge is saturated (0.1 ps).

/// Dinic's algorithm over double capacities.
class MaxFlow {
public:
  explicit MaxFlow(size_t vertices) : adj_(vertices) {}

  size_t addVertex() {
    adj_.emplace_back();
    return adj_.size() - 1;
  }

  void addEdge(size_t from, size_t to, double cap) {
    if (cap <= 0 || from == to)
      return;
    adj_[from].push_back(edges_.size());
    edges_.push_back({to, cap});
    adj_[to].push_back(edges_.size());
    edges_.push_back({from, 0});
  }

  void run(size_t s, size_t t) {
    while (levels(s, t)) {
      next_.assign(adj_.size(), 0);
      while (push(s, t, kInf) > kEps) {
      }
    }
  }

  /// The vertices that still reach `t` through unsaturated edges (the sink's side of the
  /// minimum cut that keeps the source's side largest).
  std::vector<bool> reachesSink(size_t t) const {
    std::vector<bool> seen(adj_.size(), false);
    std::deque<size_t> q{t};
    seen[t] = true;
    while (!q.empty()) {
      const size_t w = q.front();
      q.pop_front();
      for (size_t e : adj_[w]) { // e: w -> u; its partner e ^ 1: u -> w
        const size_t u = edges_[e].to;
        if (!seen[u] && edges_[e ^ 1].cap > kEps) {
          seen[u] = true;
          q.push_back(u);
        }
      }
    }
    return seen;
  }

private:
  struct Edge {
    size_t to;
    double cap;
  };

  bool levels(size_t s, size_t t) {
    level_.assign(adj_.size(), -1);
    std::deque<size_t> q{s};
    level_[s] = 0;
    while (!q.empty()) {
      const size_t u = q.front();
      q.pop_front();
      for (size_t e : adj_[u])
        if (edges_[e].cap > kEps && level_[edges_[e].to] < 0) {
          level_[edges_[e].to] = level_[u] + 1;
          q.push_back(edges_[e].to);
        }
    }
    return level_[t] >= 0;
  }

  double push(size_t u, size_t t, double f) {
    if (u == t)
      return f;
    for (size_t& i = next_[u]; i < adj_[u].size(); ++i) {
      const size_t e = adj_[u][i];
      const size_t v = edges_[e].to;
      if (edges_[e].cap <= kEps || level_[v] != level_[u] + 1)
        continue;
      const double got = push(v, t, std::min(f, edges_[e].cap));
      if (got > kEps) {
        edges_[e].cap -= got;
        edges_[e ^ 1].cap += got;
        return got;
      }
    }
    return 0;
  }

  std::vector<std::vector<size_t>> adj_;
  std::vector<Edge> edges_;
  std::vector<int> level_;
  std::vector<size_t> next_;
};

} // namespace

std::vector<const Node*> nodesBetterOnHost(const Function& f, const CutCosts& costs) {
  const size_t src = 0, sink = 1;
  MaxFlow g(2);
  std::map<const Node*, size_t> vertex;
  for (const auto& up : f.nodes()) {
    const Node* n = up.get();
    if (n->kind() == NodeKind::Constant)
      continue;
    const size_t v = g.addVertex();
    vertex[n] = v;
    auto it = costs.npu.find(n);
    if (it == costs.npu.end()) {
      g.addEdge(v, sink, kInf); // fixed on the host
    } else {
      g.addEdge(src, v, costs.host(*n)); // paid when the node goes to the host
      g.addEdge(v, sink, it->second);    // paid when it stays on the NPU
    }
  }
  // Readers of every value (a model output is read by the host: the sink).
  std::map<NodeValue, std::vector<size_t>> readers;
  for (const auto& up : f.nodes())
    for (const NodeValue& in : up->inputs())
      if (in && in.node->kind() != NodeKind::Constant && vertex.count(up.get()))
        readers[in].push_back(vertex.at(up.get()));
  for (const auto& o : f.outputs())
    if (o.value.node->kind() != NodeKind::Constant)
      readers[o.value].push_back(sink);
  for (auto& [value, rs] : readers) {
    std::sort(rs.begin(), rs.end());
    rs.erase(std::unique(rs.begin(), rs.end()), rs.end());
    auto pv = vertex.find(value.node);
    if (pv == vertex.end()) { // a model input (placeholders are not the function's nodes)
      pv = vertex.emplace(value.node, g.addVertex()).first;
      g.addEdge(pv->second, sink, kInf);
    }
    const size_t p = pv->second;
    const double t = costs.transfer(value.type());
    const size_t out = g.addVertex(); // producer on the NPU, some reader on the host
    const size_t in = g.addVertex();  // producer on the host, some reader on the NPU
    g.addEdge(p, out, t);
    g.addEdge(in, p, t);
    for (size_t r : rs) {
      g.addEdge(out, r, kInf);
      if (r != sink)
        g.addEdge(r, in, kInf);
    }
  }
  g.run(src, sink);
  const std::vector<bool> host = g.reachesSink(sink);
  std::vector<const Node*> out;
  for (const auto& up : f.nodes())
    if (costs.npu.count(up.get()) && host[vertex.at(up.get())])
      out.push_back(up.get());
  return out;
}

} // namespace ember::partition::detail
