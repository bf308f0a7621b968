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

MemoryPlan planIntervals(const std::vector<BufferInterval>& buffers,
                         const MemoryPlanOptions& opts) {
  const size_t align = opts.alignment;
  if (align == 0 || (align & (align - 1)) != 0)
    throw Error("memory planner", "alignment " + std::to_string(align) + " is not a power of two");
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].end < buffers[i].begin)
      throw Error("memory planner", "buffer " + std::to_string(i) + " ends before it begins");
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].begin < buffers[b].begin;
  });

  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferInterval& b = buffers[i];
    // Conflicting placed buffers by offset; walk the gaps between them.
    std::vector<std::pair<size_t, size_t>> busy; // offset, end
    for (size_t j : placed)
      if (liveTogether(b, buffers[j]) && buffers[j].size != 0)
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + buffers[j].size);
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
    plan.offsets[i] = bestOffset != SIZE_MAX ? bestOffset : candidate;
    placed.push_back(i);
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    plan.sumBytes += buffers[i].size;
    if (buffers[i].size)
      plan.arenaBytes = std::max(plan.arenaBytes, plan.offsets[i] + buffers[i].size);
  }
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
  FunctionMemoryPlan fp;
  for (const Instruction* a : f.allocations())
    fp.allocs.push_back(a);
  const std::vector<BufferInterval> intervals = bufferIntervals(f);
  fp.plan = planIntervals(intervals, opts);
  const std::vector<std::string> problems = checkPlan(intervals, fp.plan, opts.alignment);
  if (!problems.empty())
    throw Error("memory plan of '" + f.name() + "'", problems.front());
  return fp;
}

} // namespace ember::lir
