// The NPU as the control core sees it: the register block of the description's map
// (CTRL, STATUS, FAULT_CODE, FAULT_PC, CYCLES, the busy and MAC counters, the program and
// window registers) in front of an engine that runs a whole job when CTRL.START is
// written. Used by the runtime's devices and by the firmware's tests.
#pragma once

#include "ember/runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <optional>

namespace ember::runtime {

class NpuRegisters {
public:
  /// `dram` is device DRAM of `dram_bytes` (the engine reads the window from it and a
  /// finished job's writes go back into it).
  NpuRegisters(const isa::IsaDescription& isa, Engine engine, std::uint8_t* dram,
               std::uint64_t dram_bytes);
  std::uint32_t read(std::uint32_t offset);
  void write(std::uint32_t offset, std::uint32_t value);
  /// Lets `cycles` NPU cycles pass (UINT64_MAX: to the end of the running job).
  void advance(std::uint64_t cycles);
  /// Jobs started since construction.
  std::uint64_t starts() const { return starts_; }
  /// The engine's report of the job once the control core saw it end (DONE or FAULT),
  /// handed out once.
  std::optional<sim::Report> takeReport();

private:
  sim::DramImage windowImage(std::uint64_t base, std::uint64_t size) const;
  void start();
  bool finished() const { return run_ && clock_ >= run_->report.cycles; }
  void finish();

  const isa::IsaDescription& isa_;
  Engine engine_;
  std::uint8_t* dram_;
  std::uint64_t dramBytes_;
  std::map<std::uint32_t, std::uint32_t> regs_;
  std::optional<sim::Result> run_;
  std::uint64_t clock_ = 0, window_ = 0, windowSize_ = 0, starts_ = 0;
  bool written_ = false;
  std::optional<sim::Report> report_;
};

} // namespace ember::runtime
