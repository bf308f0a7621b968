// The runtime's NPU device: device DRAM (a virtual reservation: only touched pages cost
// memory; ember/support/LargeBuffer.h) and the platform of the description
// (ember/sim/Platform.h: the SystemC one, or another from Options::platform, such as the
// Verilated RTL's SoC): its control core runs the firmware (the build of this description,
// FirmwareTable.h), whose HAL (ember_hal_*) reaches the NPU's registers through the platform's
// TLM-2.0 bus. A host thread wakes the core on the doorbell.
#include "ember/runtime/Runtime.h"

#include "FirmwareTable.h"
#include "ember/isa/error.h"
#include "ember/isa/registers.h"
#include "ember/support/Error.h"
#include "ember/support/LargeBuffer.h"
#include "ember_ring.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace ember::runtime {

using u64 = std::uint64_t;

namespace {
std::uint32_t regOffset(const isa::IsaDescription& d, const char* name) {
  return isa::registerOffset(d, name, "the runtime");
}
std::uint32_t fieldMask(const isa::IsaDescription& d, const char* reg, const char* field) {
  return isa::registerFieldMask(d, reg, field, "the runtime");
}

const detail::Firmware* firmwareFor(const isa::IsaDescription& d) {
  for (const auto& f : detail::firmwares())
    if (std::memcmp(f.isa_hash(), d.hash().data(), 32) == 0)
      return &f;
  return nullptr;
}
} // namespace

bool firmwareSupports(const isa::IsaDescription& d) {
  return firmwareFor(d) != nullptr;
}

struct Device::Impl {
  isa::IsaDescription isa;
  Options opts;
  /// Device DRAM: reserved, touched pages only, huge pages where the host has them (the
  /// binary and the window's constants, tens of MiB, are written at every job).
  LargeBuffer memory;
  std::uint8_t* dram = nullptr;
  const detail::Firmware* fw = nullptr; ///< The firmware build of this description.
  std::unique_ptr<platform::ControlPlatform> platform;
  platform::CoreBus* bus = nullptr;                  ///< While the control core runs.
  std::optional<platform::Report> jobReport;         ///< Of the job the core is running.
  std::map<std::uint32_t, platform::Report> reports; ///< By ring index, until taken.
  std::map<std::uint32_t, std::uint64_t> jobCycles;  ///< Platform cycles, by ring index.
  std::uint64_t stepStart = 0;                       ///< Platform cycle the core took a job.
  // The ring, host and core sides.
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  std::uint32_t doorbell = 0, head = 0;
  bool stop = false;
  std::thread core;

  Impl(isa::IsaDescription d, Options o)
      : isa(std::move(d)), opts(std::move(o)), ringHead(regOffset(isa, "RING_HEAD")),
        status(regOffset(isa, "STATUS")),
        ended(fieldMask(isa, "STATUS", "DONE") | fieldMask(isa, "STATUS", "FAULT")) {}
  const std::uint32_t ringHead, status, ended; ///< Offsets, and STATUS's DONE | FAULT.

  // ---- The NPU's registers, through the platform's bus ----
  std::uint32_t read(std::uint32_t off) {
    if (off == ringHead) // the core's own view of its head
      return head;
    const std::uint32_t v = bus->read(off);
    if (off == status && (v & ended))
      if (auto r = platform->takeReport()) {
        std::lock_guard<std::mutex> lk(mu);
        jobReport = std::move(r);
      }
    return v;
  }
  void write(std::uint32_t off, std::uint32_t v) { bus->write(off, v); }
  void idle() { bus->idle(); }

  // ---- The control core ----
  void coreLoop();
};

namespace {
thread_local Device::Impl* current = nullptr; // the device whose core runs on this thread
} // namespace

void Device::Impl::coreLoop() {
  std::uint32_t fwHead = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return stop || doorbell != fwHead; });
      if (stop)
        return;
    }
    // The core wakes on the doorbell and runs until the ring is empty; the platform's
    // simulation lasts as long (its clock stands still while the core sleeps).
    platform->run([&](platform::CoreBus& b) {
      current = this;
      bus = &b;
      for (;;) {
        stepStart = b.now();
        if (!fw->step(&fwHead))
          break;
      }
      bus = nullptr;
    });
  }
}

} // namespace ember::runtime

// The firmware's HAL (every build's, FirmwareTable.h), on the control core's thread.
namespace ember::runtime::hal {
std::uint32_t regRead(std::uint32_t o) {
  return current->read(o);
}
void regWrite(std::uint32_t o, std::uint32_t v) {
  current->write(o, v);
}
std::uint32_t doorbell() {
  std::lock_guard<std::mutex> lk(current->mu);
  return current->doorbell;
}
void setRingHead(std::uint32_t h) {
  {
    std::lock_guard<std::mutex> lk(current->mu);
    if (current->jobReport)
      current->reports[h - 1] = std::move(*current->jobReport);
    current->jobReport.reset();
    current->jobCycles[h - 1] = current->bus->now() - current->stepStart;
    current->head = h;
  }
  current->cv.notify_all();
}
void notifyHost() {
  current->cv.notify_all();
}
void idle() {
  current->idle();
}
void spend(std::uint64_t cycles) {
  current->bus->spend(cycles);
}
std::uint8_t* dram(std::uint64_t a, std::uint64_t n) {
  const std::uint64_t size = current->opts.dram_bytes;
  if (a > size || n > size - a)
    return nullptr;
  return current->dram + a;
}
} // namespace ember::runtime::hal

namespace ember::runtime {

Device::Device(isa::IsaDescription isa, Options opts)
    : impl_(std::make_unique<Impl>(std::move(isa), std::move(opts))) {
  impl_->fw = firmwareFor(impl_->isa);
  if (!impl_->fw)
    throw isa::Error("<runtime>", impl_->isa.name(),
                     "this build has no firmware for this description (docs/firmware.md "
                     "section 5): its jobs cannot go through a job ring");
  const std::uint32_t n = impl_->opts.ring_slots;
  if (n == 0 || (n & (n - 1)))
    throw isa::Error("<runtime>", "ring_slots", "must be a power of two, not " + std::to_string(n));
  try {
    impl_->memory = LargeBuffer(impl_->opts.dram_bytes, "device DRAM");
    if (!impl_->memory.data())
      throw ember::Error("device DRAM", "no bytes");
  } catch (const ember::Error&) {
    throw isa::Error("<runtime>", "device DRAM",
                     "cannot reserve " + std::to_string(impl_->opts.dram_bytes) + " bytes");
  }
  impl_->dram = impl_->memory.data();
  if (impl_->opts.platform)
    impl_->platform =
        impl_->opts.platform(impl_->isa, impl_->dram, impl_->opts.dram_bytes, impl_->opts.prepare);
  else
    impl_->platform = std::make_unique<sim::Platform>(
        impl_->isa, impl_->dram, impl_->opts.dram_bytes, impl_->opts.engine, impl_->opts.prepare);
  // The host's set-up of the ring registers, before the core first runs.
  impl_->platform->run([&](platform::CoreBus& b) {
    b.write(regOffset(impl_->isa, "RING_BASE_LO"), 0);
    b.write(regOffset(impl_->isa, "RING_BASE_HI"), 0);
    b.write(regOffset(impl_->isa, "RING_SIZE"), n);
  });
  impl_->core = std::thread([this] { impl_->coreLoop(); });
}

Device::~Device() {
  {
    std::lock_guard<std::mutex> lk(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->core.join();
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
void Device::zero(u64 a, u64 n) {
  std::uint8_t* p = dram(a, n);
  if (!p || n == 0)
    return;
  const u64 page = u64(sysconf(_SC_PAGESIZE));
  const u64 lo = (a + page - 1) / page * page, hi = (a + n) / page * page;
  if (hi <= lo) {
    std::memset(p, 0, n);
    return;
  }
  std::memset(p, 0, lo - a);
  madvise(impl_->dram + lo, hi - lo, MADV_DONTNEED); // private anonymous: reads 0 again
  std::memset(impl_->dram + hi, 0, a + n - hi);
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
std::optional<std::uint64_t> Device::takeJobCycles(std::uint32_t index) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  auto it = impl_->jobCycles.find(index);
  if (it == impl_->jobCycles.end())
    return std::nullopt;
  const std::uint64_t c = it->second;
  impl_->jobCycles.erase(it);
  return c;
}
std::optional<platform::Report> Device::takeReport(std::uint32_t index) {
  std::lock_guard<std::mutex> lk(impl_->mu);
  auto it = impl_->reports.find(index);
  if (it == impl_->reports.end())
    return std::nullopt;
  platform::Report r = std::move(it->second);
  impl_->reports.erase(it);
  return r;
}

} // namespace ember::runtime
