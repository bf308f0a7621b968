// Internal to the driver: the minimum-cut placement that weighs, node by node, the NPU's
// time against the host's and the transfers a boundary between them costs.
#pragma once

#include "ember/graph/Graph.h"

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace ember::partition::detail {

/// The costs the cut weighs, in seconds.
struct CutCosts {
  /// Every node that may stay on the NPU, with its time there. Other nodes (the host's,
  /// the model's inputs) are fixed on the host; constants are neither (they live in the
  /// binary or on the host for free).
  std::map<const Node*, double> npu;
  /// A node's time on the host.
  std::function<double(const Node&)> host;
  /// Moving a value of this type between host and NPU (either way).
  std::function<double(const Type& t)> transfer;
};

/// The nodes of `costs.npu` that the placement of least total time puts on the host: a
/// minimum s-t cut where the source side is the NPU, a node on the host pays its host
/// time, a node on the NPU its NPU time, and a value produced on one side and read on
/// the other pays one transfer however many readers it has (the model's outputs are
/// read by the host). Ties stay on the NPU. In the function's node order.
std::vector<const Node*> nodesBetterOnHost(const Function& f, const CutCosts& costs);

} // namespace ember::partition::detail
