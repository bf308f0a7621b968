#pragma once
// Static memory plan of the cpu backend over the graph function in its (topological)
// node order: every placeholder and every node result gets an offset in one arena;
// a Reshape is a view of its input (same bytes, no code). A buffer lives from its
// definition to its last use (through views); function outputs live to the end. Buffers
// are placed largest first at the lowest 64-byte aligned offset that no buffer with an
// intersecting live range occupies.

#include "ember/graph/Graph.h"

#include <map>

namespace ember::cpu {

class BufferPlan {
public:
  explicit BufferPlan(const Function& f);

  /// Whether node kind `k` is a view of its first input (no code, no buffer).
  static bool isView(const Node& n);

  /// The root value whose memory `v` uses (itself unless v is a view's result).
  NodeValue root(const NodeValue& v) const;
  /// Whether `v`'s memory is in the arena (else it is a Constant's payload).
  bool inArena(const NodeValue& v) const;
  /// Arena offset of `v` (of its root).
  size_t offset(const NodeValue& v) const;
  size_t arenaBytes() const { return arenaBytes_; }
  /// Sum of all buffer sizes (no reuse), for statistics.
  size_t sumBytes() const { return sumBytes_; }

private:
  std::map<NodeValue, NodeValue> alias_;
  std::map<NodeValue, size_t> offsets_;
  size_t arenaBytes_ = 0;
  size_t sumBytes_ = 0;
};

} // namespace ember::cpu
