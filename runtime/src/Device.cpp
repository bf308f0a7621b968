// The runtime's NPU device: device DRAM (a virtual reservation: only touched pages cost
// memory), the register block of the description's register map, the NPU engine behind
// it, and the control core: a thread running the firmware (ember_fw_host) whose HAL
// (ember_hal_*) reaches this device.
#include "ember/runtime/Runtime.h"

#include "ember/isa/error.h"
#include "ember_fw.h"
#include "ember_npu_isa.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace ember::runtime {

using u64 = std::uint64_t;

Engine systemcEngine() {
  return [](const isa::IsaDescription& d, const sim::Job& job, const sim::Options& o) {
    return sim::Simulator(d).run(job, o);
  };
}

struct Device::Impl {
  isa::IsaDescription isa;
  Options opts;
  std::uint8_t* dram = nullptr;
  std::map<std::uint32_t, std::uint32_t> regs;
  // The NPU: the engine's result of the running job and the clock the firmware sees.
  std::optional<sim::Result> run;
  u64 clock = 0, window = 0, windowSize = 0;
  bool written = false;
  std::optional<sim::Report> jobReport;         ///< Of the job the core is running.
  std::map<std::uint32_t, sim::Report> reports; ///< By ring index, until taken.
  // The ring, host and core sides.
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  std::uint32_t doorbell = 0, head = 0;
  bool stop = false;
  std::thread core;

  Impl(isa::IsaDescription d, Options o) : isa(std::move(d)), opts(std::move(o)) {}

  // ---- The NPU behind the registers ----
  sim::DramImage windowImage(u64 base, u64 size) const {
    // Only pages the host or the NPU touched are resident; copy those.
    sim::DramImage img;
    const u64 page = u64(sysconf(_SC_PAGESIZE));
    const u64 first = base / page * page;
    std::vector<unsigned char> resident((base + size - first + page - 1) / page);
    if (mincore(dram + first, base + size - first, resident.data()) != 0)
      resident.assign(resident.size(), 1);
    for (std::size_t i = 0; i < resident.size(); ++i) {
      if (!(resident[i] & 1))
        continue;
      const u64 lo = std::max(base, first + i * page), hi = std::min(base + size, lo + page);
      img.write(lo - base, dram + lo, hi - lo);
    }
    return img;
  }
  void start() {
    const u64 text = regs[EMBER_REG_INSN_BASE_LO] | u64(regs[EMBER_REG_INSN_BASE_HI]) << 32;
    const u64 n = regs[EMBER_REG_INSN_COUNT];
    window = regs[EMBER_REG_DRAM_BASE_LO] | u64(regs[EMBER_REG_DRAM_BASE_HI]) << 32;
    windowSize = regs[EMBER_REG_DRAM_SIZE_LO] | u64(regs[EMBER_REG_DRAM_SIZE_HI]) << 32;
    sim::Job job;
    job.text.assign(dram + text, dram + text + n * isa.instructionBytes());
    job.dram = windowImage(window, windowSize);
    sim::Options o;
    o.dram_window_bytes = windowSize;
    o.record_slices = true;
    run = (opts.engine ? opts.engine : systemcEngine())(isa, job, o);
    clock = 0;
    written = false;
  }
  bool finished() const { return run && clock >= run->report.cycles; }
  void finish() { // DONE or FAULT seen: a finished job's writes land in device DRAM
    if (written || !finished())
      return;
    written = true;
    if (!run->report.fault)
      run->dram.forEachPage([&](u64 addr, const std::uint8_t* bytes, u64 n) {
        if (addr < windowSize)
          std::memcpy(dram + window + addr, bytes, std::min(n, windowSize - addr));
      });
    std::lock_guard<std::mutex> lk(mu);
    jobReport = run->report;
  }
  std::uint32_t read(std::uint32_t off) {
    const u64 c = run ? std::min(clock, run->report.cycles) : 0;
    const bool fin = finished();
    switch (off) {
    case EMBER_REG_STATUS:
      if (!run)
        return 0;
      if (!fin)
        return EMBER_REG_STATUS_BUSY_MASK;
      finish();
      return run->report.fault ? EMBER_REG_STATUS_FAULT_MASK : EMBER_REG_STATUS_DONE_MASK;
    case EMBER_REG_CYCLES_LO:
      return std::uint32_t(c);
    case EMBER_REG_CYCLES_HI:
      return std::uint32_t(c >> 32);
    case EMBER_REG_MACS_LO:
      return fin ? std::uint32_t(run->report.macs) : 0;
    case EMBER_REG_MACS_HI:
      return fin ? std::uint32_t(run->report.macs >> 32) : 0;
    case EMBER_REG_LOAD_BUSY_CYCLES:
    case EMBER_REG_COMPUTE_BUSY_CYCLES:
    case EMBER_REG_STORE_BUSY_CYCLES:
      return fin ? std::uint32_t(run->report.engines[(off - EMBER_REG_LOAD_BUSY_CYCLES) / 4].busy)
                 : 0;
    case EMBER_REG_FAULT_CODE: {
      if (!fin || !run->report.fault)
        return 0;
      const auto& f = *run->report.fault;
      const unsigned e = f.engine == "load"      ? 0
                         : f.engine == "compute" ? 1
                         : f.engine == "store"   ? 2
                                                 : 3;
      return (unsigned(f.kind) + 1) | e << 8;
    }
    case EMBER_REG_FAULT_PC:
      return fin && run->report.fault ? std::uint32_t(run->report.fault->instruction) : 0;
    case EMBER_REG_RING_HEAD:
      return head;
    default:
      return regs[off];
    }
  }
  void write(std::uint32_t off, std::uint32_t v) {
    if (off == EMBER_REG_CTRL && (v & EMBER_REG_CTRL_RESET_MASK)) {
      run.reset();
      return;
    }
    if (off == EMBER_REG_CTRL && (v & EMBER_REG_CTRL_START_MASK)) {
      start();
      return;
    }
    regs[off] = v;
  }
  /// The engine ran the whole job at START; the firmware's wait sees its end at once.
  void idle() {
    if (run)
      clock = run->report.cycles;
  }

  // ---- The control core ----
  void coreLoop();
};

namespace {
thread_local Device::Impl* current = nullptr; // the device whose core runs on this thread
} // namespace

void Device::Impl::coreLoop() {
  current = this;
  std::uint32_t fwHead = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return stop || doorbell != fwHead; });
      if (stop)
        return;
    }
    while (ember_fw_step(&fwHead)) {
    }
  }
}

} // namespace ember::runtime

// The firmware's HAL, on the control core's thread.
using ember::runtime::current;
extern "C" {
std::uint32_t ember_hal_reg_read(std::uint32_t o) {
  return current->read(o);
}
void ember_hal_reg_write(std::uint32_t o, std::uint32_t v) {
  current->write(o, v);
}
std::uint32_t ember_hal_doorbell(void) {
  std::lock_guard<std::mutex> lk(current->mu);
  return current->doorbell;
}
void ember_hal_set_ring_head(std::uint32_t h) {
  {
    std::lock_guard<std::mutex> lk(current->mu);
    if (current->jobReport)
      current->reports[h - 1] = std::move(*current->jobReport);
    current->jobReport.reset();
    current->head = h;
  }
  current->cv.notify_all();
}
void ember_hal_notify_host(void) {
  current->cv.notify_all();
}
void ember_hal_idle(void) {
  current->idle();
}
std::uint8_t* ember_hal_dram(std::uint64_t a, std::uint64_t n) {
  const std::uint64_t size = current->opts.dram_bytes;
  if (a > size || n > size - a)
    return nullptr;
  return current->dram + a;
}
}

namespace ember::runtime {

Device::Device(isa::IsaDescription isa, Options opts)
    : impl_(std::make_unique<Impl>(std::move(isa), std::move(opts))) {
  const std::uint32_t n = impl_->opts.ring_slots;
  if (n == 0 || (n & (n - 1)))
    throw isa::Error("<runtime>", "ring_slots", "must be a power of two, not " + std::to_string(n));
  void* p = mmap(nullptr, impl_->opts.dram_bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw isa::Error("<runtime>", "device DRAM",
                     "cannot reserve " + std::to_string(impl_->opts.dram_bytes) + " bytes");
  impl_->dram = static_cast<std::uint8_t*>(p);
  impl_->regs[EMBER_REG_RING_BASE_LO] = 0;
  impl_->regs[EMBER_REG_RING_BASE_HI] = 0;
  impl_->regs[EMBER_REG_RING_SIZE] = n;
  impl_->core = std::thread([this] { impl_->coreLoop(); });
}

Device::~Device() {
  {
    std::lock_guard<std::mutex> lk(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->core.join();
  munmap(impl_->dram, impl_->opts.dram_bytes);
}

const isa::IsaDescription& Device::isa() const {
  return impl_->isa;
}
std::uint8_t* Device::dram(u64 a, u64 n) {
  if (a > impl_->opts.dram_bytes || n > impl_->opts.dram_bytes - a)
    return nullptr;
  return impl_->dram + a;
}
u64 Device::dramBytes() const {
  return impl_->opts.dram_bytes;
}
std::uint32_t Device::ringSlots() const {
  return impl_->opts.ring_slots;
}
u64 Device::ringBase() const {
  return 0;
}
void Device::ringDoorbell(std::uint32_t tail) {
  {
    std::lock_guard<std::mutex> lk(impl_->mu);
    impl_->doorbell = tail;
  }
  impl_->cv.notify_all();
}
std::uint32_t Device::ringHead() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->head;
}
bool Device::waitHead(std::uint32_t index, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lk(impl_->mu);
  return impl_->cv.wait_for(lk, timeout, [&] { return impl_->head - index - 1 < 0x80000000u; });
}
std::optional<sim::Report> Device::takeReport(std::uint32_t index) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  auto it = impl_->reports.find(index);
  if (it == impl_->reports.end())
    return std::nullopt;
  sim::Report r = std::move(it->second);
  impl_->reports.erase(it);
  return r;
}

} // namespace ember::runtime
