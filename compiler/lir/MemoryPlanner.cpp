// The static memory planner: greedy by size, first or best fit, and its checker.
#include "ember/lir/MemoryPlanner.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace ember::lir {

namespace {

size_t alignUp(size_t x, size_t a) {
  return (x + a - 1) / a * a;
}

bool liveTogether(const BufferInterval& a, const BufferInterval& b) {
  return a.begin <= b.end && b.begin <= a.end;
}

bool bytesOverlap(size_t ao, size_t as, size_t bo, size_t bs) {
  return as != 0 && bs != 0 && ao < bo + bs && bo < ao + as;
}

} // namespace

size_t liveBytesLowerBound(const std::vector<BufferInterval>& buffers) {
  // Sweep: +size at begin, -size after end.
  std::map<size_t, long long> delta;
  for (const BufferInterval& b : buffers) {
    delta[b.begin] += (long long)b.size;
    delta[b.end + 1] -= (long long)b.size;
  }
  long long live = 0, peak = 0;
  for (const auto& [_, d] : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return size_t(peak);
}

namespace {

/// Places buffers in `order`, each at the lowest aligned offset (first fit) or in the
/// smallest aligned gap (best fit) among the placed buffers live at the same time.
std::vector<size_t> placeInOrder(const std::vector<BufferInterval>& buffers,
                                 const std::vector<size_t>& order, const MemoryPlanOptions& opts) {
  const size_t align = opts.alignment;
  std::vector<size_t> offsets(buffers.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferInterval& b = buffers[i];
    std::vector<std::pair<size_t, size_t>> busy; // offset, end of conflicting buffers
    for (size_t j : placed)
      if (liveTogether(b, buffers[j]) && buffers[j].size != 0)
        busy.emplace_back(offsets[j], offsets[j] + buffers[j].size);
    std::sort(busy.begin(), busy.end());
    size_t candidate = 0, bestOffset = SIZE_MAX, bestGap = SIZE_MAX;
    for (const auto& [start, stop] : busy) {
      if (candidate + b.size <= start) {
        const size_t gap = start - candidate;
        if (opts.fit == MemoryPlanOptions::Fit::First) {
          bestOffset = candidate;
          break;
        }
        if (gap < bestGap) {
          bestGap = gap;
          bestOffset = candidate;
        }
      }
      candidate = std::max(candidate, alignUp(stop, align));
    }
    offsets[i] = bestOffset != SIZE_MAX ? bestOffset : candidate;
    placed.push_back(i);
  }
  return offsets;
}

size_t arenaOf(const std::vector<BufferInterval>& buffers, const std::vector<size_t>& offsets) {
  size_t arena = 0;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].size)
      arena = std::max(arena, offsets[i] + buffers[i].size);
  return arena;
}

/// The placement orders tried, each a strict order (ties: index).
std::vector<std::vector<size_t>> placementOrders(const std::vector<BufferInterval>& b) {
  std::vector<size_t> base(b.size());
  std::iota(base.begin(), base.end(), size_t(0));
  auto sorted = [&](auto less) {
    std::vector<size_t> o = base;
    std::stable_sort(o.begin(), o.end(), less);
    return o;
  };
  // Buffers live when the live bytes peak.
  std::map<size_t, long long> delta;
  for (const BufferInterval& i : b) {
    delta[i.begin] += (long long)i.size;
    delta[i.end + 1] -= (long long)i.size;
  }
  long long live = 0, peak = -1;
  size_t peakTime = 0;
  for (const auto& [t, d] : delta) {
    live += d;
    if (live > peak) {
      peak = live;
      peakTime = t;
    }
  }
  auto atPeak = [&](size_t i) { return b[i].begin <= peakTime && peakTime <= b[i].end; };
  return {
      sorted([&](size_t x, size_t y) { // largest first
        return b[x].size != b[y].size ? b[x].size > b[y].size : b[x].begin < b[y].begin;
      }),
      sorted([&](size_t x, size_t y) { // those live at the peak first, then largest
        if (atPeak(x) != atPeak(y))
          return atPeak(x);
        return b[x].size != b[y].size ? b[x].size > b[y].size : b[x].begin < b[y].begin;
      }),
      sorted([&](size_t x, size_t y) { // largest size x lifetime first
        const size_t ax = b[x].size * (b[x].end - b[x].begin + 1);
        const size_t ay = b[y].size * (b[y].end - b[y].begin + 1);
        return ax > ay;
      }),
      sorted([&](size_t x, size_t y) { return b[x].begin < b[y].begin; }), // program order
  };
}

} // namespace

MemoryPlan planIntervals(const std::vector<BufferInterval>& buffers,
                         const MemoryPlanOptions& opts) {
  const size_t align = opts.alignment;
  if (align == 0 || (align & (align - 1)) != 0)
    throw Error("memory planner", "alignment " + std::to_string(align) + " is not a power of two");
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].end < buffers[i].begin)
      throw Error("memory planner", "buffer " + std::to_string(i) + " ends before it begins");
  MemoryPlan plan;
  bool first = true;
  for (const std::vector<size_t>& order : placementOrders(buffers)) {
    std::vector<size_t> offsets = placeInOrder(buffers, order, opts);
    const size_t arena = arenaOf(buffers, offsets);
    if (first || arena < plan.arenaBytes) {
      plan.offsets = std::move(offsets);
      plan.arenaBytes = arena;
      first = false;
    }
  }
  for (const BufferInterval& b : buffers)
    plan.sumBytes += b.size;
  plan.lowerBound = liveBytesLowerBound(buffers);
  return plan;
}

std::vector<std::string> checkPlan(const std::vector<BufferInterval>& buffers,
                                   const MemoryPlan& plan, size_t alignment) {
  std::vector<std::string> problems;
  if (plan.offsets.size() != buffers.size()) {
    problems.push_back("the plan has " + std::to_string(plan.offsets.size()) + " offsets for " +
                       std::to_string(buffers.size()) + " buffers");
    return problems;
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const size_t o = plan.offsets[i], s = buffers[i].size;
    if (alignment && o % alignment)
      problems.push_back("buffer " + std::to_string(i) + " at offset " + std::to_string(o) +
                         " is not aligned to " + std::to_string(alignment));
    if (s && o + s > plan.arenaBytes)
      problems.push_back("buffer " + std::to_string(i) + " ends at " + std::to_string(o + s) +
                         ", beyond the arena's " + std::to_string(plan.arenaBytes) + " bytes");
    for (size_t j = i + 1; j < buffers.size(); ++j)
      if (liveTogether(buffers[i], buffers[j]) &&
          bytesOverlap(o, s, plan.offsets[j], buffers[j].size))
        problems.push_back("buffers " + std::to_string(i) + " and " + std::to_string(j) +
                           " are live together and overlap");
  }
  return problems;
}

std::vector<BufferInterval> bufferIntervals(const Function& f) {
  std::unordered_map<const Value*, size_t> index;
  std::vector<BufferInterval> out;
  size_t pos = 0;
  for (const auto& in : f.instructions()) {
    if (in->valueKind() == ValueKind::Alloc) {
      index[in.get()] = out.size();
      out.push_back({in->sizeInBytes(), pos, pos});
    } else if (in->valueKind() == ValueKind::Dealloc) {
      auto it = index.find(in->operand(0).value);
      if (it == index.end())
        throw Error("lir function '" + f.name() + "'", "deallocation at instruction " +
                                                           std::to_string(pos) +
                                                           " of something not allocated before");
      out[it->second].end = pos;
    }
    ++pos;
  }
  return out;
}

size_t FunctionMemoryPlan::offsetOf(const Value* alloc) const {
  for (size_t i = 0; i < allocs.size(); ++i)
    if (allocs[i] == alloc)
      return plan.offsets[i];
  throw Error("memory plan", "'" + alloc->name() + "' is not a planned allocation");
}

FunctionMemoryPlan planMemory(const Function& f, const MemoryPlanOptions& opts) {
  return planMemory(f, opts, [](const Instruction& a) { return a.sizeInBytes(); });
}

FunctionMemoryPlan planMemory(const Function& f, const MemoryPlanOptions& opts,
                              const std::function<size_t(const Instruction& alloc)>& bytesOf) {
  verifyOrThrow(f); // live ranges are only meaningful for a valid function
  FunctionMemoryPlan fp;
  for (const Instruction* a : f.allocations())
    fp.allocs.push_back(a);
  std::vector<BufferInterval> intervals = bufferIntervals(f);
  for (size_t i = 0; i < intervals.size(); ++i)
    intervals[i].size = bytesOf(*fp.allocs[i]);
  fp.plan = planIntervals(intervals, opts);
  const std::vector<std::string> problems = checkPlan(intervals, fp.plan, opts.alignment);
  if (!problems.empty())
    throw Error("memory plan of '" + f.name() + "'", problems.front());
  return fp;
}

} // namespace ember::lir
