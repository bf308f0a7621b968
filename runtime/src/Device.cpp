// The runtime's NPU device: device DRAM (a virtual reservation: only touched pages cost
// memory), the register block of the description's register map, the NPU engine behind
// it, and the control core: a thread running the firmware (ember_fw_host) whose HAL
// (ember_hal_*) reaches this device.
#include "ember/runtime/Runtime.h"

#include "ember/runtime/NpuRegisters.h"

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


bool firmwareSupports(const isa::IsaDescription& d) {
  return std::memcmp(ember_fw_isa_hash(), d.hash().data(), 32) == 0;
}

struct Device::Impl {
  isa::IsaDescription isa;
  Options opts;
  std::uint8_t* dram = nullptr;
  std::unique_ptr<NpuRegisters> npu;
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
  std::uint32_t read(std::uint32_t off) {
    if (off == EMBER_REG_RING_HEAD)
      return head;
    const std::uint32_t v = npu->read(off);
    if (off == EMBER_REG_STATUS)
      if (auto r = npu->takeReport()) {
        std::lock_guard<std::mutex> lk(mu);
        jobReport = std::move(r);
      }
    return v;
  }
  void write(std::uint32_t off, std::uint32_t v) { npu->write(off, v); }
  /// The engine ran the whole job at START; the firmware's wait sees its end at once.
  void idle() { npu->advance(UINT64_MAX); }

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
  impl_->npu = std::make_unique<NpuRegisters>(impl_->isa, impl_->opts.engine, impl_->dram,
                                              impl_->opts.dram_bytes);
  impl_->npu->write(EMBER_REG_RING_BASE_LO, 0);
  impl_->npu->write(EMBER_REG_RING_BASE_HI, 0);
  impl_->npu->write(EMBER_REG_RING_SIZE, n);
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
