// The platform of Platform.h: the control core (a SystemC thread running the caller's
// program, a TLM-2.0 initiator), the NPU block (a TLM-2.0 target holding the register
// map of the description, and the thread that runs the jobs CTRL.START starts) and the
// platform clock that carries over from one simulation to the next.
#include "ember/sim/Platform.h"

#include "Context.h"
#include "Machine.h"
#include "Npu.h"
#include "Run.h"
#include "ember/isa/error.h"
#include "ember/isa/registers.h"
#include "ember/platform/CopyDma.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <sys/mman.h>
#include <unistd.h>

#include "PlatformTypes.h"
#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::sim {

using u64 = std::uint64_t;
using u32 = std::uint32_t;

namespace {

/// The registers the platform gives a meaning to, found by name in the description's
/// map (docs/firmware.md section 6); every other register is plain storage.
struct RegMap {
  explicit RegMap(const isa::IsaDescription& isa) : isa_(isa) {
    ctrl = off("CTRL");
    start = mask("CTRL", "START");
    reset = mask("CTRL", "RESET");
    irqEn = mask("CTRL", "IRQ_EN");
    status = off("STATUS");
    busy = mask("STATUS", "BUSY");
    done = mask("STATUS", "DONE");
    fault = mask("STATUS", "FAULT");
    engineBusy[0] = mask("STATUS", "LOAD_BUSY");
    engineBusy[1] = mask("STATUS", "COMPUTE_BUSY");
    engineBusy[2] = mask("STATUS", "STORE_BUSY");
    irqStatus = off("IRQ_STATUS");
    irqDone = mask("IRQ_STATUS", "DONE");
    irqFault = mask("IRQ_STATUS", "FAULT");
    faultCode = off("FAULT_CODE");
    codeLsb = field("FAULT_CODE", "CODE").lsb;
    engineLsb = field("FAULT_CODE", "ENGINE").lsb;
    faultPc = off("FAULT_PC");
    insn[0] = off("INSN_BASE_LO");
    insn[1] = off("INSN_BASE_HI");
    insnCount = off("INSN_COUNT");
    dramBase[0] = off("DRAM_BASE_LO");
    dramBase[1] = off("DRAM_BASE_HI");
    dramSize[0] = off("DRAM_SIZE_LO");
    dramSize[1] = off("DRAM_SIZE_HI");
    cycles[0] = off("CYCLES_LO");
    cycles[1] = off("CYCLES_HI");
    macs[0] = off("MACS_LO");
    macs[1] = off("MACS_HI");
    busyCycles[0] = off("LOAD_BUSY_CYCLES");
    busyCycles[1] = off("COMPUTE_BUSY_CYCLES");
    busyCycles[2] = off("STORE_BUSY_CYCLES");
    hash[0] = off("ISA_HASH_LO");
    hash[1] = off("ISA_HASH_HI");
    copySrc[0] = off("COPY_SRC_LO");
    copySrc[1] = off("COPY_SRC_HI");
    copyDst[0] = off("COPY_DST_LO");
    copyDst[1] = off("COPY_DST_HI");
    copyLen = off("COPY_LEN");
    copySeed = off("COPY_SEED");
    copyCtrl = off("COPY_CTRL");
    copyStart = mask("COPY_CTRL", "START");
    copyCheck = mask("COPY_CTRL", "CHECK");
    copyStatus = off("COPY_STATUS");
    copyCrc = off("COPY_CRC");
  }

  u32 ctrl, start, reset, irqEn, status, busy, done, fault, engineBusy[3], irqStatus, irqDone,
      irqFault, faultCode, codeLsb, engineLsb, faultPc, insn[2], insnCount, dramBase[2],
      dramSize[2], cycles[2], macs[2], busyCycles[3], hash[2];
  u32 copySrc[2], copyDst[2], copyLen, copySeed, copyCtrl, copyStart, copyCheck, copyStatus,
      copyCrc; ///< The copy DMA's (platform/CopyDma.h).

private:
  static constexpr const char* kUser = "the platform (docs/firmware.md section 6)";
  u32 off(const char* name) const { return isa::registerOffset(isa_, name, kUser); }
  isa::BitRange field(const char* r, const char* f) const {
    return isa::registerField(isa_, r, f, kUser);
  }
  u32 mask(const char* r, const char* f) const { return isa::registerFieldMask(isa_, r, f, kUser); }
  const isa::IsaDescription& isa_;
};

/// Simulation time of one NPU cycle (the cycle engine's unit). SystemC fixes its time
/// resolution when the first sc_time is made, once per process.
u64 unit() {
  static const u64 u = sc_core::sc_time(1, sc_core::SC_NS).value();
  return u;
}
sc_core::sc_time cyclesTime(u64 n) {
  return sc_core::sc_time::from_value(n * unit());
}

/// The register map's storage by offset, in a flat table (the description's offsets are
/// word-aligned and below 1 MiB): the firmware polls COPY_STATUS and STATUS hundreds of
/// thousands of times a job, each read a lookup (a std::map's was most of a poll's cost).
class RegisterFile {
public:
  enum class Access : std::uint8_t { None, ReadWrite, ReadOnly, WriteOnly };
  void define(u32 off, u32 reset, Access a) {
    if (off / 4 >= access_.size()) {
      access_.resize(off / 4 + 1, Access::None);
      values_.resize(off / 4 + 1, 0);
    }
    access_[off / 4] = a;
    values_[off / 4] = reset;
  }
  /// Whether a register of the map sits at byte offset `off`.
  bool has(u64 off) const {
    return off % 4 == 0 && off / 4 < access_.size() && access_[off / 4] != Access::None;
  }
  Access access(u32 off) const { return has(off) ? access_[off / 4] : Access::None; }
  /// The stored value of the register at `off`; std::out_of_range where the map has none.
  u32 at(u32 off) const {
    if (!has(off))
      throw std::out_of_range("no register at offset " + std::to_string(off));
    return values_[off / 4];
  }
  u32& at(u32 off) {
    if (!has(off))
      throw std::out_of_range("no register at offset " + std::to_string(off));
    return values_[off / 4];
  }

private:
  std::vector<Access> access_;
  std::vector<u32> values_;
};

} // namespace

struct Platform::Impl {
  Impl(isa::IsaDescription d, std::uint8_t* m, u64 n, JobEngine e, JobPrepare pr)
      : isa(std::move(d)), map(isa), sim(isa), dram(m), dramBytes(n), engine(std::move(e)),
        prepare(std::move(pr)), copy(isa) {
    using Access = RegisterFile::Access;
    for (const auto& r : isa.registers())
      regs.define(r.offset, r.reset,
                  r.access == "ro"   ? Access::ReadOnly
                  : r.access == "wo" ? Access::WriteOnly
                                     : Access::ReadWrite);
    regs.at(map.hash[0]) = isa::isaHashWord(isa, 0);
    regs.at(map.hash[1]) = isa::isaHashWord(isa, 1);
  }

  isa::IsaDescription isa;
  RegMap map;
  Simulator sim; ///< Its shape checks and default cycle budget.
  std::uint8_t* dram;
  u64 dramBytes;
  JobEngine engine;
  JobPrepare prepare;
  platform::CopyDma copy; ///< The copy DMA behind the COPY_* registers.
  RegisterFile regs;      ///< Every register of the map; the live ones are computed.
  enum class State { Idle, Running, Done, Fault } state = State::Idle;
  u64 clockBase = 0; ///< Platform cycles simulated before the current simulation.
  u64 jobStart = 0;  ///< Platform cycle of the running job's cycle 0.
  std::optional<Report> last, handout;
  u64 starts = 0;
  u32 irqStatus = 0;
  std::optional<u64> resetAt; ///< Platform cycle of the last RESET write.

  /// The job in the registers: its text and the resident pages of its window.
  Job jobFromRegisters(u64& window, u64& windowSize) const;
  void writeBack(const DramImage& img, u64 window, u64 windowSize) const;
};

Job Platform::Impl::jobFromRegisters(u64& window, u64& windowSize) const {
  auto reg64 = [&](const u32(&o)[2]) { return u64(regs.at(o[0])) | u64(regs.at(o[1])) << 32; };
  const u64 text = reg64(map.insn), n = regs.at(map.insnCount);
  window = std::min(reg64(map.dramBase), dramBytes);
  windowSize = std::min(reg64(map.dramSize), dramBytes - window);
  // The firmware validated both ranges; registers written otherwise are clamped to DRAM.
  const u64 W = isa.instructionBytes();
  const u64 count = std::min(n, text < dramBytes ? (dramBytes - text) / W : 0);
  Job job;
  job.text.assign(dram + text, dram + text + count * W);
  // Only pages the host or the NPU touched are resident: the image views those where
  // they are (no copy: the engine's first write to a page copies it, writeBack returns
  // it); a page of the image that the window's end cuts is copied.
  const u64 page = u64(sysconf(_SC_PAGESIZE)), P = DramImage::kPageBytes;
  const u64 first = window / page * page;
  std::vector<unsigned char> resident((window + windowSize - first + page - 1) / page);
  if (!resident.empty() && mincore(dram + first, window + windowSize - first, resident.data()) != 0)
    resident.assign(resident.size(), 1);
  for (u64 at = 0; at < windowSize; at += P) {
    const u64 lo = window + at, hi = std::min(window + windowSize, lo + P);
    bool touched = false;
    for (u64 a = lo / page * page; a < hi && !touched; a += page)
      touched = resident[(a - first) / page] & 1;
    if (!touched)
      continue;
    if (hi - lo == P)
      job.dram.view(at, dram + lo, P);
    else
      job.dram.write(at, dram + lo, hi - lo);
  }
  return job;
}

void Platform::Impl::writeBack(const DramImage& img, u64 window, u64 windowSize) const {
  img.forEachPage([&](u64 addr, const std::uint8_t* bytes, u64 n) {
    // A page still viewing the window is the window's own bytes: nothing to copy.
    if (addr < windowSize && bytes != dram + window + addr)
      std::memcpy(dram + window + addr, bytes, std::min(n, windowSize - addr));
  });
}

namespace {

using State = Platform::Impl::State;

/// The NPU as the bus sees it: the register block (a TLM-2.0 target) and the thread that
/// runs each job CTRL.START starts, live (the cycle engine) or played back (an engine
/// that ran it at once).
class NpuBlock : public sc_core::sc_module {
public:
  SC_HAS_PROCESS(NpuBlock);
  tlm_utils::simple_target_socket<NpuBlock> socket;
  sc_core::sc_event irq; ///< The IRQ line rose.

  NpuBlock(sc_core::sc_module_name name, Platform::Impl& p) : sc_module(name), p_(p) {
    socket.register_b_transport(this, &NpuBlock::transport);
    SC_THREAD(jobLoop);
  }
  /// The IRQ line: an enabled cause is pending.
  bool irqLine() {
    settle();
    return (p_.regs.at(p_.map.ctrl) & p_.map.irqEn) &&
           (p_.irqStatus & (p_.map.irqDone | p_.map.irqFault));
  }
  /// Whether a read of register `off` may run ahead of the kernel's clock (ControlCore's
  /// local time): COPY_STATUS while no job runs or starts. Its value is then a function
  /// of the read's cycle alone, and no other process of the platform can run before the
  /// core's next access that waits, so the firmware's poll of a copy costs no SystemC
  /// context switch per read and every read still sees its own cycle's value.
  bool readsAhead(u32 off) const {
    return off == p_.map.copyStatus && p_.state != State::Running && !startPending_;
  }
  /// For a read ahead of register `off` in platform cycle `cycle`: the first cycle in
  /// which another such read may answer differently (no write or other process running in
  /// between, as while the core runs ahead).
  u64 steadyUntil(u32 off, u64 cycle) const {
    return off == p_.map.copyStatus ? p_.copy.statusSteadyUntil(cycle) : cycle;
  }
  /// Ends the job loop (and a running job) so the simulation can end.
  void shutdown() {
    shutdown_ = true;
    stopJob();
    startEv_.notify(sc_core::SC_ZERO_TIME);
  }
  std::exception_ptr error; ///< What an engine threw.

private:
  /// The platform cycle of the transaction being served (the kernel's time plus its
  /// annotated delay, TLM-2.0 loosely timed), else of the kernel.
  u64 clock() const { return p_.clockBase + (sc_core::sc_time_stamp().value() + ahead_) / unit(); }
  void stopJob() {
    if (p_.state == State::Running) {
      abort_.requested = true;
      abort_.event.notify(sc_core::SC_ZERO_TIME);
    }
  }

  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    const u64 a = t.get_address();
    if (t.get_data_length() != 4 || !p_.regs.has(a)) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    u32 v = 0;
    ahead_ = delay.value(); // the transaction's cycle: the caller's local time
    if (t.is_read()) {
      v = read(u32(a));
      std::memcpy(t.get_data_ptr(), &v, 4);
    } else {
      std::memcpy(&v, t.get_data_ptr(), 4);
      write(u32(a), v);
    }
    ahead_ = 0;
    delay += cyclesTime(p_.isa.hw().control.register_access_cycles);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  u32 read(u32 off) {
    settle();
    const RegMap& m = p_.map;
    const bool running = p_.state == State::Running,
               ended = p_.last && !running && p_.state != State::Idle;
    auto half = [](u64 v, bool hi) { return u32(hi ? v >> 32 : v); };
    if (off == m.status) {
      if (running) // the per-engine busy bits read 0, as on the RTL's register port
        return m.busy;
      return p_.state == State::Done ? m.done : p_.state == State::Fault ? m.fault : 0;
    }
    if (off == m.cycles[0] || off == m.cycles[1]) {
      const u64 now = clock();
      const u64 c = running ? (now > p_.jobStart ? now - p_.jobStart : 0)
                    : ended ? p_.last->cycles
                            : 0;
      return half(c, off == m.cycles[1]);
    }
    if (off == m.macs[0] || off == m.macs[1]) {
      const u64 c = running && live_    ? live_->meter.macs
                    : running && ended_ ? ended_->report.macs
                    : ended             ? p_.last->macs
                                        : 0;
      return half(c, off == m.macs[1]);
    }
    for (int e = 0; e < 3; ++e)
      if (off == m.busyCycles[e])
        return u32(running && live_ ? live_->busy[std::size_t(e)]
                   : running && ended_ && ended_->report.engines.size() == 3
                       ? ended_->report.engines[std::size_t(e)].busy
                   : ended && p_.last->engines.size() == 3 ? p_.last->engines[std::size_t(e)].busy
                                                           : 0);
    if (off == m.irqStatus)
      return p_.irqStatus;
    if (off == m.copyStatus)
      return p_.copy.status(clock());
    if (off == m.copyCrc)
      return p_.copy.crc(clock());
    if (off == m.faultCode || off == m.faultPc) {
      if (p_.state != State::Fault)
        return 0;
      const Fault& f = *p_.last->fault;
      if (off == m.faultPc)
        return u32(f.instruction);
      const u32 e = f.engine == "load"      ? 0
                    : f.engine == "compute" ? 1
                    : f.engine == "store"   ? 2
                                            : 3;
      return (u32(f.kind) + 1) << m.codeLsb | e << m.engineLsb; // CODE: 1 + the fault kind
    }
    // As the generated register block: write-only registers read 0.
    return p_.regs.access(off) == RegisterFile::Access::WriteOnly ? 0 : p_.regs.at(off);
  }

  void write(u32 off, u32 v) {
    settle();
    const RegMap& m = p_.map;
    if (off == m.irqStatus) { // write 1 to clear
      p_.irqStatus &= ~v;
      return;
    }
    if (p_.regs.access(off) == RegisterFile::Access::ReadOnly)
      return;
    p_.regs.at(off) = v; // CTRL too is stored as written; START and RESET act on the write
    if (off == m.copyCtrl && (v & m.copyStart)) {
      auto reg64 = [&](const u32(&o)[2]) {
        return u64(p_.regs.at(o[0])) | u64(p_.regs.at(o[1])) << 32;
      };
      p_.copy.start(clock(), p_.dram, p_.dramBytes, reg64(m.copySrc), reg64(m.copyDst),
                    p_.regs.at(m.copyLen), p_.regs.at(m.copySeed), (v & m.copyCheck) != 0);
    }
    if (off != m.ctrl)
      return;
    if (v & m.reset) {
      stopJob();
      p_.state = State::Idle;
      p_.resetAt = clock();
      return;
    }
    // START acts on an NPU in reset state (after RESET or power-on) that is not held in
    // reset: the RTL holds its NPU in reset in the cycle after a RESET write.
    if ((v & m.start) && p_.state == State::Idle && !(p_.resetAt && clock() == *p_.resetAt + 1)) {
      p_.state = State::Running;
      // The NPU samples START at the end of the write's cycle: its cycle 0 is the next.
      p_.jobStart = clock() + 1;
      ++p_.starts;
      startPending_ = true;
      startEv_.notify(cyclesTime(1));
    }
  }

  void jobLoop() {
    for (;;) {
      while (!startPending_ && !shutdown_)
        sc_core::wait(startEv_);
      if (shutdown_)
        return;
      startPending_ = false;
      abort_.requested = false;
      try {
        runJob();
      } catch (...) {
        error = std::current_exception();
        sc_core::sc_stop();
        return;
      }
    }
  }

  /// Waits until the cycle at which a job that signals its end in its cycle `last` shows
  /// DONE or FAULT: the next one (the NPU registers its end), or an abort; false on an
  /// abort. A job that ends DONE signals in its last cycle (its report's cycles), a fault
  /// in its signal_cycle.
  bool until(Report r, DramImage out, u64 window, u64 windowSize) {
    const u64 last = r.fault ? r.fault->signal_cycle : r.cycles;
    const u64 now = clock() - p_.jobStart, end = last + 1;
    ended_ = Ended{p_.jobStart + end, std::move(r), std::move(out), window, windowSize};
    if (!abort_.requested && end > now)
      sc_core::wait(cyclesTime(end - now), abort_.event);
    if (abort_.requested) {
      ended_.reset();
      return false;
    }
    settle();
    return true;
  }

  /// Applies the end of the job once its cycle has come: a register access in that
  /// cycle sees DONE or FAULT whatever the order of SystemC processes in it (the RTL's
  /// registers show the end from the start of the cycle).
  void settle() {
    if (!ended_ || clock() < ended_->at || p_.state != State::Running)
      return;
    Ended e = std::move(*ended_);
    ended_.reset();
    if (!e.report.fault)
      p_.writeBack(e.out, e.window, e.windowSize);
    p_.state = e.report.fault ? State::Fault : State::Done;
    p_.irqStatus |= e.report.fault ? p_.map.irqFault : p_.map.irqDone;
    // The registers read `last` (cycles, MACs, busy cycles, the fault): it keeps the
    // figures without the per-instruction slices, which go out with the handed-out report.
    std::vector<Slice> slices = std::move(e.report.slices);
    p_.last = e.report;
    e.report.slices = std::move(slices);
    p_.handout = std::move(e.report);
    if ((p_.regs.at(p_.map.ctrl) & p_.map.irqEn))
      irq.notify(sc_core::SC_ZERO_TIME);
  }

  void runJob() {
    u64 window = 0, windowSize = 0;
    Job job = p_.jobFromRegisters(window, windowSize);
    Options o;
    if (p_.prepare)
      p_.prepare(job, o);
    o.dram_window_bytes = windowSize;
    const auto t0 = std::chrono::steady_clock::now();
    if (p_.engine) {
      Result res = p_.engine(p_.isa, job, o);
      until(std::move(res.report), std::move(res.dram), window, windowSize);
    } else {
      detail::RunState st(p_.isa, job);
      if (o.record_slices) // one per retired instruction: no reallocation while it runs
        st.slices.reserve(std::size_t(st.instructions));
      detail::Machine machine(p_.isa, job.dram,
                              windowSize ? windowSize : p_.isa.hw().dram.size_bytes);
      const u64 budget = o.cycle_budget ? std::min(o.cycle_budget, kMaxCycleBudget)
                                        : platform::defaultCycleBudget(p_.sim.isa(), job);
      detail::Npu npu(p_.isa, job, o, budget, machine, st, &abort_);
      live_ = &st;
      try {
        npu.run();
      } catch (const std::exception& ex) {
        if (!st.fault)
          st.fault = Fault{FaultKind::BadOperand,
                           npu.now(),
                           "npu",
                           -1,
                           std::string("internal error: ") + ex.what(),
                           npu.now()};
      }
      live_ = nullptr;
      if (npu.aborted())
        return;
      if (st.fault)
        st.last_cycle = std::max(st.last_cycle, st.fault->cycle);
      const double host =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      until(st.finish(p_.isa, host), machine.dram().takeImage(), window, windowSize);
    }
  }

  Platform::Impl& p_;
  detail::AbortSignal abort_;
  sc_core::sc_event startEv_;
  bool startPending_ = false, shutdown_ = false;
  /// A job whose end is decided and shows at platform cycle `at`.
  struct Ended {
    u64 at;
    Report report;
    DramImage out;
    u64 window, windowSize;
  };
  std::optional<Ended> ended_;
  const detail::RunState* live_ = nullptr; ///< The live engine's counters.
  u64 ahead_ = 0; ///< Annotated delay (SystemC time units) of the transaction being served.
};

/// The control core: the caller's program on a SystemC thread, a TLM-2.0 initiator.
class ControlCore : public sc_core::sc_module, public CoreBus {
public:
  SC_HAS_PROCESS(ControlCore);
  tlm_utils::simple_initiator_socket<ControlCore> socket;

  ControlCore(sc_core::sc_module_name name, Platform::Impl& p,
              const std::function<void(CoreBus&)>& program, NpuBlock& npu)
      : sc_module(name), p_(p), program_(program), npu_(npu) {
    SC_THREAD(main);
  }
  std::exception_ptr error; ///< What the program threw.

  std::uint32_t read(std::uint32_t off) override {
    if (off == steady_.off && steady_.next < steady_.until) {
      // The register read ahead again in a cycle before its value can change: access()
      // would answer the same and move the core's local time on by one access (some
      // 600,000 polls of COPY_STATUS while ResNet-50's constants are copied and checked).
      steady_.next += steady_.cycles;
      local_ += steady_.time;
      return steady_.value;
    }
    return access(tlm::TLM_READ_COMMAND, off, 0);
  }
  void write(std::uint32_t off, std::uint32_t v) override {
    access(tlm::TLM_WRITE_COMMAND, off, v);
  }
  void idle() override {
    steady_.off = kNoRegister;
    sync();
    if (npu_.irqLine())
      return; // a pending interrupt: the core does not sleep
    const u64 tick = p_.isa.hw().control.tick_cycles, now = this->now();
    sc_core::wait(cyclesTime((now / tick + 1) * tick - now), npu_.irq);
  }
  std::uint64_t now() const override {
    return p_.clockBase + (sc_core::sc_time_stamp() + local_).value() / unit();
  }
  void spend(std::uint64_t cycles) override {
    steady_.off = kNoRegister;
    sync();
    if (cycles)
      sc_core::wait(cyclesTime(cycles));
  }

private:
  void main() {
    try {
      program_(*this);
    } catch (...) {
      error = std::current_exception();
    }
    sync();
    npu_.shutdown();
  }
  /// Waits out the core's local time (the reads it ran ahead, NpuBlock::readsAhead): the
  /// kernel's clock is then where it would be had the core waited after each of them.
  void sync() {
    if (local_ != sc_core::SC_ZERO_TIME)
      sc_core::wait(local_);
    local_ = sc_core::SC_ZERO_TIME;
  }
  u32 access(tlm::tlm_command cmd, u32 off, u32 v) {
    steady_.off = kNoRegister;
    const bool ahead = cmd == tlm::TLM_READ_COMMAND && npu_.readsAhead(off);
    if (!ahead)
      sync();
    const u64 cycle = now();                // of this access
    tlm::tlm_generic_payload& t = payload_; // reused: a payload allocates its extensions
    std::uint8_t data[4];
    std::memcpy(data, &v, 4);
    t.set_command(cmd);
    t.set_address(off);
    t.set_data_ptr(data);
    t.set_data_length(4);
    t.set_streaming_width(4);
    t.set_byte_enable_ptr(nullptr);
    t.set_dmi_allowed(false);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = local_; // 0 unless the core runs ahead
    socket->b_transport(t, delay);
    if (t.is_response_error())
      throw isa::Error(p_.isa.file(), "/registers",
                       "the control core " +
                           std::string(cmd == tlm::TLM_READ_COMMAND ? "read" : "wrote") +
                           " offset " + std::to_string(off) + ", where the map has no register");
    std::memcpy(&v, data, 4);
    if (ahead) {
      // Waited at the next access that does not run ahead; until then the same read is
      // answered in read() while its value cannot change.
      const u64 step = (delay - local_).value() / unit();
      local_ = delay;
      steady_ = {off, v, cycle + step, npu_.steadyUntil(off, cycle), step, cyclesTime(step)};
    } else {
      sc_core::wait(delay); // the core waits for its bus transaction
    }
    return v;
  }

  Platform::Impl& p_;
  const std::function<void(CoreBus&)>& program_;
  NpuBlock& npu_;
  /// Time the core has run ahead of the kernel's clock (reads NpuBlock::readsAhead).
  sc_core::sc_time local_ = sc_core::SC_ZERO_TIME;
  static constexpr u32 kNoRegister = ~u32(0);
  /// The last register read ahead (`off`, kNoRegister after any other access or wait):
  /// its `value`, the cycle of the next read (`next`, `cycles` after the last) and the
  /// first cycle in which its value may differ (NpuBlock::steadyUntil).
  struct Steady {
    u32 off = kNoRegister, value = 0;
    u64 next = 0, until = 0, cycles = 0;
    sc_core::sc_time time;
  } steady_;
  tlm::tlm_generic_payload payload_; ///< The one transaction the core has in flight.
};

} // namespace

Platform::Platform(isa::IsaDescription isa, std::uint8_t* dram, u64 dram_bytes, JobEngine engine,
                   JobPrepare prepare)
    : impl_(std::make_unique<Impl>(std::move(isa), dram, dram_bytes, std::move(engine),
                                   std::move(prepare))) {}

Platform::~Platform() = default;

void Platform::run(const std::function<void(CoreBus&)>& program) {
  std::exception_ptr error;
  detail::inSystemC([&] {
    NpuBlock npu("npu", *impl_);
    ControlCore core("core", *impl_, program, npu);
    core.socket.bind(npu.socket);
    sc_core::sc_start();
    impl_->clockBase += sc_core::sc_time_stamp().value() / unit();
    if (impl_->state == Impl::State::Running) // abandoned by the program: as a reset
      impl_->state = Impl::State::Idle;
    error = core.error ? core.error : npu.error;
  });
  if (error)
    std::rethrow_exception(error);
}

std::optional<Report> Platform::takeReport() {
  std::optional<Report> r = std::move(impl_->handout);
  impl_->handout.reset();
  return r;
}
std::uint64_t Platform::starts() const {
  return impl_->starts;
}
std::uint64_t Platform::cycles() const {
  return impl_->clockBase;
}
const isa::IsaDescription& Platform::isa() const {
  return impl_->isa;
}

} // namespace ember::sim
