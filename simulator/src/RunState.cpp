// Counters of one run: per-instruction accounting and the final Report.
#include "Run.h"
#include "ember/isa/roles.h"

#include "PlatformTypes.h"
#include <algorithm>

namespace ember::sim::detail {

using u64 = std::uint64_t;

RunState::RunState(const isa::IsaDescription& isa, const Job& job) : meter(isa), job_(&job) {
  const unsigned W = isa.instructionBytes();
  instructions = W ? job.text.size() / W : 0;
  layers.resize(job.debug.size());
}

int RunState::layerOf(std::uint32_t index) const {
  const auto& d = job_->debug;
  auto it = std::upper_bound(d.begin(), d.end(), index,
                             [](std::uint32_t i, const isa::DebugRange& r) { return i < r.first; });
  if (it == d.begin())
    return -1;
  --it;
  if (index >= it->first + it->count)
    return -1;
  return static_cast<int>(it - d.begin());
}

void RunState::retire(const isa::IsaDescription& isa, const isa::Instruction& insn, const Counts& c,
                      Slice s, bool keepSlice) {
  const double e = meter.add(isa, insn, c);
  const int eng = s.engine;
  ++count[eng];
  busy[eng] += (s.end - s.start) - s.memory_stall - s.push_stall;
  memory_stall[eng] += s.memory_stall;
  token_stall[eng] += (s.start - s.take) + s.push_stall;
  last_cycle = std::max(last_cycle, s.end);
  ++retired;
  int l = layerOf(s.index);
  if (l >= 0) {
    LayerAcc& a = layers[std::size_t(l)];
    a.start = std::min(a.start, s.start);
    a.end = std::max(a.end, s.end);
    a.macs += c.macs;
    a.dram_bytes += c.dram_read + c.dram_write;
    a.energy_pj += e;
  }
  if (keepSlice)
    slices.push_back(std::move(s));
}

Report RunState::finish(const isa::IsaDescription& isa, const Job& job, double hostSeconds) const {
  Report r;
  const auto& hw = isa.hw();
  const auto& et = isa.energy();
  r.isa_name = isa.name();
  r.cycles = last_cycle;
  r.clock_hz = hw.clock_hz;
  r.seconds = hw.clock_hz ? double(r.cycles) / double(hw.clock_hz) : 0;
  r.instructions = instructions;
  r.retired = retired;
  r.macs = meter.macs;
  r.peak_macs_per_cycle = isa.peakMacsPerCycle();
  r.mac_utilization =
      r.cycles ? double(r.macs) / (double(r.cycles) * double(r.peak_macs_per_cycle)) : 0;
  r.fetch_stall = fetch_stall;
  const char* names[3] = {"load", "compute", "store"};
  for (int e = 0; e < 3; ++e) {
    EngineReport er;
    er.name = names[e];
    er.instructions = count[e];
    er.busy = busy[e];
    er.token_stall = token_stall[e];
    er.memory_stall = memory_stall[e];
    u64 used = er.busy + er.token_stall + er.memory_stall;
    er.idle = r.cycles > used ? r.cycles - used : 0;
    r.engines.push_back(er);
  }
  platform::addEnergy(r, isa, meter);
  for (std::size_t i = 0; i < job.debug.size(); ++i) {
    const LayerAcc& a = layers[i];
    LayerReport l;
    l.name = job.debug[i].node;
    l.first = job.debug[i].first;
    l.count = job.debug[i].count;
    if (a.start <= a.end) {
      l.start = a.start;
      l.end = a.end;
    }
    l.cycles = l.end - l.start;
    l.macs = a.macs;
    l.mac_utilization =
        l.cycles ? double(l.macs) / (double(l.cycles) * double(r.peak_macs_per_cycle)) : 0;
    l.dram_bytes = a.dram_bytes;
    l.energy_pj = a.energy_pj + double(l.cycles) * et.leakage_per_cycle;
    r.layers.push_back(l);
  }
  r.slices = slices;
  r.fault = fault;
  r.host_seconds = hostSeconds;
  return r;
}

} // namespace ember::sim::detail
