// Reports of one simulation: counters, energy, per-layer figures and the timeline.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ember::isa {
class IsaDescription;
namespace energy {
struct Meter;
}
} // namespace ember::isa

namespace ember::platform {

/// Why a run stopped before its end. Every kind has a fixed name (see `faultKindName`).
enum class FaultKind {
  IllegalOpcode,  ///< An instruction word that does not decode (unknown opcode, reserved bits).
  SramOutOfRange, ///< An SRAM row outside its memory.
  DramOutOfRange, ///< A DRAM byte outside the job's DRAM window.
  TokenUnderflow, ///< A pop that no instruction can ever satisfy.
  TokenOverflow,  ///< A push into a full token FIFO.
  Deadlock,       ///< No engine can progress, and nothing is in flight.
  CycleBudget,    ///< The run exceeded `Options::cycle_budget`.
  BadOperand,     ///< An operand the semantics reject (memory not allowed, shift out of range).
};

/// "illegal-opcode", "sram-out-of-range", ... (stable names for JSON and tests).
const char* faultKindName(FaultKind k);

/// The record a faulting run leaves.
struct Fault {
  FaultKind kind = FaultKind::Deadlock;
  std::uint64_t cycle = 0;       ///< Cycle at which the fault was raised.
  std::string engine;            ///< "fetch", "load", "compute" or "store".
  std::int64_t instruction = -1; ///< Index of the instruction in the stream (-1: none).
  std::string reason;            ///< Human-readable explanation.
  /// Cycle in which the NPU signals the fault (FAULT shows in the next one): `cycle`, but
  /// the next cycle for the checks made on the state a cycle left (starvation, deadlock:
  /// the hardware makes them at the start of the next cycle) and `budget + 1` for the
  /// cycle budget running out on the clock, which the cycle after the budget finds
  /// (docs/firmware.md section 6). Not part of the fault record the firmware reads.
  std::uint64_t signal_cycle = 0;
  /// "fault <kind> at cycle C, engine E, instruction I: REASON".
  std::string message() const;
};

/// Counters of one engine. busy + token_stall + memory_stall + idle == cycles.
struct EngineReport {
  std::string name;
  std::uint64_t instructions = 0;
  std::uint64_t busy = 0;         ///< Executing, excluding memory stalls.
  std::uint64_t token_stall = 0;  ///< Waiting for a dependency token.
  std::uint64_t memory_stall = 0; ///< DRAM bus held by the other DMA engine, SRAM port conflicts.
  std::uint64_t idle = 0;         ///< Nothing to do (empty queue, or finished).
};

/// Traffic of one memory (an SRAM or "dram").
struct MemoryReport {
  std::string name;
  std::uint64_t bytes_read = 0, bytes_written = 0;
  double peak_bytes_per_cycle = 0; ///< Read + write bytes per cycle at full use.
  double utilization = 0;          ///< (read + written) / (cycles * peak).
  double energy_pj = 0;
};

/// One component of the energy break-down.
struct EnergyItem {
  std::string component; ///< "mac_array", "sram.act", ..., "dram", "dma", "vector",
                         ///< "control", "leakage".
  double pj = 0;
};

/// A layer's instructions on one engine: the sums over them of the engine counters'
/// terms (EngineReport). Idle has no per-layer meaning (layers overlap), so none is kept.
struct LayerEngineReport {
  std::uint64_t instructions = 0;
  std::uint64_t busy = 0;         ///< end - start - memory stall - push stall.
  std::uint64_t token_stall = 0;  ///< start - take (waiting to pop) + push stall.
  std::uint64_t memory_stall = 0; ///< DRAM channel or SRAM banks held.
};

/// One entry of the binary's debug map.
struct LayerReport {
  std::string name;
  std::uint32_t first = 0, count = 0; ///< Instruction range.
  std::uint64_t start = 0, end = 0;   ///< First start / last end cycle of its instructions.
  std::uint64_t cycles = 0;           ///< end - start.
  std::uint64_t macs = 0;
  double mac_utilization = 0; ///< macs / (cycles * peak MACs per cycle).
  std::uint64_t dram_bytes = 0;
  double energy_pj = 0; ///< Dynamic energy of its instructions + leakage over its cycles.
  /// Its roofline (platform::roofline, ember/platform/Layers.h): "mac", "dram" or
  /// "none" (neither MACs nor DRAM bytes), the two bounds in cycles, the larger one and
  /// bound_cycles / cycles.
  std::string bound = "none";
  double mac_bound_cycles = 0;    ///< macs / peak MACs per cycle.
  double dram_bound_cycles = 0;   ///< dram_bytes / the description's DRAM bytes per cycle.
  double bound_cycles = 0;        ///< max(mac_bound_cycles, dram_bound_cycles).
  double roofline_efficiency = 0; ///< bound_cycles / cycles (0 when cycles is 0).
  std::array<LayerEngineReport, 3> engines{}; ///< load, compute, store.
};

/// One instruction on the timeline.
struct Slice {
  std::uint32_t index = 0;
  int engine = 0;                 ///< 0 load, 1 compute, 2 store.
  std::uint64_t dispatch = 0;     ///< Fetch wrote it into its queue (takeable from the next cycle).
  std::uint64_t take = 0;         ///< Left the queue into its engine (engine free).
  std::uint64_t start = 0;        ///< Tokens popped, execution starts.
  std::uint64_t end = 0;          ///< Retired: tokens pushed, engine free for the next one.
  std::uint64_t memory_stall = 0; ///< Cycles of start..end lost to the DRAM channel or banks.
  std::uint64_t push_stall = 0;   ///< Cycles before `end` spent waiting for room to push.
  std::string name;               ///< Mnemonic.
};

/// A job's cycles through a device's job ring (docs/firmware.md section 6): total =
/// link + firmware + npu.
struct JobCycles {
  std::uint64_t total = 0;    ///< platform_cycles.
  std::uint64_t link = 0;     ///< The host link: the upload and the outputs' download.
  std::uint64_t firmware = 0; ///< The control core: its work, copy DMA, register traffic.
  std::uint64_t npu = 0;      ///< The NPU's cycles.
};

/// Everything one run measured.
struct Report {
  std::string isa_name;
  std::uint64_t cycles = 0; ///< Total cycles until the last instruction retired.
  std::uint64_t clock_hz = 0;
  double seconds = 0; ///< cycles / clock_hz.
  std::uint64_t instructions = 0, retired = 0;
  std::uint64_t macs = 0;
  std::uint64_t peak_macs_per_cycle = 0;
  double mac_utilization = 0;
  std::uint64_t fetch_stall = 0;      ///< Cycles the fetch unit waited for a full queue.
  std::vector<EngineReport> engines;  ///< load, compute, store.
  std::vector<MemoryReport> memories; ///< Every SRAM, then "dram".
  std::vector<EnergyItem> energy;     ///< Components; total in `energy_total_pj`.
  double energy_total_pj = 0;
  std::vector<LayerReport> layers;
  std::vector<Slice> slices; ///< Retired (or in-flight at a fault) instructions.
  std::optional<Fault> fault;
  double host_seconds = 0; ///< Wall-clock time of the simulation.
  /// Set for a run through a device's job ring: the job's platform cycles and their split.
  std::optional<JobCycles> platform;
};

/// Fills `r.memories` (every SRAM of the description, then "dram": bytes, peak, use and
/// energy), `r.energy` and `r.energy_total_pj` from the sums of a run's retired
/// instructions and `r.cycles` (leakage): the one energy report of the SystemC model and
/// the RTL (isa/energy.h). Throws isa::Error when a sum is not finite.
void addEnergy(Report& r, const isa::IsaDescription& isa, const isa::energy::Meter& m);

/// Throws ember::Error naming the first figure of `r` that is not a finite number (NaN
/// or an infinity, which JSON cannot hold): no report (table, JSON, trace, HTML) writes
/// one.
void checkFinite(const Report& r);

/// The human-readable table (what ember-sim prints).
std::string formatTable(const Report& r);
/// The JSON report (schema in docs/simulator.md).
nlohmann::json toJson(const Report& r);
/// Chrome / Perfetto trace: one track per engine, one slice per instruction, plus a
/// track of layer slices. Timestamps are microseconds at the description's clock.
nlohmann::json toChromeTrace(const Report& r);
/// Writes `j` to `path` atomically (temporary file, then rename). Throws isa::Error.
void writeJsonFile(const std::string& path, const nlohmann::json& j, int indent = 1);

} // namespace ember::platform
