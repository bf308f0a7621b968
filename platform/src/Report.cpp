// Report formatting: the text table, the JSON report and the Chrome / Perfetto trace.
#include "ember/platform/Report.h"
#include "ember/platform/Layers.h"

#include "ember/isa/binary.h"
#include "ember/isa/energy.h"
#include "ember/support/Error.h"
#include "ember/support/Format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace ember::platform {

const char* faultKindName(FaultKind k) {
  switch (k) {
  case FaultKind::IllegalOpcode:
    return "illegal-opcode";
  case FaultKind::SramOutOfRange:
    return "sram-out-of-range";
  case FaultKind::DramOutOfRange:
    return "dram-out-of-range";
  case FaultKind::TokenUnderflow:
    return "token-underflow";
  case FaultKind::TokenOverflow:
    return "token-overflow";
  case FaultKind::Deadlock:
    return "deadlock";
  case FaultKind::CycleBudget:
    return "cycle-budget";
  case FaultKind::BadOperand:
    return "bad-operand";
  }
  return "?";
}

std::string Fault::message() const {
  return std::string("fault ") + faultKindName(kind) + " at cycle " + std::to_string(cycle) +
         ", engine " + engine + ", instruction " +
         (instruction >= 0 ? std::to_string(instruction) : std::string("-")) + ": " + reason;
}

namespace {

std::string pct(double v) {
  return formatNumber("%.1f%%", v * 100.0);
}

std::string pad(std::string s, std::size_t w, bool right = true) {
  if (s.size() >= w)
    return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string humanBytes(std::uint64_t b) {
  if (b >= (1ull << 30))
    return formatNumber("%.2f GiB", double(b) / double(1ull << 30));
  if (b >= (1ull << 20))
    return formatNumber("%.2f MiB", double(b) / double(1ull << 20));
  if (b >= (1ull << 10))
    return formatNumber("%.2f KiB", double(b) / 1024.0);
  return std::to_string(b) + " B";
}

std::string energyStr(double pj) {
  if (pj >= 1e6)
    return formatNumber("%.3f uJ", pj / 1e6);
  if (pj >= 1e3)
    return formatNumber("%.3f nJ", pj / 1e3);
  return formatNumber("%.1f pJ", pj);
}

const char* kEngineNames[3] = {"load", "compute", "store"};

/// The per-layer lines of the table: its figures, its roofline and what stalled it. The
/// name column is as wide as the longest name (at least 24).
std::string layerTable(const Report& r) {
  std::size_t w = 24;
  for (const auto& l : r.layers)
    w = std::max(w, l.name.size());
  std::string o = "  " + pad("layer", w, false) + pad("cycles", 11) + pad("MACs", 12) +
                  pad("MAC util", 10) + pad("DRAM bytes", 13) + pad("energy", 12) +
                  pad("bound", 7) + pad("bound cyc", 11) + pad("eff.", 7) + "  most stalled\n";
  for (const auto& l : r.layers)
    o += "  " + pad(l.name, w, false) + pad(std::to_string(l.cycles), 11) +
         pad(std::to_string(l.macs), 12) + pad(pct(l.mac_utilization), 10) +
         pad(std::to_string(l.dram_bytes), 13) + pad(energyStr(l.energy_pj), 12) + pad(l.bound, 7) +
         pad(formatNumber("%.0f", l.bound_cycles), 11) + pad(pct(l.roofline_efficiency), 7) + "  " +
         layerStall(l) + "\n";
  return o;
}

nlohmann::json layerEngines(const LayerReport& l) {
  nlohmann::json o = nlohmann::json::object();
  for (std::size_t e = 0; e < 3; ++e)
    o[kEngineNames[e]] = {{"instructions", l.engines[e].instructions},
                          {"busy", l.engines[e].busy},
                          {"token_stall", l.engines[e].token_stall},
                          {"memory_stall", l.engines[e].memory_stall}};
  return o;
}

} // namespace

void addEnergy(Report& r, const isa::IsaDescription& isa, const isa::energy::Meter& m) {
  using isa::energy::checkedSum;
  const auto& mems = isa.memories();
  const auto& et = isa.energy();
  auto use = [&](std::uint64_t bytes, double peak) {
    return r.cycles ? double(bytes) / (double(r.cycles) * peak) : 0;
  };
  r.memories.clear();
  for (std::size_t i = 0; i < mems.size(); ++i) {
    MemoryReport s;
    s.name = mems[i].name;
    s.bytes_read = i < m.sram_read.size() ? m.sram_read[i] : 0;
    s.bytes_written = i < m.sram_write.size() ? m.sram_write[i] : 0;
    s.peak_bytes_per_cycle = double(mems[i].banks) *
                             double(mems[i].read_ports + mems[i].write_ports) *
                             double(mems[i].row_bytes);
    s.utilization = use(s.bytes_read + s.bytes_written, s.peak_bytes_per_cycle);
    s.energy_pj = checkedSum(double(s.bytes_read) * mems[i].read_pj_per_byte,
                             double(s.bytes_written) * mems[i].write_pj_per_byte, "sram energy");
    r.memories.push_back(s);
  }
  MemoryReport dram;
  dram.name = "dram";
  dram.bytes_read = m.dram_read;
  dram.bytes_written = m.dram_write;
  dram.peak_bytes_per_cycle = double(isa.hw().dram.bytes_per_cycle);
  dram.utilization = use(m.dram_read + m.dram_write, dram.peak_bytes_per_cycle);
  dram.energy_pj = checkedSum(double(m.dram_read) * et.dram_read_per_byte,
                              double(m.dram_write) * et.dram_write_per_byte, "dram energy");
  r.memories.push_back(dram);
  r.energy.clear();
  r.energy.push_back({"mac_array", m.mac});
  for (std::size_t i = 0; i < mems.size(); ++i)
    r.energy.push_back({"sram." + mems[i].name, r.memories[i].energy_pj});
  r.energy.push_back({"dram", dram.energy_pj});
  r.energy.push_back({"dma", m.dma});
  r.energy.push_back({"vector", m.vector});
  r.energy.push_back({"control", m.control});
  r.energy.push_back(
      {"leakage", checkedSum(double(r.cycles) * et.leakage_per_cycle, 0, "leakage")});
  r.energy_total_pj = 0;
  for (const auto& e : r.energy)
    r.energy_total_pj = checkedSum(r.energy_total_pj, e.pj, "total energy");
}

void checkFinite(const Report& r) {
  auto check = [](double v, const std::string& what) {
    if (!std::isfinite(v))
      throw Error("report", what + " is " + (std::isnan(v) ? "NaN" : "infinite") +
                                ", not a finite number: no report writes it");
  };
  check(r.seconds, "seconds");
  check(r.mac_utilization, "mac_utilization");
  check(r.energy_total_pj, "energy total_pj");
  check(r.host_seconds, "host_seconds");
  for (const auto& m : r.memories) {
    check(m.peak_bytes_per_cycle, "memory " + m.name + " peak_bytes_per_cycle");
    check(m.utilization, "memory " + m.name + " utilization");
    check(m.energy_pj, "memory " + m.name + " energy_pj");
  }
  for (const auto& e : r.energy)
    check(e.pj, "energy " + e.component);
  for (const auto& l : r.layers) {
    check(l.mac_utilization, "layer " + l.name + " mac_utilization");
    check(l.energy_pj, "layer " + l.name + " energy_pj");
    check(l.mac_bound_cycles, "layer " + l.name + " mac_bound_cycles");
    check(l.dram_bound_cycles, "layer " + l.name + " dram_bound_cycles");
    check(l.bound_cycles, "layer " + l.name + " bound_cycles");
    check(l.roofline_efficiency, "layer " + l.name + " roofline_efficiency");
  }
}

std::string formatTable(const Report& r) {
  checkFinite(r);
  std::string o;
  o += "Ember NPU simulation (" + r.isa_name + ")\n";
  o += "  cycles            " + std::to_string(r.cycles) + "  (" +
       formatNumber("%.3f us", r.seconds * 1e6) + " at " +
       formatNumber("%.0f MHz", double(r.clock_hz) / 1e6) + ")\n";
  o += "  instructions      " + std::to_string(r.retired) + " of " +
       std::to_string(r.instructions) + " retired\n";
  o += "  MACs              " + std::to_string(r.macs) + "  (utilisation " +
       pct(r.mac_utilization) + " of " + std::to_string(r.peak_macs_per_cycle) + "/cycle)\n";
  o += "  fetch stalled     " + std::to_string(r.fetch_stall) + " cycles on full queues\n";
  if (r.platform)
    o += "  platform cycles   " + std::to_string(r.platform->total) + " = link " +
         std::to_string(r.platform->link) + " + firmware " + std::to_string(r.platform->firmware) +
         " + NPU " + std::to_string(r.platform->npu) + "\n";
  if (r.fault)
    o += "  FAULT             " + r.fault->message() + "\n";
  o += "\n  engine    instrs        busy   token-stall  memory-stall        idle\n";
  for (const auto& e : r.engines) {
    auto cell = [&](std::uint64_t v) {
      return pad(std::to_string(v), 9) + " " +
             pad(pct(r.cycles ? double(v) / double(r.cycles) : 0), 6);
    };
    o += "  " + pad(e.name, 8, false) + pad(std::to_string(e.instructions), 8) + " " +
         cell(e.busy) + cell(e.token_stall) + cell(e.memory_stall) + cell(e.idle) + "\n";
  }
  o += "\n  memory        read     written   peak B/cycle  utilisation      energy\n";
  for (const auto& m : r.memories)
    o += "  " + pad(m.name, 8, false) + pad(humanBytes(m.bytes_read), 10) +
         pad(humanBytes(m.bytes_written), 12) +
         pad(formatNumber("%.0f", m.peak_bytes_per_cycle), 15) + pad(pct(m.utilization), 13) +
         pad(energyStr(m.energy_pj), 12) + "\n";
  o += "\n  energy component          pJ   share\n";
  for (const auto& e : r.energy)
    o += "  " + pad(e.component, 14, false) + pad(formatNumber("%.1f", e.pj), 14) +
         pad(pct(r.energy_total_pj > 0 ? e.pj / r.energy_total_pj : 0), 8) + "\n";
  o += "  " + pad("total", 14, false) + pad(formatNumber("%.1f", r.energy_total_pj), 14) + "  (" +
       energyStr(r.energy_total_pj) + ")\n";
  if (!r.layers.empty())
    o += "\n" + layerTable(r);
  return o;
}

nlohmann::json toJson(const Report& r) {
  checkFinite(r);
  using nlohmann::json;
  json j;
  j["isa"] = r.isa_name;
  j["cycles"] = r.cycles;
  if (r.platform)
    j["platform_cycles"] = {{"total", r.platform->total},
                            {"link", r.platform->link},
                            {"firmware", r.platform->firmware},
                            {"npu", r.platform->npu}};
  j["clock_hz"] = r.clock_hz;
  j["seconds"] = r.seconds;
  j["instructions"] = r.instructions;
  j["retired"] = r.retired;
  j["macs"] = r.macs;
  j["peak_macs_per_cycle"] = r.peak_macs_per_cycle;
  j["mac_utilization"] = r.mac_utilization;
  j["fetch_stall_cycles"] = r.fetch_stall;
  json engines = json::object();
  for (const auto& e : r.engines)
    engines[e.name] = {{"instructions", e.instructions},
                       {"busy", e.busy},
                       {"token_stall", e.token_stall},
                       {"memory_stall", e.memory_stall},
                       {"idle", e.idle}};
  j["engines"] = engines;
  json mems = json::object();
  for (const auto& m : r.memories)
    mems[m.name] = {{"bytes_read", m.bytes_read},
                    {"bytes_written", m.bytes_written},
                    {"peak_bytes_per_cycle", m.peak_bytes_per_cycle},
                    {"utilization", m.utilization},
                    {"energy_pj", m.energy_pj}};
  j["memories"] = mems;
  json energy = json::object();
  energy["total_pj"] = r.energy_total_pj;
  for (const auto& e : r.energy)
    energy[e.component] = e.pj;
  j["energy"] = energy;
  json layers = json::array();
  for (const auto& l : r.layers)
    layers.push_back({{"name", l.name},
                      {"first", l.first},
                      {"count", l.count},
                      {"start", l.start},
                      {"end", l.end},
                      {"cycles", l.cycles},
                      {"macs", l.macs},
                      {"mac_utilization", l.mac_utilization},
                      {"dram_bytes", l.dram_bytes},
                      {"energy_pj", l.energy_pj},
                      {"bound", l.bound},
                      {"mac_bound_cycles", l.mac_bound_cycles},
                      {"dram_bound_cycles", l.dram_bound_cycles},
                      {"bound_cycles", l.bound_cycles},
                      {"roofline_efficiency", l.roofline_efficiency},
                      {"engines", layerEngines(l)}});
  j["layers"] = layers;
  if (r.fault)
    j["fault"] = {{"kind", faultKindName(r.fault->kind)},
                  {"cycle", r.fault->cycle},
                  {"engine", r.fault->engine},
                  {"instruction", r.fault->instruction},
                  {"reason", r.fault->reason},
                  {"message", r.fault->message()}};
  else
    j["fault"] = nullptr;
  j["host_seconds"] = r.host_seconds;
  j["simulated_cycles_per_second"] = r.host_seconds > 0 ? double(r.cycles) / r.host_seconds : 0.0;
  return j;
}

nlohmann::json toChromeTrace(const Report& r) {
  checkFinite(r);
  using nlohmann::json;
  const double usPerCycle = r.clock_hz ? 1e6 / double(r.clock_hz) : 1e-3;
  json ev = json::array();
  const char* tracks[4] = {"load engine", "compute engine", "store engine", "layers"};
  ev.push_back({{"ph", "M"},
                {"pid", 1},
                {"name", "process_name"},
                {"args", {{"name", "Ember NPU (" + r.isa_name + ")"}}}});
  for (int t = 0; t < 4; ++t) {
    ev.push_back({{"ph", "M"},
                  {"pid", 1},
                  {"tid", t + 1},
                  {"name", "thread_name"},
                  {"args", {{"name", tracks[t]}}}});
    ev.push_back({{"ph", "M"},
                  {"pid", 1},
                  {"tid", t + 1},
                  {"name", "thread_sort_index"},
                  {"args", {{"sort_index", t}}}});
  }
  for (const auto& s : r.slices) {
    if (s.start > s.take)
      ev.push_back({{"ph", "X"},
                    {"pid", 1},
                    {"tid", s.engine + 1},
                    {"name", "wait token"},
                    {"cat", "stall"},
                    {"ts", double(s.take) * usPerCycle},
                    {"dur", double(s.start - s.take) * usPerCycle}});
    const std::uint64_t ends = s.end - s.push_stall; // its duration ends; then it pushes
    ev.push_back({{"ph", "X"},
                  {"pid", 1},
                  {"tid", s.engine + 1},
                  {"name", s.name},
                  {"cat", "instruction"},
                  {"ts", double(s.start) * usPerCycle},
                  {"dur", double(ends - s.start) * usPerCycle},
                  {"args",
                   {{"index", s.index},
                    {"dispatch_cycle", s.dispatch},
                    {"take_cycle", s.take},
                    {"start_cycle", s.start},
                    {"end_cycle", s.end},
                    {"memory_stall", s.memory_stall},
                    {"push_stall", s.push_stall}}}});
    if (s.push_stall)
      ev.push_back({{"ph", "X"},
                    {"pid", 1},
                    {"tid", s.engine + 1},
                    {"name", "wait room"},
                    {"cat", "stall"},
                    {"ts", double(ends) * usPerCycle},
                    {"dur", double(s.push_stall) * usPerCycle}});
  }
  for (const auto& l : r.layers)
    if (l.end > l.start)
      ev.push_back({{"ph", "X"},
                    {"pid", 1},
                    {"tid", 4},
                    {"name", l.name},
                    {"cat", "layer"},
                    {"ts", double(l.start) * usPerCycle},
                    {"dur", double(l.cycles) * usPerCycle},
                    {"args",
                     {{"cycles", l.cycles},
                      {"macs", l.macs},
                      {"energy_pj", l.energy_pj},
                      {"bound", l.bound},
                      {"bound_cycles", l.bound_cycles},
                      {"roofline_efficiency", l.roofline_efficiency}}}});
  if (r.fault)
    ev.push_back({{"ph", "i"},
                  {"pid", 1},
                  {"tid", 2},
                  {"s", "g"},
                  {"name", "fault"},
                  {"ts", double(r.fault->cycle) * usPerCycle},
                  {"args", {{"message", r.fault->message()}}}});
  return json{{"traceEvents", ev},
              {"displayTimeUnit", "ns"},
              {"otherData", {{"isa", r.isa_name}, {"cycles", r.cycles}, {"clock_hz", r.clock_hz}}}};
}

void writeJsonFile(const std::string& path, const nlohmann::json& j, int indent) {
  std::string text = j.dump(indent) + "\n";
  isa::writeFileAtomic(path, text.data(), text.size());
}

} // namespace ember::platform
