#pragma once
/// \file
/// Optimisations of the low-level IR, as named passes (a registry, as for graph passes).
///
/// - `copy-elimination`: a copy whose source buffer (a whole allocation) is not used
///   after the copy, into an output weight, disappears: the allocation is replaced by
///   the destination (a view of it when the types differ), so the producer writes the
///   output directly.
/// - `share-buffers`: an instruction of an in-place-safe kind (`isInPlaceSafe`) writes
///   its result over an input whose allocation dies at that instruction, of the same
///   element kind and shape; the result's allocation disappears.
/// - `concat-into-views`: a Concat whose inputs are contiguous parts of its result (no
///   dimension before the axis larger than one) and share its type's element kind and
///   quantization: every input that is a whole allocation used once by it and dying
///   there becomes a view of the result (latest produced first, each only if it lowers
///   the peak of live bytes: the result then lives from that producer on), so its producer writes
///   there; the other inputs are copied into their parts; the Concat disappears.
/// - `dead-allocation-removal`: instructions whose written buffers are all activations
///   that nothing reads are removed, then allocations (and views) nothing uses.
/// - `shrink-live-ranges`: every allocation moves right before the first instruction
///   that uses its buffer, every deallocation right after the last one.
/// Every pass returns the number of changes it made.

#include "ember/lir/IR.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace ember::lir {

size_t runCopyElimination(Function& f);
size_t runShareBuffers(Function& f);
size_t runConcatIntoViews(Function& f);
size_t runDeadAllocationRemoval(Function& f);
size_t runShrinkLiveRanges(Function& f);

/// A registered pass.
struct LirPassInfo {
  std::string name;
  std::string description;
  size_t (*run)(Function&);
};
/// Every registered pass, in registration order.
const std::vector<LirPassInfo>& lirPasses();

/// copy-elimination, share-buffers, concat-into-views, dead-allocation-removal,
/// shrink-live-ranges.
std::vector<std::string> defaultLirPipeline();

/// What one pass did.
struct LirPassStats {
  std::string pass;
  size_t changed = 0;
  size_t instrsBefore = 0, instrsAfter = 0;
  size_t allocsBefore = 0, allocsAfter = 0;
  size_t bytesBefore = 0, bytesAfter = 0; ///< sum of the allocations
};

/// Runs the named passes in order, verifying the function after each (an error names
/// the pass). Unknown names: ember::Error listing the known ones, before anything runs.
std::vector<LirPassStats> runLirPipeline(Function& f, const std::vector<std::string>& names);

/// Prints the statistics as a table.
void printLirPassStats(std::ostream& os, const std::vector<LirPassStats>& stats);

} // namespace ember::lir
