// Internal to the driver: forming segments from a placement, finding their boundary
// values and building each segment's function.
#pragma once

#include "ember/driver/Partition.h"

#include <map>
#include <string>
#include <vector>

namespace ember::partition::detail {

/// Segments (backend and nodes only) in an order where every edge goes forward: a node
/// joins the newest segment of its backend unless one of its inputs comes from a later
/// segment, in which case it opens a new one. Every segment is therefore convex (a path
/// that left it and came back would be an edge going backwards).
/// `hostBackend`: the backend of every node placed on the host ("cpu" or "interp"); the
/// other nodes are the NPU's.
std::vector<Segment> formSegments(const Function& f,
                                  const std::map<const Node*, std::string>& hostBackend);

/// Fills every segment's inputs and outputs and `plan.values` / `plan.outputs`.
void findBoundaries(Plan& plan);

/// Builds `s.module` / `s.function` from the plan's values (see Segment); returns each
/// copied node's original (the QuantizeLinear/DequantizeLinear nodes added at an NPU
/// segment's edge have none).
std::map<const Node*, const Node*> buildSegmentFunction(const Plan& plan, Segment& s);

/// The key of a value: its producer's name (":N" for result N > 0).
std::string valueKey(const NodeValue& v);

} // namespace ember::partition::detail
