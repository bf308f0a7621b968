// Sessions: jobs into a device's ring, completions out (docs/firmware.md section 7).
#include "ember/runtime/Runtime.h"

#include "ember/isa/error.h"
#include "ember/isa/system.h"
#include "ember/platform/Io.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace ember::runtime {

using u64 = std::uint64_t;

const char* ruleName(std::uint32_t r) {
  static const char* const kNames[] = {
      "NONE",         "RING_INDEX", "SLOT_MAGIC", "SLOT_RESERVED",  "BUDGET",    "BINARY_RANGE",
      "WINDOW_RANGE", "OVERLAP",    "ELF_HEADER", "FORMAT_VERSION", "SECTIONS",  "SECTION_SET",
      "DIGEST",       "ISA",        "MEMMAP",     "TEXT",           "DMA_EXTENT"};
  return r < sizeof kNames / sizeof *kNames ? kNames[r] : "?";
}

std::string Completion::describe() const {
  static const char* const kFaults[] = {"illegal-opcode",  "sram-out-of-range", "dram-out-of-range",
                                        "token-underflow", "token-overflow",    "deadlock",
                                        "cycle-budget",    "bad-operand"};
  switch (record.status) {
  case EMBER_JOB_DONE:
    return "done";
  case EMBER_JOB_REFUSED:
    return std::string("refused: ") + ruleName(record.detail);
  case EMBER_JOB_FAULT:
    return std::string("fault: ") + (record.detail < 8 ? kFaults[record.detail] : "?") +
           " at instruction " + std::to_string(record.fault_index);
  case EMBER_JOB_TIMEOUT:
    return "timeout";
  default:
    return "unknown status " + std::to_string(record.status);
  }
}

std::uint64_t Completion::npuCycles() const {
  if (record.status == EMBER_JOB_FAULT && report && report->fault)
    return std::min<std::uint64_t>(record.cycles, report->fault->signal_cycle);
  return record.cycles;
}

namespace {
constexpr u64 kAlign = 1u << 16;
constexpr u64 kImageAlign = 1u << 21; ///< A huge page (ElfFile::moveImage).
u64 roundUp(u64 v) {
  return (v + kAlign - 1) / kAlign * kAlign;
}
} // namespace

std::uint64_t jobWindowBytes(const isa::Binary& bin, std::uint64_t requested) {
  if (requested)
    return requested;
  u64 size = kAlign;
  for (const auto& r : bin.memmap)
    size = std::max(size, roundUp(r.dram_offset + r.size_bytes));
  return size;
}

Session::Session(Device& device) : dev_(device) {
  next_ = roundUp(u64(device.ringSlots()) * 2 * EMBER_RING_RECORD_BYTES);
}

std::uint32_t Session::submit(const isa::Binary& bin,
                              const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                              std::uint64_t cycle_budget, std::uint64_t window_bytes) {
  const u64 bytes = isa::elfImageSize(bin, dev_.isa());
  return place(
      bin, bytes, [&](std::uint8_t* out) { isa::serializeElfInto(bin, dev_.isa(), out, bytes); },
      inputs, cycle_budget, window_bytes, kAlign);
}

std::uint32_t Session::submit(const isa::ElfFile& file,
                              const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                              std::uint64_t cycle_budget, std::uint64_t window_bytes) {
  // serializeElf's check of the binary against the device's description, as above.
  isa::validateBinary(file.tables(), file.instructions(), file.constantsSize(), dev_.isa(),
                      "<output>");
  return place(
      file.tables(), file.imageSize(), [&](std::uint8_t* out) { file.writeImage(dev_.isa(), out); },
      inputs, cycle_budget, window_bytes, kAlign);
}

std::uint32_t Session::submit(isa::ElfFile&& file,
                              const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                              std::uint64_t cycle_budget, std::uint64_t window_bytes) {
  isa::validateBinary(file.tables(), file.instructions(), file.constantsSize(), dev_.isa(),
                      "<output>");
  // At a huge page boundary of device DRAM, so that moved huge pages stay whole.
  return place(
      file.tables(), file.imageSize(),
      [&](std::uint8_t* out) {
        if (!file.moveImage(dev_.isa(), out))
          file.writeImage(dev_.isa(), out);
      },
      inputs, cycle_budget, window_bytes, kImageAlign);
}

std::uint32_t Session::place(const isa::Binary& bin, std::uint64_t imageBytes,
                             const std::function<void(std::uint8_t*)>& writeImage,
                             const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                             std::uint64_t cycle_budget, std::uint64_t window_bytes,
                             std::uint64_t align) {
  // The slot and completion record this job reuses belong to job tail - RING_SIZE: wait
  // for it (a full ring) and keep its completion before its record is overwritten.
  if (tail_ >= dev_.ringSlots()) {
    const std::uint32_t old = tail_ - dev_.ringSlots();
    if (inflight_.count(old) && !done_.count(old)) {
      std::optional<Completion> c;
      while (!(c = collect(old, std::chrono::milliseconds(1000)))) {
      }
      done_.emplace(old, std::move(*c));
    }
  }
  const u64 windowSize = jobWindowBytes(bin, window_bytes);
  // The binary, then the window, from a bump pointer that restarts at the bottom when
  // no job is in flight (jobs of one session are few and short-lived).
  if (inflight_.empty())
    next_ = roundUp(u64(dev_.ringSlots()) * 2 * EMBER_RING_RECORD_BYTES);
  const u64 binAddr = (next_ + align - 1) / align * align, winBase = roundUp(binAddr + imageBytes);
  if (winBase + windowSize > dev_.dramBytes())
    throw isa::Error("<runtime>", "submit",
                     "the job needs " + std::to_string(winBase + windowSize) +
                         " bytes of device DRAM, the device has " +
                         std::to_string(dev_.dramBytes()));
  next_ = winBase + windowSize;
  writeImage(dev_.dram(binAddr, imageBytes)); // straight into device DRAM
  dev_.zero(winBase, windowSize);
  for (const auto& [name, bytes] : inputs) {
    const isa::IoEntry& e = platform::inputEntry(bin, name, bytes.size());
    std::memcpy(dev_.dram(winBase + e.dram_offset, bytes.size()), bytes.data(), bytes.size());
  }
  ember_job_slot s{};
  s.magic = EMBER_SLOT_MAGIC;
  s.job_id = tail_;
  s.binary_addr = binAddr;
  s.binary_size = imageBytes;
  s.window_base = winBase;
  s.window_size = windowSize;
  s.cycle_budget = cycle_budget ? cycle_budget : platform::kMaxCycleBudget;
  const u64 slot = dev_.ringBase() + u64(tail_ % dev_.ringSlots()) * EMBER_RING_RECORD_BYTES;
  std::memcpy(dev_.dram(slot, sizeof s), &s, sizeof s);
  u64 upload = imageBytes; // the image and every input (a missing one's zeros too)
  for (const auto& io : bin.io)
    if (io.dir == isa::IoDir::Input)
      upload += io.size_bytes;
  inflight_[tail_] = InFlight{bin.io, winBase, windowSize, next_, upload};
  dev_.ringDoorbell(++tail_);
  return tail_ - 1;
}

std::optional<Completion> Session::wait(std::uint32_t job, std::chrono::milliseconds timeout) {
  auto d = done_.find(job);
  if (d != done_.end()) { // kept when its ring record was about to be reused
    Completion c = std::move(d->second);
    done_.erase(d);
    inflight_.erase(job);
    return c;
  }
  std::optional<Completion> c = collect(job, timeout);
  if (c)
    inflight_.erase(job);
  return c;
}

std::optional<Completion> Session::collect(std::uint32_t job, std::chrono::milliseconds timeout) {
  auto it = inflight_.find(job);
  if (it == inflight_.end())
    return std::nullopt; // never submitted, or already collected
  if (!dev_.waitHead(job, timeout))
    return std::nullopt;
  Completion c;
  c.job = job;
  const u64 at =
      dev_.ringBase() + (u64(dev_.ringSlots()) + job % dev_.ringSlots()) * EMBER_RING_RECORD_BYTES;
  std::memcpy(&c.record, dev_.dram(at, sizeof c.record), sizeof c.record);
  c.report = dev_.takeReport(job);
  const u64 span = dev_.takeJobCycles(job).value_or(0);
  const InFlight& f = it->second;
  u64 download = 0;
  if (c.ok())
    for (const auto& io : f.io)
      if (io.dir == isa::IoDir::Output) {
        const std::uint8_t* p = dev_.dram(f.window_base + io.dram_offset, io.size_bytes);
        c.outputs[io.name].assign(p, p + io.size_bytes);
        download += io.size_bytes;
      }
  const isa::LinkDesc link{dev_.isa().hw().host_link.bytes_per_cycle,
                           dev_.isa().hw().host_link.latency_cycles};
  auto transfer = [&](u64 bytes) { return link.transferCycles(bytes); };
  c.npu_cycles = c.record.status == EMBER_JOB_REFUSED ? 0 : std::min(span, c.npuCycles());
  c.firmware_cycles = span - c.npu_cycles;
  c.link_cycles = transfer(f.upload_bytes) + transfer(download);
  c.platform_cycles = c.link_cycles + c.firmware_cycles + c.npu_cycles;
  return c;
}

} // namespace ember::runtime
