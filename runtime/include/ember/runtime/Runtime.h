// libember_runtime: the host side of the NPU (docs/firmware.md section 7). A Device is
// an NPU with its DRAM and its control core; a Session submits jobs through the device's
// job ring (firmware/include/ember_ring.h) and waits for their completions. The device
// is a SystemC platform (ember/sim/Platform.h) whose control core runs the firmware
// (firmware/, the build of the device's description) against a TLM-2.0 register block;
// the NPU behind the registers is the SystemC cycle engine, or the Verilated RTL.
#pragma once

#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/sim/Platform.h"
#include "ember/sim/Simulator.h"
#include "ember_ring.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember::runtime {

/// What runs the NPU's jobs once the firmware starts them: empty for the SystemC cycle
/// engine, live in the device's platform; ember-run --device rtl passes the Verilated
/// RTL, whose runs the platform plays back in simulated time (ember/sim/Platform.h).
using Engine = platform::JobEngine;

/// True when this build holds a firmware build for `isa` (its description hash): the
/// shipped descriptions and those added to EMBER_FW_DESCRIPTIONS (docs/firmware.md).
bool firmwareSupports(const isa::IsaDescription& isa);

/// An NPU device: DRAM (reserved virtually, touched pages only) and the platform of the
/// description: the register block of its register map, the control core running the
/// firmware, and the engine behind the registers. Throws isa::Error for a description
/// this build has no firmware for.
class Device {
public:
  struct Options {
    std::uint64_t dram_bytes = std::uint64_t(8) << 30; ///< Device DRAM (virtual reservation).
    std::uint32_t ring_slots = 8;                      ///< RING_SIZE (a power of two).
    Engine engine;                                     ///< Empty: the SystemC model.
    platform::JobPrepare prepare; ///< Adds debug map and run options to each started job.
    /// Makes the device's platform: empty for the SystemC platform (with `engine` behind
    /// its registers); ember::rtl::RtlPlatform::factory() for the Verilated RTL's own
    /// register port (the firmware drives the SoC; `engine` is then unused).
    platform::PlatformFactory platform;
  };
  Device(isa::IsaDescription isa, Options opts);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const isa::IsaDescription& isa() const;
  /// Device DRAM [addr, addr + size) as host memory, or nullptr outside it.
  std::uint8_t* dram(std::uint64_t addr, std::uint64_t size);
  std::uint64_t dramBytes() const;
  /// Zeroes device DRAM [addr, addr + size) without touching pages that are not resident
  /// (a 4 GiB window costs nothing until written).
  void zero(std::uint64_t addr, std::uint64_t size);
  std::uint32_t ringSlots() const;
  std::uint64_t ringBase() const;
  /// Host side of the ring: the tail written to DOORBELL, the head the firmware reports.
  void ringDoorbell(std::uint32_t tail);
  std::uint32_t ringHead() const;
  /// Blocks until the firmware's head passes `index` or `timeout` ends; true if it did.
  bool waitHead(std::uint32_t index, std::chrono::milliseconds timeout) const;
  /// The engine's report of the job at ring index `index` if it ran to its end (cycles,
  /// energy, slices); each is handed out once.
  std::optional<platform::Report> takeReport(std::uint32_t index);
  /// Platform cycles the control core spent on the job at ring index `index`, from
  /// taking its slot to publishing its completion (validation, register traffic, the
  /// NPU's run, recovery); handed out once.
  std::optional<std::uint64_t> takeJobCycles(std::uint32_t index);

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

/// One finished job.
struct Completion {
  std::uint32_t job = 0;
  ember_completion record{};                                ///< As the firmware wrote it.
  std::map<std::string, std::vector<std::uint8_t>> outputs; ///< DRAM-layout bytes (DONE).
  std::optional<platform::Report> report;                   ///< The engine's report (DONE).
  /// Simulated cycles of the job (docs/firmware.md section 6): link_cycles +
  /// firmware_cycles + npu_cycles.
  std::uint64_t platform_cycles = 0;
  /// The host link (the description's hardware.host_link; a transfer of B bytes takes
  /// latency_cycles + ceil(B / bytes_per_cycle)): the upload of the binary's image and the
  /// inputs (every input of the I/O table: a missing one's zeros are sent too), and for a
  /// DONE job the download of its outputs.
  std::uint64_t link_cycles = 0;
  /// The control core from taking the job's slot to publishing its completion, less the
  /// NPU's cycles: validation (the digest check's DMA streams, the firmware's own work),
  /// the constants' copy DMA, register traffic, waiting for the NPU's end, recovery.
  std::uint64_t firmware_cycles = 0;
  /// The NPU's cycles (npuCycles(); 0 for a refused job).
  std::uint64_t npu_cycles = 0;
  bool ok() const { return record.status == EMBER_JOB_DONE; }
  /// Cycles the NPU ran: `record.cycles`, except for a fault signalled before its
  /// record's cycle (a cycle-budget fault found as the instruction that would pass the
  /// budget starts: its record names the budget, the NPU stopped at the start), whose
  /// signal cycle it is. Never more than `platform_cycles` for a job that reached the NPU.
  std::uint64_t npuCycles() const;
  /// "done", "refused: <rule>", "fault: <kind> at instruction N", "timeout".
  std::string describe() const;
};

/// Name of a validation rule (EMBER_RULE_*), e.g. "DMA_EXTENT".
const char* ruleName(std::uint32_t rule);

/// The DRAM window of a job of `bin`: `requested` bytes, or when 0 its memory map's
/// extent rounded up to 64 KiB (at least 64 KiB). Every run takes its window from here
/// (Session::submit, runBinary, ember-sim --jobs), so the firmware's MEMMAP and
/// DMA_EXTENT rules and the engine's dram-out-of-range fault see one window.
std::uint64_t jobWindowBytes(const isa::Binary& bin, std::uint64_t requested = 0);

/// Jobs through one device's ring. Not thread-safe: one thread submits and waits.
class Session {
public:
  explicit Session(Device& device);
  /// Places the binary and its inputs (DRAM-layout bytes per input name, missing inputs
  /// are zeros) in device DRAM, writes the slot and rings the doorbell. Blocks while the
  /// ring is full. Returns the job's number. Throws isa::Error for inputs the binary does
  /// not have or of the wrong size, or a job larger than the device's free DRAM.
  /// `window_bytes`: the job's DRAM window (0: its memory map's extent).
  std::uint32_t submit(const isa::Binary& bin,
                       const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                       std::uint64_t cycle_budget, std::uint64_t window_bytes = 0);
  /// submit for a binary file read by isa::ElfFile: the same image in device DRAM, its
  /// instruction words and constants copied there straight from the file's bytes.
  std::uint32_t submit(const isa::ElfFile& file,
                       const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                       std::uint64_t cycle_budget, std::uint64_t window_bytes = 0);
  /// The same, the file's pages moved into device DRAM rather than copied when the file
  /// is its image byte for byte (ElfFile::moveImage): `file` keeps its tables only.
  std::uint32_t submit(isa::ElfFile&& file,
                       const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                       std::uint64_t cycle_budget, std::uint64_t window_bytes = 0);
  /// The completion of `job`, waiting at most `timeout`; nullopt if it has not finished.
  std::optional<Completion> wait(std::uint32_t job, std::chrono::milliseconds timeout);
  /// Whether `job` was submitted and wait has not returned its completion yet.
  bool pending(std::uint32_t job) const { return inflight_.count(job) || done_.count(job); }

private:
  struct InFlight {
    std::vector<isa::IoEntry> io; ///< The binary's I/O table (its outputs are collected).
    std::uint64_t window_base = 0, window_size = 0, region_end = 0;
    std::uint64_t upload_bytes = 0; ///< The binary's image and the inputs.
  };
  /// submit: the image of `imageBytes` bytes that `writeImage` writes, with `bin`'s tables,
  /// at a device address that is a multiple of `align`.
  std::uint32_t place(const isa::Binary& bin, std::uint64_t imageBytes,
                      const std::function<void(std::uint8_t*)>& writeImage,
                      const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                      std::uint64_t cycle_budget, std::uint64_t window_bytes, std::uint64_t align);
  /// Reads `job`'s completion (and outputs) once the head has passed it.
  std::optional<Completion> collect(std::uint32_t job, std::chrono::milliseconds timeout);

  Device& dev_;
  std::map<std::uint32_t, Completion> done_; ///< Collected early, not yet waited for.
  std::uint32_t tail_ = 0;
  std::uint64_t next_ = 0; ///< Bump allocator over device DRAM after the ring.
  std::map<std::uint32_t, InFlight> inflight_;
};

} // namespace ember::runtime
