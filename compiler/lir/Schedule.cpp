// The scheduler's memory model and the greedy memory-minimising order.
#include "ember/lir/Schedule.h"

#include "Views.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace ember::lir {

namespace {

/// Buffers ("roots") of the function, their sizes and their readers.
struct MemoryModel {
  std::unordered_map<const Node*, size_t> index;              // position in f's order
  std::map<NodeValue, NodeValue> rootOf;                      // value -> the buffer it lives in
  std::map<NodeValue, size_t> rootBytes;                      // arena bytes of each root
  std::unordered_map<const Node*, std::set<NodeValue>> reads; // roots each node reads
  std::unordered_map<const Node*, size_t> allocBytes;         // bytes a node allocates
  std::map<NodeValue, size_t> readers;                        // number of nodes reading each root

  explicit MemoryModel(const ember::Function& f) {
    std::set<NodeValue> outputs;
    for (const auto& o : f.outputs())
      outputs.insert(o.value);
    size_t i = 0;
    for (const auto& p : f.nodes()) {
      const Node* n = p.get();
      index[n] = i++;
      const auto views = viewOffsets(*n);
      for (unsigned r = 0; r < n->numResults(); ++r) {
        const NodeValue v(const_cast<Node*>(n), r);
        rootOf[v] = views ? root(n->input(0)) : v;
        if (!views)
          rootBytes[v] = n->resultType(r).sizeInBytes();
      }
      for (const NodeValue& in : n->inputs())
        if (in && !in.node->isStorage())
          reads[n].insert(root(in));
    }
    // An output (or a view of a whole buffer that is an output) is written in place
    // of the output's external memory.
    for (const NodeValue& o : outputs)
      if (!o.node->isStorage() && rootBytes.count(root(o)) &&
          o.type().sizeInBytes() == rootBytes[root(o)])
        rootBytes[root(o)] = 0;
    for (const auto& p : f.nodes()) {
      size_t bytes = 0;
      for (unsigned r = 0; r < p->numResults(); ++r) {
        auto it = rootBytes.find(NodeValue(p.get(), r));
        if (it != rootBytes.end())
          bytes += it->second;
      }
      allocBytes[p.get()] = bytes;
      for (const NodeValue& r : reads[p.get()])
        ++readers[r];
    }
  }

  NodeValue root(const NodeValue& v) const {
    auto it = rootOf.find(v);
    return it == rootOf.end() ? v : it->second; // storage: itself (0 bytes)
  }
  size_t bytesOf(const NodeValue& r) const {
    auto it = rootBytes.find(r);
    return it == rootBytes.end() ? 0 : it->second;
  }
};

/// Runs the model along an order, one node at a time.
struct Simulation {
  const MemoryModel& m;
  std::map<NodeValue, size_t> remaining; // readers not run yet
  size_t live = 0, peak = 0;

  explicit Simulation(const MemoryModel& model) : m(model), remaining(model.readers) {}

  /// Bytes `n` would free: roots it reads for the last time, and its own unread results.
  size_t freedBy(const Node* n) const {
    size_t bytes = 0;
    for (const NodeValue& r : m.reads.at(n)) {
      auto it = remaining.find(r);
      if (it != remaining.end() && it->second == 1)
        bytes += m.bytesOf(r);
    }
    for (unsigned r = 0; r < n->numResults(); ++r) {
      const NodeValue v(const_cast<Node*>(n), r);
      if (m.rootBytes.count(v) && !m.readers.count(v))
        bytes += m.bytesOf(v);
    }
    return bytes;
  }

  void run(const Node* n) {
    live += m.allocBytes.at(n);
    peak = std::max(peak, live);
    live -= freedBy(n);
    for (const NodeValue& r : m.reads.at(n))
      --remaining[r];
  }
};

} // namespace

NodeOrder topologicalOrder(const ember::Function& f) {
  NodeOrder order;
  for (const auto& n : f.nodes())
    order.push_back(n.get());
  return order;
}

NodeOrder greedyOrder(const ember::Function& f, GreedyRule rule) {
  const MemoryModel m(f);
  Simulation sim(m);
  // Number of producers (non-storage input nodes) each node still waits for.
  std::unordered_map<const Node*, size_t> waiting;
  std::unordered_map<const Node*, std::vector<const Node*>> consumers;
  for (const auto& p : f.nodes()) {
    std::set<const Node*> producers;
    for (const NodeValue& in : p->inputs())
      if (in && !in.node->isStorage())
        producers.insert(in.node);
    waiting[p.get()] = producers.size();
    for (const Node* q : producers)
      consumers[q].push_back(p.get());
  }
  std::vector<const Node*> ready;
  for (const auto& p : f.nodes())
    if (waiting[p.get()] == 0)
      ready.push_back(p.get());
  std::unordered_map<const Node*, size_t> ranAt;
  NodeOrder order;
  while (!ready.empty()) {
    auto recency = [&](const Node* n) {
      size_t latest = 0;
      for (const NodeValue& in : n->inputs())
        if (in && ranAt.count(in.node))
          latest = std::max(latest, ranAt[in.node] + 1);
      return latest;
    };
    auto delta = [&](const Node* n) {
      return (long long)m.allocBytes.at(n) - (long long)sim.freedBy(n);
    };
    auto better = [&](const Node* a, const Node* b) {
      const long long da = delta(a), db = delta(b);
      const size_t ra = recency(a), rb = recency(b);
      if (rule == GreedyRule::FreeFirstThenDepth && (da <= 0) != (db <= 0))
        return da <= 0;
      if (rule == GreedyRule::FewestBytes || (rule == GreedyRule::FreeFirstThenDepth && da <= 0)) {
        if (da != db)
          return da < db;
        if (ra != rb)
          return ra > rb;
      } else {
        if (ra != rb)
          return ra > rb;
        if (da != db)
          return da < db;
      }
      return m.index.at(a) < m.index.at(b);
    };
    auto best = std::min_element(ready.begin(), ready.end(), better);
    const Node* n = *best;
    ready.erase(best);
    sim.run(n);
    ranAt[n] = order.size();
    order.push_back(n);
    for (const Node* c : consumers[n])
      if (--waiting[c] == 0)
        ready.push_back(c);
  }
  if (order.size() != f.numNodes())
    throw Error("function '" + f.name() + "'", "the graph has a cycle; it cannot be scheduled");
  return order;
}

NodeOrder memoryMinimizingOrder(const ember::Function& f) {
  NodeOrder best;
  size_t bestPeak = SIZE_MAX;
  for (NodeOrder o :
       {greedyOrder(f, GreedyRule::FewestBytes), greedyOrder(f, GreedyRule::FreeFirstThenDepth),
        greedyOrder(f, GreedyRule::DepthFirst), topologicalOrder(f)}) {
    const size_t peak = schedulePeakBytes(f, o);
    if (peak < bestPeak) {
      bestPeak = peak;
      best = std::move(o);
    }
  }
  return best;
}

size_t schedulePeakBytes(const ember::Function& f, const NodeOrder& order) {
  const MemoryModel m(f);
  if (order.size() != f.numNodes())
    throw Error("function '" + f.name() + "'", "the schedule has " + std::to_string(order.size()) +
                                                   " nodes, the function " +
                                                   std::to_string(f.numNodes()));
  std::set<const Node*> done;
  Simulation sim(m);
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    if (!m.index.count(n) || done.count(n))
      throw Error("function '" + f.name() + "'", "schedule entry " + std::to_string(i) +
                                                     " is not a node of the function, or twice");
    for (const NodeValue& in : n->inputs())
      if (in && !in.node->isStorage() && !done.count(in.node))
        throw Error("function '" + f.name() + "'", "schedule entry " + std::to_string(i) + " ('" +
                                                       n->name() + "') runs before its input '" +
                                                       in.node->name() + "'");
    sim.run(n);
    done.insert(n);
  }
  return sim.peak;
}

} // namespace ember::lir
