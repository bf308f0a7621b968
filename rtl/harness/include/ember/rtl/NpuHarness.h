// The Verilator harness of the NPU RTL (docs/rtl/npu.md section 5): loads a job exactly as
// the SystemC model does (the same ember::platform::Job: instruction words and DRAM image),
// clocks the Verilated ember_npu, serves its DRAM port with the description's latency
// and checks its outstanding-request limit, and collects the same report fields the
// model reports (cycles, per-instruction slices, per-engine counters, fault record).
//
// The harness is a template over the Verilated class because every description has a
// model of its own (Vnpu_<name>, from rtl/CMakeLists.txt); ember::rtl::Rtl wraps the
// models a build has.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/energy.h"
#include "ember/isa/instruction.h"
#include "ember/platform/Dram.h"
#include "ember/platform/Job.h"
#include "ember/platform/Layers.h"
#include "ember/platform/Report.h"

#include <verilated.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ember::rtl {

/// What an RTL run measured besides the report: harness-side checks of the RTL.
struct RtlResult {
  platform::Report report;              ///< Same fields as the SystemC model's.
  platform::DramImage dram;             ///< The DRAM window after the run.
  std::uint64_t max_inflight_bytes = 0; ///< Most DRAM read bytes in flight at once.
  bool overrun = false;                 ///< A datapath was still busy when its engine restarted.
  bool bus_conflict = false;            ///< Both DMA engines requested in one cycle.
  double host_seconds = 0;
};

/// The instructions the Verilated instruction buffer holds: the default IMEM_WORDS of
/// ember_npu, ember_npu_pair and ember_soc, with which every harness builds them.
inline constexpr std::uint64_t kInstructionBufferWords = std::uint64_t(1) << 17;

/// Refuses a program of `n` instructions that the instruction buffer cannot hold, rather
/// than letting the load wrap around it; `what` names it in the message ("the program",
/// "program 1").
inline void checkInstructionBufferFits(std::uint64_t n, const std::string& what) {
  if (n > kInstructionBufferWords)
    throw std::runtime_error("the RTL's instruction buffer holds " +
                             std::to_string(kInstructionBufferWords) + " instructions; " + what +
                             " has " + std::to_string(n));
}

namespace detail {

/// Bytes of a Verilated port (VlWide or a scalar) as 32-bit words.
template <class T> const std::uint32_t* words(const T& v) {
  if constexpr (std::is_integral_v<T>)
    return reinterpret_cast<const std::uint32_t*>(&v);
  else
    return v.data();
}
template <class T> std::uint32_t* words(T& v) {
  if constexpr (std::is_integral_v<T>)
    return reinterpret_cast<std::uint32_t*>(&v);
  else
    return v.data();
}
template <class T> std::uint64_t lane64(const T& v, unsigned i) {
  const std::uint32_t* w = words(v);
  return std::uint64_t(w[2 * i]) | (std::uint64_t(w[2 * i + 1]) << 32);
}
template <class T> std::uint32_t lane32(const T& v, unsigned i) {
  return words(v)[i];
}

inline const char* kEngineNames[4] = {"load", "compute", "store", "fetch"};

} // namespace detail

namespace detail {

/// The NPU's DRAM port (ember_npu's dram_* ports; ember_soc passes them through): a
/// request is accepted in the cycle it is valid (ready is 1), a write takes effect then,
/// a read is answered in order `dma.latency_cycles` later. `Mem` is the DRAM the port
/// reaches: `read(addr, bytes)` -> bytes, `write(addr, data, bytes)` (NPU addresses, the
/// window's). Both the job harness below and the SoC platform (SocHarness.h) serve the
/// port with this.
class DramPort {
public:
  explicit DramPort(std::uint64_t latency) : lat_(latency) {}
  /// Drives the response due in cycle `now` (before the cycle's first evaluation).
  template <class M> void respond(M& top, std::uint64_t now) {
    if (!rsps_.empty() && rsps_.front().due == now) {
      Rsp& r = rsps_.front();
      top.dram_rsp_valid_i = 1;
      top.dram_rsp_tag_i = r.tag;
      std::memset(words(top.dram_rsp_rdata_i), 0, sizeof(top.dram_rsp_rdata_i));
      std::memcpy(words(top.dram_rsp_rdata_i), r.data.data(), r.data.size());
      inflight_ -= r.data.size();
      rsps_.pop_front();
    } else {
      top.dram_rsp_valid_i = 0;
    }
  }
  /// Takes the request of cycle `now` (after the cycle's first evaluation).
  template <class M, class Mem> void request(M& top, std::uint64_t now, Mem& mem) {
    if (!top.dram_req_valid_o)
      return;
    const std::uint64_t a = top.dram_req_addr_o;
    const std::uint32_t bytes = top.dram_req_bytes_o;
    if (top.dram_req_write_o) {
      mem.write(a, reinterpret_cast<const std::uint8_t*>(words(top.dram_req_wdata_o)), bytes);
      return;
    }
    rsps_.push_back(Rsp{now + lat_, top.dram_req_tag_o, mem.read(a, bytes)});
    inflight_ += bytes;
    max_inflight = std::max(max_inflight, inflight_);
  }
  /// Drops the responses in flight (the NPU was reset).
  void clear() {
    rsps_.clear();
    inflight_ = 0;
  }
  std::uint64_t max_inflight = 0; ///< Most read bytes in flight at once.

private:
  struct Rsp {
    std::uint64_t due;
    std::uint32_t tag;
    std::vector<std::uint8_t> data;
  };
  std::uint64_t lat_, inflight_ = 0;
  std::deque<Rsp> rsps_;
};

/// The report of one job from the NPU's ports: a slice per retirement, then the cycles,
/// the counters and the fault record at the end (the fields the SystemC model reports).
/// Its energy is the simulator's model (isa/energy.h) applied to the instructions the RTL
/// retired, by their index on its retirement ports, and to its cycles; its layer rows
/// are the simulator's accounting (platform::LayerAccounts) of the same retirements.
class ReportCollector {
public:
  /// `text`: the job's instruction words (the retired indices are decoded from them);
  /// `debug`: its debug map (the report's layers).
  ReportCollector(const isa::IsaDescription& isa, std::vector<std::uint8_t> text,
                  std::vector<isa::DebugRange> debug, std::uint64_t instructions,
                  const platform::Options& opts)
      : opts_(opts), isa_(&isa), text_(std::move(text)), meter_(isa), layers_(std::move(debug)) {
    report.isa_name = isa.name();
    report.clock_hz = isa.hw().clock_hz;
    report.instructions = instructions;
    report.peak_macs_per_cycle = std::uint64_t(isa.hw().mac.rows) * isa.hw().mac.cols;
  }
  /// The retirements of NPU cycle `c` (after the cycle's first evaluation).
  template <class M> void retirements(const M& top, std::uint64_t c) {
    for (unsigned e = 0; e < 3; ++e) {
      if (!((top.ret_o >> e) & 1))
        continue;
      platform::Slice s;
      s.index = lane32(top.ret_index_o, e);
      s.engine = static_cast<int>(e);
      s.dispatch = lane64(top.ret_dispatch_o, e);
      s.take = lane64(top.ret_take_o, e);
      s.start = lane64(top.ret_start_o, e);
      s.end = c;
      s.memory_stall = lane64(top.ret_mstall_o, e);
      s.push_stall = c - lane64(top.ret_end_o, e);
      if (opts_.record_slices)
        report.slices.push_back(s);
      ++report.retired;
      account(s);
    }
    // Every 1024 retirements, and every 65536 cycles for programs of long instructions.
    if (opts_.progress && ((report.retired % 1024 == 0 && report.retired) || (c & 0xFFFF) == 0))
      opts_.progress(c, report.retired, report.instructions);
  }
  /// Cycles, counters and fault record, once done_o or fault_o shows.
  template <class M> void finish(const M& top) {
    platform::Report& rep = report;
    rep.cycles = top.done_o ? top.cycles_o : top.fault_cycle_o;
    rep.fetch_stall = top.cnt_fetch_stall_o;
    rep.macs = top.cnt_macs_o;
    rep.seconds = rep.clock_hz ? double(rep.cycles) / double(rep.clock_hz) : 0;
    if (rep.cycles && rep.peak_macs_per_cycle)
      rep.mac_utilization =
          double(rep.macs) / (double(rep.cycles) * double(rep.peak_macs_per_cycle));
    for (unsigned e = 0; e < 3; ++e) {
      platform::EngineReport er;
      er.name = kEngineNames[e];
      er.instructions = lane64(top.cnt_insns_o, e);
      er.busy = lane64(top.cnt_busy_o, e);
      er.token_stall = lane64(top.cnt_token_o, e);
      er.memory_stall = lane64(top.cnt_memory_o, e);
      const std::uint64_t used = er.busy + er.token_stall + er.memory_stall;
      er.idle = rep.cycles >= used ? rep.cycles - used : 0;
      rep.engines.push_back(er);
    }
    platform::addEnergy(rep, *isa_, meter_);
    // The DRAM traffic is the RTL's own counters' (the model's energy is from the
    // retired instructions; --compare sim,rtl compares both).
    rep.memories.back().bytes_read = top.cnt_dram_read_o;
    rep.memories.back().bytes_written = top.cnt_dram_write_o;
    rep.layers = layers_.layers(*isa_);
    if (top.fault_o) {
      platform::Fault f;
      f.kind = static_cast<platform::FaultKind>(top.fault_kind_o);
      f.cycle = top.fault_cycle_o;
      f.engine = kEngineNames[top.fault_engine_o & 3];
      f.instruction = top.fault_index_o == 0xFFFFFFFFu ? -1 : std::int64_t(top.fault_index_o);
      // The budget's fault as the SystemC model words it (its kind, cycle, engine and
      // instruction are compared by ember-run --compare sim,rtl).
      f.reason = f.kind == platform::FaultKind::CycleBudget
                     ? "cycle budget of " + std::to_string(std::uint64_t(top.budget_i)) +
                           " cycles exceeded (raised by the RTL)"
                     : "raised by the RTL";
      f.signal_cycle = top.cyc_o; // the NPU's cycle stops in the cycle it signals a fault
      rep.fault = f;
    }
    std::sort(rep.slices.begin(), rep.slices.end(),
              [](const platform::Slice& a, const platform::Slice& b) { return a.index < b.index; });
  }
  platform::Report report;

private:
  /// The energy and layer sums of retired instruction `s` (one the NPU could not decode
  /// never retires; one outside the text counts nothing).
  void account(const platform::Slice& s) {
    const std::size_t W = isa_->instructionBytes();
    if (!W || (std::size_t(s.index) + 1) * W > text_.size())
      return;
    const isa::Instruction in = isa::Instruction::decode(*isa_, text_.data() + s.index * W);
    const isa::energy::Counts c = isa::energy::countsOf(*isa_, in);
    const double e = meter_.add(*isa_, in, c);
    layers_.add(s, c.macs, c.dram_read + c.dram_write, e);
  }

  const platform::Options& opts_;
  const isa::IsaDescription* isa_;
  std::vector<std::uint8_t> text_;
  isa::energy::Meter meter_;
  platform::LayerAccounts layers_;
};

/// The job's DRAM window as the job harness holds it.
struct ImageMem {
  platform::DramImage& img;
  std::vector<std::uint8_t> read(std::uint64_t a, std::uint32_t n) const { return img.read(a, n); }
  void write(std::uint64_t a, const std::uint8_t* p, std::uint32_t n) { img.write(a, p, n); }
};

} // namespace detail

/// The description hash the Verilated model `M` was built from (first 8 bytes).
template <class M> std::uint64_t modelHash() {
  VerilatedContext ctx;
  M top(&ctx);
  top.eval();
  const std::uint64_t h = top.isa_hash_o;
  top.final();
  return h;
}

/// Runs one job on the Verilated model `M` of description `isa`.
/// `rand_seed` seeds the random initial state of a model built with --x-initial unique
/// (0: Verilator's default seed).
template <class M>
RtlResult runVerilated(const isa::IsaDescription& isa, const platform::Job& job,
                       const platform::Options& opts, std::uint64_t budget,
                       std::uint64_t rand_seed = 0) {
  using u64 = std::uint64_t;
  const auto t0 = std::chrono::steady_clock::now();
  RtlResult out;
  auto ctx = std::make_unique<VerilatedContext>();
  ctx->randReset(2); // random initial state when built with --x-initial unique
  if (rand_seed)
    ctx->randSeed(static_cast<int>(rand_seed));
  auto top = std::make_unique<M>(ctx.get());
  platform::DramImage dram = job.dram;
  const u64 window = opts.dram_window_bytes ? opts.dram_window_bytes : isa.hw().dram.size_bytes;
  const unsigned W = isa.instructionBytes();
  const u64 n = W ? job.text.size() / W : 0;
  checkInstructionBufferFits(n, "the program");

  auto tick = [&] {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
  };
  // Reset: a falling edge of rst_ni, one clock with it low, then release (with a random
  // initial state, the reset must be an edge the model sees).
  top->clk_i = 0;
  top->rst_ni = 1;
  top->start_i = 0;
  top->prog_we_i = 0;
  top->dram_req_ready_i = 1;
  top->dram_rsp_valid_i = 0;
  top->eval();
  top->rst_ni = 0;
  top->eval();
  tick();
  top->rst_ni = 1;
  top->eval();
  // Program load through the instruction buffer's write port.
  top->prog_we_i = 1;
  for (u64 i = 0; i < n; ++i) {
    top->prog_addr_i = static_cast<std::uint32_t>(i);
    std::uint32_t* d = detail::words(top->prog_data_i);
    std::memset(d, 0, sizeof(top->prog_data_i));
    std::memcpy(d, job.text.data() + i * W, W);
    tick();
  }
  top->prog_we_i = 0;
  top->ninsn_i = static_cast<std::uint32_t>(n);
  top->budget_i = budget;
  top->window_i = window;
  top->start_i = 1;
  tick();
  top->start_i = 0;

  detail::DramPort port(isa.hw().dma.latency_cycles);
  detail::ImageMem mem{dram};
  detail::ReportCollector rc(isa, job.text, job.debug, n, opts);
  // Two evaluations a cycle: the low phase with this cycle's inputs (combinational
  // outputs read), then the rising edge. cyc_o is a register, valid before either.
  top->clk_i = 0;
  for (;;) {
    const u64 c = top->cyc_o;
    port.respond(*top, c);
    top->eval();
    if (top->done_o || top->fault_o)
      break;
    if (top->dram_conflict_o)
      out.bus_conflict = true;
    if (top->overrun_o)
      out.overrun = true;
    port.request(*top, c, mem);
    rc.retirements(*top, c);
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
  }
  rc.finish(*top);
  top->final();
  out.report = std::move(rc.report);
  out.max_inflight_bytes = port.max_inflight;
  out.dram = std::move(dram);
  out.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.report.host_seconds = out.host_seconds;
  return out;
}

} // namespace ember::rtl
