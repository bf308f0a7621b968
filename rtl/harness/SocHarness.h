// Internal: the control core's bus on the Verilated SoC (ember_soc, docs/rtl/npu.md section
// 5.5), one class template over the Verilated model of each description (Vsoc_<name>),
// and the table of those models (written by rtl/CMakeLists.txt into soc_models.cpp).
//
// One platform cycle is one clock of the SoC: the bus request of the cycle and the DRAM
// response due in it are driven, the model is evaluated with the clock low (its
// combinational outputs: the start pulse, the NPU's DRAM request, its retirements, the
// IRQ), then clocked. A register access issued in cycle t is the request of cycle t; its
// answer is registered at the end of t, and the core resumes register_access_cycles
// later, as on the SystemC platform.
#pragma once

#include "ember/isa/error.h"
#include "ember/platform/ControlPlatform.h"
#include "ember/platform/CopyDma.h"
#include "ember/rtl/NpuHarness.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember::rtl::detail {

/// The control core's bus on one SoC model, with the platform's bookkeeping.
class SocBase : public platform::CoreBus {
public:
  virtual ~SocBase() = default;
  virtual std::optional<platform::Report> takeReport() = 0;
  virtual std::uint64_t starts() const = 0;
};

struct SocEntry {
  std::string name;
  std::function<std::uint64_t()> hash; ///< The model's isa_hash_o.
  std::function<std::unique_ptr<SocBase>(const isa::IsaDescription&, std::uint8_t*, std::uint64_t,
                                         platform::JobPrepare)>
      make;
};

const std::vector<SocEntry>& socModels();

/// Offset of register `name` / mask of its field `field` in the description's map.
std::uint32_t socReg(const isa::IsaDescription& d, const char* name);
std::uint32_t socField(const isa::IsaDescription& d, const char* reg, const char* field);

/// Device DRAM as the NPU's DRAM port sees it: window-relative addresses, the job's
/// window at `base`; what lies outside device DRAM reads 0 and is not written.
struct DeviceMem {
  std::uint8_t* dram = nullptr;
  std::uint64_t bytes = 0, base = 0;
  std::vector<std::uint8_t> read(std::uint64_t a, std::uint32_t n) const {
    std::vector<std::uint8_t> v(n, 0);
    for (std::uint32_t i = 0; i < n; ++i)
      if (base + a + i < bytes && base + a + i >= base)
        v[i] = dram[base + a + i];
    return v;
  }
  void write(std::uint64_t a, const std::uint8_t* p, std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i)
      if (base + a + i < bytes && base + a + i >= base)
        dram[base + a + i] = p[i];
  }
};

template <class M> class SocDriver final : public SocBase {
public:
  using u64 = std::uint64_t;
  using u32 = std::uint32_t;

  SocDriver(const isa::IsaDescription& isa, std::uint8_t* dram, u64 dram_bytes,
            platform::JobPrepare prepare)
      : isa_(isa), prepare_(std::move(prepare)), mem_{dram, dram_bytes, 0},
        ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<M>(ctx_.get())),
        port_(isa.hw().dma.latency_cycles), access_(isa.hw().control.register_access_cycles),
        tick_(isa.hw().control.tick_cycles), ctrl_(socReg(isa, "CTRL")),
        start_(socField(isa, "CTRL", "START")), reset_(socField(isa, "CTRL", "RESET")),
        copyCtrl_(socReg(isa, "COPY_CTRL")), copyStart_(socField(isa, "COPY_CTRL", "START")),
        copyCheck_(socField(isa, "COPY_CTRL", "CHECK")),
        copyBusy_(socField(isa, "COPY_STATUS", "BUSY")),
        copyDone_(socField(isa, "COPY_STATUS", "DONE")),
        copyError_(socField(isa, "COPY_STATUS", "ERROR")), copyStatus_(socReg(isa, "COPY_STATUS")),
        copy_(isa) {
    M& t = *top_;
    // Power-on reset (no platform cycles): a falling edge of rst_ni, one clock, release.
    t.clk_i = 0;
    t.rst_ni = 1;
    t.reg_req_i = 0;
    t.reg_we_i = 0;
    t.prog_we_i = 0;
    t.dram_req_ready_i = 1;
    t.dram_rsp_valid_i = 0;
    t.ring_head_i = 0;
    t.budget_i = 0;
    t.copy_busy_i = 0;
    t.copy_done_i = 0;
    t.copy_error_i = 0;
    t.copy_crc_i = 0;
    t.eval();
    t.rst_ni = 0;
    t.eval();
    tick();
    t.rst_ni = 1;
    t.eval();
  }
  ~SocDriver() override { top_->final(); }

  u32 read(u32 off) override {
    if (off == steady_.off && now_ < steady_.until) {
      // COPY_STATUS polled again while the NPU is idle in reset state and the copy DMA's
      // status cannot change yet: the SoC would answer as it did, and nothing in it moves
      // (ember_control's state changes only on start_i or while it runs; the register
      // block answers the same read with the same inputs), so its cycles are not
      // evaluated one by one. The firmware polls so through the constants' copy and the
      // digest check (448,338 platform cycles of MobileNetV3-Small).
      now_ += access_;
      return steady_.value;
    }
    return access(false, off, 0);
  }
  void write(u32 off, u32 v) override { access(true, off, v); }
  void idle() override {
    steady_.off = kNoRegister;
    const u64 next = (now_ / tick_ + 1) * tick_;
    while (!top_->irq_o && now_ < next)
      cycle(false, false, 0, 0);
  }
  u64 now() const override { return now_; }
  void spend(u64 cycles) override {
    steady_.off = kNoRegister;
    u64 i = 0;
    if (quiet()) {
      // The core's own instructions with the NPU idle in reset state and the copy DMA's
      // inputs steady throughout: no input of the SoC changes, so neither does its state
      // (as in read()); the clock moves on. The cycle before the end is clocked, so the
      // model has seen the idle bus (e.g. after a read) before the next access.
      const u64 steadyFor = copy_.statusSteadyUntil(now_) - now_;
      if (cycles > 1 && steadyFor >= cycles) {
        now_ += cycles - 1;
        i = cycles - 1;
      }
    }
    for (; i < cycles; ++i)
      cycle(false, false, 0, 0);
  }
  std::optional<platform::Report> takeReport() override {
    std::optional<platform::Report> r = std::move(handout_);
    handout_.reset();
    return r;
  }
  u64 starts() const override { return starts_; }

private:
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
  }

  /// A register access in cycle now(): the request, its answer, the core's wait.
  u32 access(bool we, u32 off, u32 v) {
    steady_.off = kNoRegister;
    const u64 at = now_;
    if (we && off == ctrl_ && (v & start_) && !(v & reset_) && top_->ready_o)
      load();
    if (we && off == copyCtrl_ && (v & copyStart_)) // the copy DMA, as the SystemC platform's
      copy_.start(now_, mem_.dram, mem_.bytes, top_->copy_src_o, top_->copy_dst_o, top_->copy_len_o,
                  top_->copy_seed_o, (v & copyCheck_) != 0);
    cycle(true, we, off, v);
    const bool err = top_->reg_err_o;
    const u32 data = top_->reg_rdata_o;
    if (we && off == ctrl_ && (v & reset_)) { // the NPU is in reset from the next cycle
      port_.clear();
      rc_.reset();
    }
    if (err)
      throw isa::Error(isa_.file(), "/registers",
                       "the control core " + std::string(we ? "wrote" : "read") + " offset " +
                           std::to_string(off) + ", where the map has no register");
    for (u64 i = 1; i < access_; ++i)
      cycle(false, false, 0, 0);
    if (!we && off == copyStatus_ && quiet())
      steady_ = {off, data, copy_.statusSteadyUntil(at)};
    return data;
  }

  /// No job runs or is collected, the NPU is in reset state and no IRQ is up: the SoC's
  /// state moves only with its inputs (the bus request, the copy DMA's status).
  bool quiet() const { return !rc_ && top_->ready_o && !top_->irq_o; }

  /// The job START is about to start: its instruction words into the instruction buffer
  /// through the prog_* port (a backdoor: no platform cycles; the NPU is idle in reset
  /// state), its cycle budget on budget_i, the host's hook.
  void load() {
    M& t = *top_;
    t.reg_req_i = 0; // no bus request while the buffer loads
    const unsigned W = isa_.instructionBytes();
    const u64 text = t.insn_base_o, n = t.insn_count_o;
    const u64 count = std::min(n, text < mem_.bytes ? (mem_.bytes - text) / W : 0);
    checkInstructionBufferFits(count, "the job");
    platform::Job job;
    job.text.assign(mem_.dram + text, mem_.dram + text + count * W);
    opts_ = platform::Options{};
    if (prepare_)
      prepare_(job, opts_);
    t.budget_i = opts_.cycle_budget ? std::min(opts_.cycle_budget, platform::kMaxCycleBudget)
                                    : platform::defaultCycleBudget(isa_, job);
    t.eval(); // the clock is low since the last cycle: an edge per word from here
    t.prog_we_i = 1;
    for (u64 i = 0; i < count; ++i) {
      t.prog_addr_i = static_cast<u32>(i);
      u32* d = words(t.prog_data_i);
      std::memset(d, 0, sizeof(t.prog_data_i));
      std::memcpy(d, job.text.data() + i * W, W);
      tick();
    }
    t.prog_we_i = 0;
    t.eval();
    mem_.base = t.dram_base_o;
    rc_.emplace(isa_, job.text, job.debug, count, opts_);
    jobStart_ = std::chrono::steady_clock::now();
  }

  /// One platform cycle, with the bus request of the cycle.
  void cycle(bool req, bool we, u32 addr, u32 wdata) {
    M& t = *top_;
    t.reg_req_i = req;
    t.reg_we_i = we;
    t.reg_addr_i = addr;
    t.reg_wdata_i = wdata;
    const u32 cs = copy_.status(now_);
    t.copy_busy_i = (cs & copyBusy_) != 0;
    t.copy_done_i = (cs & copyDone_) != 0;
    t.copy_error_i = (cs & copyError_) != 0;
    t.copy_crc_i = copy_.crc(now_);
    port_.respond(t, now_);
    const u64 c = t.cyc_o;
    t.eval();
    if (t.start_o)
      ++starts_;
    if (rc_ && !t.start_o) {
      if (t.done_o || t.fault_o) {
        rc_->finish(t);
        platform::Report r = std::move(rc_->report);
        r.host_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - jobStart_).count();
        handout_ = std::move(r);
        rc_.reset();
        port_.clear();
        if (overrun_ || conflict_)
          throw std::runtime_error(std::string("the RTL broke its own invariants (") +
                                   (overrun_ ? "a datapath overran its instruction" : "") +
                                   (overrun_ && conflict_ ? ", " : "") +
                                   (conflict_ ? "both DMAs drove the DRAM port" : "") +
                                   "): a bug of rtl/");
      } else {
        overrun_ = overrun_ || t.overrun_o;
        conflict_ = conflict_ || t.dram_conflict_o;
        port_.request(t, now_, mem_);
        rc_->retirements(t, c);
      }
    }
    // The rising edge. The outputs read between cycles (irq_o, ready_o, the register
    // block's answer, the registers) depend on state only.
    t.clk_i = 1;
    t.eval();
    t.clk_i = 0;
    ++now_;
  }

  const isa::IsaDescription& isa_;
  platform::JobPrepare prepare_;
  DeviceMem mem_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<M> top_;
  DramPort port_;
  const u64 access_, tick_;
  const u32 ctrl_, start_, reset_;
  const u32 copyCtrl_, copyStart_, copyCheck_, copyBusy_, copyDone_, copyError_;
  const u32 copyStatus_;
  platform::CopyDma copy_; ///< The copy DMA behind COPY_* (platform/CopyDma.h).
  static constexpr u32 kNoRegister = ~u32(0);
  /// The last read of COPY_STATUS with the NPU idle (read()), kNoRegister after any other
  /// access: its answer and the first cycle in which the answer may differ.
  struct Steady {
    u32 off = kNoRegister, value = 0;
    u64 until = 0;
  } steady_;
  u64 now_ = 0, starts_ = 0;
  platform::Options opts_;                  ///< Of the running job (the collector reads it).
  std::optional<ReportCollector> rc_;       ///< While a job runs.
  std::optional<platform::Report> handout_; ///< The last ended job's report, until taken.
  std::chrono::steady_clock::time_point jobStart_;
  bool overrun_ = false, conflict_ = false;
};

} // namespace ember::rtl::detail
