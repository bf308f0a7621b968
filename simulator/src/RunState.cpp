// Counters of one run: per-instruction accounting and the final Report.
#include "Run.h"
#include "ember/isa/roles.h"

#include "PlatformTypes.h"
#include <algorithm>

namespace ember::sim::detail {

using u64 = std::uint64_t;

RunState::RunState(const isa::IsaDescription& isa, const Job& job) : job_(&job) {
  const unsigned W = isa.instructionBytes();
  instructions = W ? job.text.size() / W : 0;
  sram_read.assign(isa.memories().size(), 0);
  sram_write.assign(isa.memories().size(), 0);
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

void RunState::retire(const isa::IsaDescription& isa, const isa::Instruction& insn, Cls cls,
                      const Counts& c, Slice s, bool keepSlice) {
  const auto& et = isa.energy();
  const auto& d = insn.desc();
  double e = d.energyOf(isa::energy_key::kIssue);
  switch (cls) {
  case Cls::Gemm:
  case Cls::Depthwise:
    e += double(c.macs) * et.mac_int8;
    e_mac += e;
    break;
  case Cls::DmaLoad:
  case Cls::DmaStore:
    e += double(c.bursts) * d.energyOf(isa::energy_key::kPerBurst);
    e_dma += e;
    break;
  case Cls::VectorBinary:
  case Cls::VectorUnary:
  case Cls::Requantize:
  case Cls::QuantizedAdd:
  case Cls::Lut:
    e += double(c.lane_ops) * d.energyOf(isa::energy_key::kPerLane);
    e_vector += e;
    break;
  case Cls::Normalize:
    e += double(c.elements) * d.energyOf(isa::energy_key::kPerElement);
    e_vector += e;
    break;
  case Cls::Sync:
  case Cls::Halt:
  case Cls::Custom:
    e_control += e;
    break;
  }
  const auto& mems = isa.memories();
  for (std::size_t i = 0; i < c.sram_read.size() && i < mems.size(); ++i) {
    sram_read[i] += c.sram_read[i];
    sram_write[i] += c.sram_write[i];
    e += double(c.sram_read[i]) * mems[i].read_pj_per_byte +
         double(c.sram_write[i]) * mems[i].write_pj_per_byte;
  }
  e += double(c.dram_read) * et.dram_read_per_byte + double(c.dram_write) * et.dram_write_per_byte;
  macs += c.macs;
  dram_read += c.dram_read;
  dram_write += c.dram_write;
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
  r.macs = macs;
  r.peak_macs_per_cycle = isa.peakMacsPerCycle();
  r.mac_utilization =
      r.cycles ? double(macs) / (double(r.cycles) * double(r.peak_macs_per_cycle)) : 0;
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
  const auto& mems = isa.memories();
  for (std::size_t i = 0; i < mems.size(); ++i) {
    MemoryReport m;
    m.name = mems[i].name;
    m.bytes_read = sram_read[i];
    m.bytes_written = sram_write[i];
    m.peak_bytes_per_cycle = double(mems[i].banks) *
                             double(mems[i].read_ports + mems[i].write_ports) *
                             double(mems[i].row_bytes);
    m.utilization = r.cycles ? double(m.bytes_read + m.bytes_written) /
                                   (double(r.cycles) * m.peak_bytes_per_cycle)
                             : 0;
    m.energy_pj = double(m.bytes_read) * mems[i].read_pj_per_byte +
                  double(m.bytes_written) * mems[i].write_pj_per_byte;
    r.memories.push_back(m);
  }
  MemoryReport dram;
  dram.name = "dram";
  dram.bytes_read = dram_read;
  dram.bytes_written = dram_write;
  dram.peak_bytes_per_cycle = double(hw.dram.bytes_per_cycle);
  dram.utilization =
      r.cycles ? double(dram_read + dram_write) / (double(r.cycles) * dram.peak_bytes_per_cycle)
               : 0;
  dram.energy_pj =
      double(dram_read) * et.dram_read_per_byte + double(dram_write) * et.dram_write_per_byte;
  r.memories.push_back(dram);
  r.energy.push_back({"mac_array", e_mac});
  for (std::size_t i = 0; i < mems.size(); ++i)
    r.energy.push_back({"sram." + mems[i].name, r.memories[i].energy_pj});
  r.energy.push_back({"dram", dram.energy_pj});
  r.energy.push_back({"dma", e_dma});
  r.energy.push_back({"vector", e_vector});
  r.energy.push_back({"control", e_control});
  r.energy.push_back({"leakage", double(r.cycles) * et.leakage_per_cycle});
  for (const auto& e : r.energy)
    r.energy_total_pj += e.pj;
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
