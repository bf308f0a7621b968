// The NPU register block in front of an engine (NpuRegisters.h).
#include "ember/runtime/NpuRegisters.h"

#include "ember_npu_isa.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace ember::runtime {

using u64 = std::uint64_t;

Engine systemcEngine() {
  return [](const isa::IsaDescription& d, const sim::Job& job, const sim::Options& o) {
    return sim::Simulator(d).run(job, o);
  };
}

NpuRegisters::NpuRegisters(const isa::IsaDescription& isa, Engine engine, std::uint8_t* dram,
                           u64 dram_bytes)
    : isa_(isa), engine_(engine ? std::move(engine) : systemcEngine()), dram_(dram),
      dramBytes_(dram_bytes) {}

sim::DramImage NpuRegisters::windowImage(u64 base, u64 size) const {
  // Only pages the host or the NPU touched are resident; copy those.
  sim::DramImage img;
  const u64 page = u64(sysconf(_SC_PAGESIZE));
  const u64 first = base / page * page;
  std::vector<unsigned char> resident((base + size - first + page - 1) / page);
  if (mincore(dram_ + first, base + size - first, resident.data()) != 0)
    resident.assign(resident.size(), 1);
  for (std::size_t i = 0; i < resident.size(); ++i) {
    if (!(resident[i] & 1))
      continue;
    const u64 lo = std::max(base, first + i * page), hi = std::min(base + size, lo + page);
    img.write(lo - base, dram_ + lo, hi - lo);
  }
  return img;
}

void NpuRegisters::start() {
  ++starts_;
  const u64 text = regs_[EMBER_REG_INSN_BASE_LO] | u64(regs_[EMBER_REG_INSN_BASE_HI]) << 32;
  const u64 n = regs_[EMBER_REG_INSN_COUNT];
  window_ = regs_[EMBER_REG_DRAM_BASE_LO] | u64(regs_[EMBER_REG_DRAM_BASE_HI]) << 32;
  windowSize_ = regs_[EMBER_REG_DRAM_SIZE_LO] | u64(regs_[EMBER_REG_DRAM_SIZE_HI]) << 32;
  sim::Job job;
  // The firmware validated both ranges; registers written otherwise are clamped to DRAM.
  const u64 W = isa_.instructionBytes();
  const u64 maxInsns = text < dramBytes_ ? (dramBytes_ - text) / W : 0;
  const u64 count = std::min(n, maxInsns);
  window_ = std::min(window_, dramBytes_);
  windowSize_ = std::min(windowSize_, dramBytes_ - window_);
  job.text.assign(dram_ + text, dram_ + text + count * W);
  job.dram = windowImage(window_, windowSize_);
  sim::Options o;
  o.dram_window_bytes = windowSize_;
  o.record_slices = true;
  run_ = engine_(isa_, job, o);
  clock_ = 0;
  written_ = false;
}

void NpuRegisters::finish() { // DONE or FAULT seen: a finished job's writes land in DRAM
  if (written_ || !finished())
    return;
  written_ = true;
  if (!run_->report.fault)
    run_->dram.forEachPage([&](u64 addr, const std::uint8_t* bytes, u64 n) {
      if (addr < windowSize_)
        std::memcpy(dram_ + window_ + addr, bytes, std::min(n, windowSize_ - addr));
    });
  report_ = run_->report;
}

std::optional<sim::Report> NpuRegisters::takeReport() {
  std::optional<sim::Report> r = std::move(report_);
  report_.reset();
  return r;
}

std::uint32_t NpuRegisters::read(std::uint32_t off) {
  const u64 c = run_ ? std::min(clock_, run_->report.cycles) : 0;
  const bool fin = finished();
  switch (off) {
  case EMBER_REG_STATUS:
    if (!run_)
      return 0;
    if (!fin)
      return EMBER_REG_STATUS_BUSY_MASK;
    finish();
    return run_->report.fault ? EMBER_REG_STATUS_FAULT_MASK : EMBER_REG_STATUS_DONE_MASK;
  case EMBER_REG_CYCLES_LO:
    return std::uint32_t(c);
  case EMBER_REG_CYCLES_HI:
    return std::uint32_t(c >> 32);
  case EMBER_REG_MACS_LO:
    return fin ? std::uint32_t(run_->report.macs) : 0;
  case EMBER_REG_MACS_HI:
    return fin ? std::uint32_t(run_->report.macs >> 32) : 0;
  case EMBER_REG_LOAD_BUSY_CYCLES:
  case EMBER_REG_COMPUTE_BUSY_CYCLES:
  case EMBER_REG_STORE_BUSY_CYCLES:
    return fin ? std::uint32_t(run_->report.engines[(off - EMBER_REG_LOAD_BUSY_CYCLES) / 4].busy)
               : 0;
  case EMBER_REG_FAULT_CODE: {
    if (!fin || !run_->report.fault)
      return 0;
    const auto& f = *run_->report.fault;
    const unsigned e = f.engine == "load"      ? 0
                       : f.engine == "compute" ? 1
                       : f.engine == "store"   ? 2
                                               : 3;
    return (unsigned(f.kind) + 1) | e << 8; // FAULT_CODE.CODE: 1 + the fault kind
  }
  case EMBER_REG_FAULT_PC:
    return fin && run_->report.fault ? std::uint32_t(run_->report.fault->instruction) : 0;
  default:
    return regs_[off];
  }
}

void NpuRegisters::write(std::uint32_t off, std::uint32_t v) {
  if (off == EMBER_REG_CTRL && (v & EMBER_REG_CTRL_RESET_MASK)) {
    run_.reset();
    return;
  }
  if (off == EMBER_REG_CTRL && (v & EMBER_REG_CTRL_START_MASK)) {
    start();
    return;
  }
  regs_[off] = v;
}

void NpuRegisters::advance(u64 cycles) {
  if (run_)
    clock_ = cycles > run_->report.cycles - std::min(clock_, run_->report.cycles)
                 ? run_->report.cycles
                 : clock_ + cycles;
}

} // namespace ember::runtime
