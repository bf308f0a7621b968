#pragma once
/// \file
/// Which graph nodes IRGen turns into views (no copy): a Reshape, a Slice that keeps a
/// contiguous run of its input, a Split along an axis with nothing outside it. Shared by
/// IRGen and the scheduler's memory model so that both agree.

#include "ember/graph/Node.h"

#include <optional>
#include <vector>

namespace ember::lir {

/// The byte offset of each result of `n` in its first input when `n` can be a view of
/// it; nothing otherwise.
std::optional<std::vector<size_t>> viewOffsets(const Node& n);

} // namespace ember::lir
