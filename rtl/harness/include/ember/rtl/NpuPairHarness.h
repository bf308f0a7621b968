// The Verilator harness of two NPUs on one DRAM (ember_npu_pair, docs/rtl/npu.md section
// 2.2): loads one job on each NPU, starts both in the same cycle (rule M1 of
// docs/systems.md section 5: every device's cycle 0 is the same cycle), serves each
// NPU's DRAM port from its own window (only the channel's timing is shared) and collects
// each NPU's report as NpuHarness.h does for one, plus its arbitration stall (M4) and
// the cycles in which it booked the channel.
#pragma once

#include "ember/rtl/NpuHarness.h"

#include <array>
#include <type_traits>
#include <utility>

namespace ember::rtl {

/// One NPU's outcome of a joint run on the pair.
struct RtlPairDevice {
  RtlResult result;
  std::uint64_t arbitration_stall = 0; ///< The RTL's cnt_arb_o (rule M4).
  std::uint64_t channel_bookings = 0;  ///< Cycles in which it booked the channel.
};

namespace detail {

// The ports of one NPU of the pair, d0_* or d1_*, under ember_npu's names, so that
// DramPort and ReportCollector serve it as they serve a single NPU.
// clang-format off
#define EMBER_PAIR_PORTS(X) \
  X(prog_we_i) X(prog_addr_i) X(prog_data_i) X(start_i) X(ninsn_i) X(budget_i) \
  X(window_i) X(dram_req_valid_o) X(dram_req_ready_i) X(dram_req_write_o) \
  X(dram_req_addr_o) X(dram_req_bytes_o) X(dram_req_tag_o) X(dram_req_wdata_o) \
  X(dram_rsp_valid_i) X(dram_rsp_tag_i) X(dram_rsp_rdata_i) X(dram_conflict_o) X(cyc_o) \
  X(done_o) X(fault_o) X(fault_kind_o) X(fault_engine_o) X(fault_index_o) \
  X(fault_cycle_o) X(cycles_o) X(ret_o) X(ret_index_o) X(ret_dispatch_o) X(ret_take_o) \
  X(ret_start_o) X(ret_end_o) X(ret_mstall_o) X(cnt_busy_o) X(cnt_token_o) \
  X(cnt_memory_o) X(cnt_insns_o) X(cnt_fetch_stall_o) X(cnt_macs_o) X(cnt_dram_read_o) \
  X(cnt_dram_write_o) X(overrun_o) X(cnt_arb_o) X(chan_booked_o)
// clang-format on

/// NPU `k` (0 or 1) of the Verilated pair `P`: a reference to each of its ports.
template <class P> struct PairNpu {
  int k;
#define EMBER_PAIR_MEMBER(n) std::remove_reference_t<decltype(std::declval<P&>().d0_##n)>& n;
  EMBER_PAIR_PORTS(EMBER_PAIR_MEMBER)
#undef EMBER_PAIR_MEMBER
#define EMBER_PAIR_INIT(n) , n(k ? p.d1_##n : p.d0_##n)
  PairNpu(P& p, int which) : k(which) EMBER_PAIR_PORTS(EMBER_PAIR_INIT) {}
#undef EMBER_PAIR_INIT
};

/// Resets the pair and writes both programs (`n[k]` words of `W` bytes) through the
/// instruction buffers' write ports, side by side.
template <class P>
void resetAndLoadPair(P& top, PairNpu<P> (&npu)[2], const std::array<const platform::Job*, 2>& jobs,
                      const std::array<std::uint64_t, 2>& n, unsigned W, bool round_robin) {
  auto tick = [&] {
    top.clk_i = 1;
    top.eval();
    top.clk_i = 0;
    top.eval();
  };
  top.clk_i = 0;
  top.rst_ni = 1;
  top.round_robin_i = round_robin;
  for (auto& d : npu) {
    d.start_i = 0;
    d.prog_we_i = 0;
    d.dram_req_ready_i = 1;
    d.dram_rsp_valid_i = 0;
  }
  top.eval();
  top.rst_ni = 0;
  top.eval();
  tick();
  top.rst_ni = 1;
  top.eval();
  for (std::uint64_t i = 0; i < std::max(n[0], n[1]); ++i) {
    for (int k = 0; k < 2; ++k) {
      npu[k].prog_we_i = i < n[k];
      npu[k].prog_addr_i = static_cast<std::uint32_t>(i);
      std::uint32_t* d = words(npu[k].prog_data_i);
      std::memset(d, 0, sizeof(npu[k].prog_data_i));
      if (i < n[k])
        std::memcpy(d, jobs[k]->text.data() + i * W, W);
    }
    tick();
  }
}

} // namespace detail

/// Runs `jobs[k]` on NPU k of the Verilated pair `P` of description `isa`, both from the
/// same cycle 0, the channel arbitrated round robin or by fixed priority (rule M3), with
/// cycle budgets `budgets[k]`.
template <class P>
std::array<RtlPairDevice, 2>
runVerilatedPair(const isa::IsaDescription& isa, const std::array<const platform::Job*, 2>& jobs,
                 const platform::Options& opts, const std::array<std::uint64_t, 2>& budgets,
                 bool round_robin) {
  using u64 = std::uint64_t;
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<P>(ctx.get());
  detail::PairNpu<P> npu[2] = {detail::PairNpu<P>(*top, 0), detail::PairNpu<P>(*top, 1)};
  const u64 window = opts.dram_window_bytes ? opts.dram_window_bytes : isa.hw().dram.size_bytes;
  const unsigned W = isa.instructionBytes();
  std::array<u64, 2> n{};
  for (int k = 0; k < 2; ++k) {
    n[k] = W ? jobs[k]->text.size() / W : 0;
    checkInstructionBufferFits(n[k], "program " + std::to_string(k));
  }
  detail::resetAndLoadPair(*top, npu, jobs, n, W, round_robin);
  std::array<platform::DramImage, 2> dram = {jobs[0]->dram, jobs[1]->dram};
  for (int k = 0; k < 2; ++k) {
    npu[k].prog_we_i = 0;
    npu[k].ninsn_i = static_cast<std::uint32_t>(n[k]);
    npu[k].budget_i = budgets[k];
    npu[k].window_i = window;
    npu[k].start_i = 1;
  }
  top->clk_i = 1;
  top->eval();
  top->clk_i = 0;
  top->eval();
  for (auto& d : npu)
    d.start_i = 0;

  std::array<RtlPairDevice, 2> out;
  detail::DramPort port[2] = {detail::DramPort(isa.hw().dma.latency_cycles),
                              detail::DramPort(isa.hw().dma.latency_cycles)};
  detail::ImageMem mem[2] = {{dram[0]}, {dram[1]}};
  detail::ReportCollector rc[2] = {
      detail::ReportCollector(isa, jobs[0]->text, jobs[0]->debug, n[0], opts),
      detail::ReportCollector(isa, jobs[1]->text, jobs[1]->debug, n[1], opts)};
  bool ended[2] = {false, false};
  // One joint cycle c a loop: both NPUs' low phase, then the rising edge. An NPU that
  // ended is still clocked (it no longer books), its report taken when it ended.
  for (u64 c = 0; !(ended[0] && ended[1]); ++c) {
    for (int k = 0; k < 2; ++k)
      port[k].respond(npu[k], c);
    top->eval();
    for (int k = 0; k < 2; ++k) {
      if (ended[k])
        continue;
      if (npu[k].done_o || npu[k].fault_o) {
        rc[k].finish(npu[k]);
        out[k].arbitration_stall = npu[k].cnt_arb_o;
        ended[k] = true;
        continue;
      }
      if (npu[k].cyc_o != c)
        throw std::logic_error("NPU " + std::to_string(k) + " is at cycle " +
                               std::to_string(u64(npu[k].cyc_o)) + " in joint cycle " +
                               std::to_string(c));
      if (npu[k].dram_conflict_o)
        out[k].result.bus_conflict = true;
      if (npu[k].overrun_o)
        out[k].result.overrun = true;
      if (npu[k].chan_booked_o)
        ++out[k].channel_bookings;
      port[k].request(npu[k], c, mem[k]);
      rc[k].retirements(npu[k], c);
    }
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
  }
  top->final();
  for (int k = 0; k < 2; ++k) {
    out[k].result.report = std::move(rc[k].report);
    out[k].result.max_inflight_bytes = port[k].max_inflight;
    out[k].result.dram = std::move(dram[k]);
  }
  return out;
}

} // namespace ember::rtl
