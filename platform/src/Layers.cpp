// Per-layer figures: the roofline of a layer and the sums over its retired instructions.
#include "ember/platform/Layers.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <cmath>

namespace ember::platform {

namespace {

const char* kEngines[3] = {"load", "compute", "store"};

void checkFigure(double v, const char* what, bool positive) {
  if (!std::isfinite(v) || v < 0 || (positive && v == 0))
    throw Error("roofline", std::string(what) + " is " + std::to_string(v) + ", not a " +
                                (positive ? "positive" : "non-negative") + " finite number");
}

} // namespace

Roofline roofline(double macs, double dramBytes, double cycles, double peakMacsPerCycle,
                  double dramBytesPerCycle) {
  checkFigure(macs, "MACs", false);
  checkFigure(dramBytes, "DRAM bytes", false);
  checkFigure(cycles, "cycles", false);
  checkFigure(peakMacsPerCycle, "peak MACs per cycle", true);
  checkFigure(dramBytesPerCycle, "DRAM bytes per cycle", true);
  Roofline r;
  r.mac_bound = macs / peakMacsPerCycle;
  r.dram_bound = dramBytes / dramBytesPerCycle;
  r.bound = std::max(r.mac_bound, r.dram_bound);
  r.efficiency = cycles > 0 ? r.bound / cycles : 0;
  r.kind = r.bound == 0 ? "none" : r.mac_bound >= r.dram_bound ? "mac" : "dram";
  return r;
}

std::string layerStall(const LayerReport& l) {
  bool carries[3] = {true, true, true};
  if (l.bound == "mac")
    carries[0] = carries[2] = false;
  else if (l.bound == "dram")
    carries[1] = false;
  std::string best = "-";
  std::uint64_t most = 0;
  for (int e = 0; e < 3; ++e) {
    if (!carries[e])
      continue;
    const LayerEngineReport& x = l.engines[std::size_t(e)];
    if (x.token_stall > most) {
      most = x.token_stall;
      best = std::string(kEngines[e]) + " token " + std::to_string(most);
    }
    if (x.memory_stall > most) {
      most = x.memory_stall;
      best = std::string(kEngines[e]) + " memory " + std::to_string(most);
    }
  }
  return best;
}

LayerAccounts::LayerAccounts(std::vector<isa::DebugRange> debug)
    : debug_(std::move(debug)), acc_(debug_.size()) {}

int LayerAccounts::layerOf(std::uint32_t index) const {
  auto it = std::upper_bound(debug_.begin(), debug_.end(), index,
                             [](std::uint32_t i, const isa::DebugRange& r) { return i < r.first; });
  if (it == debug_.begin())
    return -1;
  --it;
  if (index - it->first >= it->count)
    return -1;
  return static_cast<int>(it - debug_.begin());
}

void LayerAccounts::add(const Slice& s, std::uint64_t macs, std::uint64_t dramBytes,
                        double energyPj) {
  const int l = layerOf(s.index);
  if (l < 0 || s.engine < 0 || s.engine > 2)
    return;
  Acc& a = acc_[std::size_t(l)];
  a.start = std::min(a.start, s.start);
  a.end = std::max(a.end, s.end);
  a.macs += macs;
  a.dram_bytes += dramBytes;
  a.energy_pj += energyPj;
  LayerEngineReport& e = a.engines[std::size_t(s.engine)];
  ++e.instructions;
  e.busy += (s.end - s.start) - s.memory_stall - s.push_stall;
  e.memory_stall += s.memory_stall;
  e.token_stall += (s.start - s.take) + s.push_stall;
}

std::vector<LayerReport> LayerAccounts::layers(const isa::IsaDescription& isa) const {
  const double peak = double(isa.peakMacsPerCycle());
  std::vector<LayerReport> out;
  out.reserve(debug_.size());
  for (std::size_t i = 0; i < debug_.size(); ++i) {
    const Acc& a = acc_[i];
    LayerReport l;
    l.name = debug_[i].node;
    l.first = debug_[i].first;
    l.count = debug_[i].count;
    if (a.start <= a.end) {
      l.start = a.start;
      l.end = a.end;
    }
    l.cycles = l.end - l.start;
    l.macs = a.macs;
    l.mac_utilization = l.cycles ? double(l.macs) / (double(l.cycles) * peak) : 0;
    l.dram_bytes = a.dram_bytes;
    l.energy_pj = a.energy_pj + double(l.cycles) * isa.energy().leakage_per_cycle;
    l.engines = a.engines;
    const Roofline r = roofline(double(l.macs), double(l.dram_bytes), double(l.cycles), peak,
                                isa.dramBytesPerCycle());
    l.bound = r.kind;
    l.mac_bound_cycles = r.mac_bound;
    l.dram_bound_cycles = r.dram_bound;
    l.bound_cycles = r.bound;
    l.roofline_efficiency = r.efficiency;
    out.push_back(std::move(l));
  }
  return out;
}

} // namespace ember::platform
