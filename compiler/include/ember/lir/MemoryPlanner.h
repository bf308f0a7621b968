#pragma once
/// \file
/// Static memory planning: every activation buffer gets an offset in one arena.
///
/// A buffer is live from its `allocactivation` to its `deallocactivation` (instruction
/// positions, both included). Buffers are placed one by one, each at the lowest aligned
/// offset (first fit) or in the smallest aligned gap that holds it (best fit) among the
/// buffers already placed whose live ranges intersect its own. Four placement orders
/// are tried — largest first (ties: earlier allocation), those live at the peak first,
/// largest size x lifetime first, program order — and the smallest arena is kept (ties:
/// the first order). The statistics compare the arena's size with the sum of
/// all buffers (no reuse) and with the theoretical minimum: the largest number of bytes
/// live at one time.

#include "ember/lir/IR.h"

#include <functional>
#include <string>
#include <vector>

namespace ember::lir {

/// One buffer to place: bytes and live range [begin, end] in instruction positions.
struct BufferInterval {
  size_t size = 0;
  size_t begin = 0, end = 0;
};

struct MemoryPlanOptions {
  enum class Fit { First, Best };
  size_t alignment = 64; ///< every offset is a multiple (a power of two, >= 1)
  Fit fit = Fit::Best;
};

struct MemoryPlan {
  std::vector<size_t> offsets; ///< one per interval, same order
  size_t arenaBytes = 0;       ///< max over buffers of offset + size
  size_t sumBytes = 0;         ///< sum of all sizes
  size_t lowerBound = 0;       ///< max over time of the live bytes
};

/// Places intervals; throws ember::Error if alignment is not a power of two or an
/// interval ends before it begins.
MemoryPlan planIntervals(const std::vector<BufferInterval>& buffers,
                         const MemoryPlanOptions& opts = {});

/// Max over time of the bytes of the intervals live at that time.
size_t liveBytesLowerBound(const std::vector<BufferInterval>& buffers);

/// Every violation of a plan (empty when valid): a wrong number of offsets, misaligned
/// offsets, two buffers live at the same time whose byte ranges overlap, a buffer
/// beyond arenaBytes.
std::vector<std::string> checkPlan(const std::vector<BufferInterval>& buffers,
                                   const MemoryPlan& plan, size_t alignment);

/// The intervals of a function's allocations, in allocation order (positions from the
/// instruction list; the function must verify).
std::vector<BufferInterval> bufferIntervals(const Function& f);

/// A plan for a function's allocations: `offsets[i]` belongs to `allocs[i]`.
struct FunctionMemoryPlan {
  std::vector<const Instruction*> allocs;
  MemoryPlan plan;
  size_t offsetOf(const Value* alloc) const;
};

/// Plans a function's activations and checks the result (ember::Error if the function
/// does not verify or the plan is invalid).
FunctionMemoryPlan planMemory(const Function& f, const MemoryPlanOptions& opts = {});

/// The same with each allocation's bytes given by `bytesOf` instead of its row-major
/// type: for a backend whose buffers have another layout (the NPU's NCHWc rows with
/// padded channels), or that keeps some values elsewhere (0 bytes: never placed).
FunctionMemoryPlan planMemory(const Function& f, const MemoryPlanOptions& opts,
                              const std::function<size_t(const Instruction& alloc)>& bytesOf);

} // namespace ember::lir
