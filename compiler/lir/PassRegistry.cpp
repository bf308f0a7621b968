// The IR pass registry and the pipeline runner.
#include "ember/lir/Passes.h"

#include "ember/support/Error.h"

#include <iomanip>
#include <ostream>

namespace ember::lir {

const std::vector<LirPassInfo>& lirPasses() {
  static const std::vector<LirPassInfo> passes = {
      {"copy-elimination",
       "a copy of a whole allocation that dies at the copy, into an output: the producer "
       "writes the output",
       runCopyElimination},
      {"share-buffers",
       "an in-place-safe instruction writes its result over a same-shaped input that dies "
       "there",
       runShareBuffers},
      {"concat-into-views",
       "producers of a Concat's inputs write into views of its result; the Concat goes",
       runConcatIntoViews},
      {"dead-allocation-removal",
       "remove instructions writing only unread activations, then unused allocations and views",
       runDeadAllocationRemoval},
      {"shrink-live-ranges",
       "allocate right before the first use, deallocate right after the last use",
       runShrinkLiveRanges},
  };
  return passes;
}

std::vector<std::string> defaultLirPipeline() {
  return {"copy-elimination", "share-buffers", "concat-into-views", "dead-allocation-removal",
          "shrink-live-ranges"};
}

std::vector<LirPassStats> runLirPipeline(Function& f, const std::vector<std::string>& names) {
  std::vector<const LirPassInfo*> passes;
  for (const std::string& n : names) {
    const LirPassInfo* found = nullptr;
    for (const LirPassInfo& p : lirPasses())
      if (p.name == n)
        found = &p;
    if (!found) {
      std::string known;
      for (const LirPassInfo& p : lirPasses())
        known += (known.empty() ? "" : ", ") + p.name;
      throw Error("lir pipeline", "unknown pass '" + n + "' (known: " + known + ")");
    }
    passes.push_back(found);
  }
  std::vector<LirPassStats> stats;
  for (const LirPassInfo* p : passes) {
    LirPassStats s;
    s.pass = p->name;
    s.instrsBefore = f.instructions().size();
    s.allocsBefore = f.count(ValueKind::Alloc);
    s.bytesBefore = f.allocatedBytes();
    s.changed = p->run(f);
    s.instrsAfter = f.instructions().size();
    s.allocsAfter = f.count(ValueKind::Alloc);
    s.bytesAfter = f.allocatedBytes();
    const std::vector<std::string> problems = verify(f);
    if (!problems.empty())
      throw Error("lir pass '" + p->name + "'",
                  "left an invalid function: " + problems.front() +
                      (problems.size() > 1
                           ? " (and " + std::to_string(problems.size() - 1) + " more)"
                           : ""));
    stats.push_back(s);
  }
  return stats;
}

void printLirPassStats(std::ostream& os, const std::vector<LirPassStats>& stats) {
  os << std::left << std::setw(26) << "pass" << std::right << std::setw(8) << "changed"
     << std::setw(16) << "instructions" << std::setw(12) << "allocs" << std::setw(26)
     << "allocated bytes"
     << "\n";
  for (const LirPassStats& s : stats)
    os << std::left << std::setw(26) << s.pass << std::right << std::setw(8) << s.changed
       << std::setw(16) << (std::to_string(s.instrsBefore) + "->" + std::to_string(s.instrsAfter))
       << std::setw(12) << (std::to_string(s.allocsBefore) + "->" + std::to_string(s.allocsAfter))
       << std::setw(26) << (std::to_string(s.bytesBefore) + "->" + std::to_string(s.bytesAfter))
       << "\n";
}

} // namespace ember::lir
