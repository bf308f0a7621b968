// Internal: the NPU's cycle engine. One SystemC thread (whichever calls run(): the
// simulator's own module, or the platform's NPU when the control core starts a job)
// evaluates the cycles at which something happens, each in the fixed phase order of the
// timing contract (docs/simulator.md section 2): retire and push, take and pop and start
// (load, compute, store), fetch. Time jumps from one such cycle to the next with a
// SystemC wait, so idle stretches cost nothing. Cycle 0 is the simulation time at which
// run() is called.
#pragma once

#include "Machine.h"
#include "Run.h"
#include "ember/isa/timing.h"
#include "ember/sim/Simulator.h"

#include <systemc>

#include "PlatformTypes.h"
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace ember::sim::detail {

/// A reset of a running engine: `requested` set, then `event` notified.
struct AbortSignal {
  sc_core::sc_event event;
  bool requested = false;
};

class Npu {
public:
  /// `abort`, when given, stops the run at its next wait once requested (a reset).
  Npu(const isa::IsaDescription& isa, const Job& job, const Options& opts, std::uint64_t budget,
      Machine& m, RunState& st, const AbortSignal* abort = nullptr);
  Npu(const Npu&) = delete; // channel_ may point into it
  Npu& operator=(const Npu&) = delete;

  /// Runs the job to its end, its fault or an abort; call from a SystemC thread.
  void run();
  /// Step by step instead of run() (several engines in one thread, sim::runTogether):
  /// begin() at the job's cycle 0 gives the first cycle to evaluate, step(c) evaluates
  /// cycle c and gives the next one; nothing once the run has ended (finished or fault).
  /// The caller advances SystemC time to each cycle before evaluating it.
  std::optional<std::uint64_t> begin();
  std::optional<std::uint64_t> step(std::uint64_t c);
  /// Books DMAs on `ch` (a DRAM channel other engines share, in the same time base: they
  /// all begin in one cycle) instead of this engine's own channel. Call before begin().
  void shareChannel(isa::timing::Channel& ch) { channel_ = &ch; }
  /// The last step() booked the DRAM channel (a DMA started).
  bool bookedChannel() const { return booked_; }
  /// Cycles DMAs waited for the channel beyond this engine's own bookings: the waits for
  /// other engines on a shared channel (0 on a channel of its own).
  std::uint64_t arbitrationStall() const { return arbitrationStall_; }
  /// Every instruction up to the halt (or the end of the stream) retired.
  bool finished() const { return finished_; }
  /// The run was stopped by the abort event.
  bool aborted() const { return aborted_; }
  /// The current cycle (since run() began).
  std::uint64_t now() const;
  /// Engine `e` (0 load, 1 compute, 2 store) holds an instruction.
  bool engineBusy(int e) const { return eng_[std::size_t(e)].phase != Phase::Idle; }

private:
  using u64 = std::uint64_t;
  enum class Phase { Idle, WaitPop, Busy, WaitPush };
  struct Pending {
    std::uint32_t index = 0;
    std::optional<isa::Instruction> insn;
    Cls cls{};
    u64 dispatch = 0;
  };
  /// An instruction that ended in the current cycle: counted when the cycle ends without
  /// a fault (the NPU retires nothing in the cycle it raises one: the RTL gates its
  /// retirement ports with the fault).
  struct Ended {
    isa::Instruction insn;
    Counts counts;
    Slice slice;
  };
  struct EngineState {
    Phase phase = Phase::Idle;
    Pending cur;
    Slice slice;
    Counts counts;
    u64 end = 0; ///< Busy: the cycle its instruction ends.
    bool drained = false;
  };

  /// Waits `cycles` cycles; false if the abort event came first.
  bool sleep(u64 cycles);
  /// One cycle, in contract order. Returns false when the run stops (fault).
  bool cycle(u64 c);
  bool retirePhase(u64 c);
  bool startPhase(u64 c);
  bool fetchPhase(u64 c);
  bool tryStart(int e, u64 c);
  bool tryRetire(int e, u64 c);
  /// Counts the instructions that ended in cycle `c` (no fault was raised in it).
  void countEnded(u64 c);
  /// The FIFOs the instruction held by engine `e` pushes into (`push`) or pops from, by
  /// its token flags; false after a fault for a flag towards a missing neighbour.
  bool tokenFifos(int e, u64 c, bool push, std::array<int, 2>& fifos);
  /// Faults for tokens that can never come or room that can never appear.
  bool checkStarvation(u64 c);
  void updateDrained();
  /// The next cycle at which anything can happen, or nothing.
  std::optional<u64> nextCycle(u64 c) const;
  void describeDeadlock(u64 c);
  void raise(FaultKind k, const std::string& engine, std::int64_t index, std::string reason, u64 c,
             std::optional<u64> signal = std::nullopt);

  const isa::IsaDescription& isa_;
  const Job& job_;
  const Options& opts_;
  u64 budget_;
  Machine& m_;
  RunState& st_;
  const AbortSignal* abort_;
  u64 unit_ = 1000;
  u64 t0_ = 0; ///< Simulation time (in units) at which run() began.
  std::array<u64, 3> depth_{};
  std::array<std::deque<Pending>, 3> queue_;
  std::array<EngineState, 3> eng_;
  std::array<u64, 4> tokens_{};
  std::vector<Ended> ended_; ///< Of the current cycle.
  isa::timing::Channel ownChannel_;
  isa::timing::Channel* channel_ = &ownChannel_;
  u64 ownFree_ = 0;          ///< The end of this engine's last channel booking.
  u64 arbitrationStall_ = 0; ///< See arbitrationStall().
  bool booked_ = false;      ///< The current cycle booked the channel.
  // Fetch.
  std::size_t next_ = 0;      ///< Next instruction of the stream.
  std::size_t count_ = 0;     ///< Instructions in the stream.
  u64 fetchAt_ = 0;           ///< Earliest cycle fetch may write instruction next_.
  bool fetchDone_ = false;    ///< Met the halt or the end of the stream.
  bool fetchBlocked_ = false; ///< Its queue was full at the last try.
  bool fetchWrote_ = false;   ///< Wrote an instruction in the current cycle.
  bool popped_ = false;       ///< Some token was popped in the current cycle.
  bool finished_ = false;
  u64 arrayFree_ = 0; ///< E6: the end of the last gemm on the MAC array.
  bool aborted_ = false;
};

} // namespace ember::sim::detail
