// The memory figures of a compiled function (model tests, bench/lir).
#include "ember/lir/Stats.h"

#include "ember/lir/Passes.h"

#include <iomanip>
#include <ostream>
#include <sstream>

namespace ember::lir {

MemoryStats measureMemory(const ember::Function& g, const MemoryPlanOptions& opts) {
  MemoryStats s;
  s.nodes = g.numNodes();
  const NodeOrder greedy = memoryMinimizingOrder(g);
  const NodeOrder topo = topologicalOrder(g);
  s.greedyPeak = schedulePeakBytes(g, greedy);
  s.fewestBytesPeak = schedulePeakBytes(g, greedyOrder(g, GreedyRule::FewestBytes));
  s.freeFirstPeak = schedulePeakBytes(g, greedyOrder(g, GreedyRule::FreeFirstThenDepth));
  s.depthFirstPeak = schedulePeakBytes(g, greedyOrder(g, GreedyRule::DepthFirst));
  s.topoPeak = schedulePeakBytes(g, topo);

  std::unique_ptr<Function> f = generateIR(g, greedy);
  verifyOrThrow(*f);
  s.buffersBefore = f->count(ValueKind::Alloc);
  s.bytesBefore = f->allocatedBytes();
  runLirPipeline(*f, defaultLirPipeline());
  s.instructions = f->instructions().size();
  s.buffers = f->count(ValueKind::Alloc);
  const FunctionMemoryPlan plan = planMemory(*f, opts);
  s.sumBytes = plan.plan.sumBytes;
  s.arenaBytes = plan.plan.arenaBytes;
  s.lowerBound = plan.plan.lowerBound;

  std::unique_ptr<Function> t = generateIR(g, topo);
  runLirPipeline(*t, defaultLirPipeline());
  s.topoLowerBound = liveBytesLowerBound(bufferIntervals(*t));
  return s;
}

namespace {
std::string kib(size_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << double(bytes) / 1024.0;
  return os.str();
}
} // namespace

void printMemoryStatsHeader(std::ostream& os) {
  os << std::left << std::setw(22) << "model" << std::right << std::setw(6) << "nodes"
     << std::setw(11) << "buffers" << std::setw(11) << "sum" << std::setw(9) << "peak"
     << std::setw(9) << "bound" << std::setw(11) << "peak/bound" << std::setw(12) << "bound(topo)"
     << "  | sched:" << std::setw(8) << "chosen" << std::setw(9) << "bytes" << std::setw(9)
     << "free1st" << std::setw(9) << "depth" << std::setw(9) << "topo"
     << "\n";
}

void printMemoryStatsRow(std::ostream& os, const std::string& model, const MemoryStats& s) {
  std::ostringstream ratio;
  ratio << std::fixed << std::setprecision(3)
        << (s.lowerBound ? double(s.arenaBytes) / double(s.lowerBound) : 1.0);
  os << std::left << std::setw(22) << model << std::right << std::setw(6) << s.nodes
     << std::setw(11) << (std::to_string(s.buffersBefore) + "->" + std::to_string(s.buffers))
     << std::setw(11) << kib(s.sumBytes) << std::setw(9) << kib(s.arenaBytes) << std::setw(9)
     << kib(s.lowerBound) << std::setw(11) << ratio.str() << std::setw(12) << kib(s.topoLowerBound)
     << "  |       " << std::setw(8) << kib(s.greedyPeak) << std::setw(9) << kib(s.fewestBytesPeak)
     << std::setw(9) << kib(s.freeFirstPeak) << std::setw(9) << kib(s.depthFirstPeak)
     << std::setw(9) << kib(s.topoPeak) << "\n";
}

} // namespace ember::lir
