// The SystemC model: a fetch unit, three in-order engines with queues, and the four
// dependency-token FIFOs between neighbouring engines. Engines advance time once per
// instruction by its closed-form duration (Machine::timing), so simulation time moves by
// events and never ticks cycle by cycle.
#include "ember/sim/Simulator.h"

#include "Machine.h"
#include "Run.h"
#include "ember/isa/error.h"

#include <systemc>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <thread>

// libsystemc.so refers to sc_main (its own main() calls it). Ember's programs have their
// own main, so a weak definition satisfies the linker; a program that defines sc_main
// wins.
extern "C" __attribute__((weak)) int sc_main(int, char**) {
  return 1;
}

namespace ember::sim {

namespace {

using detail::Cls;
using u64 = std::uint64_t;
using isa::Engine;

constexpr const char* kEngineNames[3] = {"load", "compute", "store"};

/// Token FIFO from engine `from` to its neighbour (`toNext`: towards store), or -1.
int fifoIndex(int from, bool toNext) {
  if (toNext)
    return from < 2 ? from * 2 : -1;         // 0: load->compute, 2: compute->store
  return from > 0 ? (from - 1) * 2 + 1 : -1; // 1: compute->load, 3: store->compute
}
/// Producer / consumer engine of FIFO `f`.
int fifoProducer(int f) {
  return (f == 0) ? 0 : (f == 1) ? 1 : (f == 2) ? 1 : 2;
}
int fifoConsumer(int f) {
  return (f == 0) ? 1 : (f == 1) ? 0 : (f == 2) ? 2 : 1;
}

struct Pending {
  std::uint32_t index;
  isa::Instruction insn;
  Cls cls;
  u64 dispatch;
};

/// Where an engine is blocked, for the deadlock report.
struct WaitState {
  bool on_token = false;
  bool push = false; ///< Waiting for room (push) rather than for a token (pop).
  int fifo = -1;
  std::int64_t index = -1;
  std::string mnemonic;
};

class Npu : public sc_core::sc_module {
public:
  SC_HAS_PROCESS(Npu);
  Npu(sc_core::sc_module_name name, const isa::IsaDescription& isa, const Job& job,
      const Options& opts, u64 budget, detail::Machine& m, detail::RunState& st)
      : sc_module(name), isa_(isa), job_(job), opts_(opts), budget_(budget), m_(m), st_(st) {
    const auto& q = isa.hw().queues;
    depth_ = {q.load_depth, q.compute_depth, q.store_depth};
    unit_ = sc_core::sc_time(1, sc_core::SC_NS).value();
    SC_THREAD(fetch);
    SC_THREAD(loadEngine);
    SC_THREAD(computeEngine);
    SC_THREAD(storeEngine);
  }

  bool finished() const { return fetch_done_ && drained_[0] && drained_[1] && drained_[2]; }
  void describeDeadlock();
  /// The engine and index of the oldest instruction taken but not retired.
  void oldestInFlight(std::string& engine, std::int64_t& index) const {
    for (int e = 0; e < 3; ++e)
      if (current_[e] >= 0 && (index < 0 || current_[e] < index)) {
        index = current_[e];
        engine = kEngineNames[e];
      }
  }
  u64 now() const { return sc_core::sc_time_stamp().value() / unit_; }
  /// Wakes every waiting thread so that it returns (SystemC never unwinds the stack of
  /// a thread that is still waiting when its context is destroyed: its locals would leak).
  void stop() {
    stopped_ = true;
    stop_ev_.notify(sc_core::SC_ZERO_TIME);
  }

private:
  void fetch();
  void loadEngine() { engine(0); }
  void computeEngine() { engine(1); }
  void storeEngine() { engine(2); }
  void engine(int e);
  bool popTokens(int e, const Pending& p);
  bool withinBudget(int e, const Pending& p, u64 start);
  bool pushTokens(int e, const Pending& p);
  void raise(FaultKind k, const std::string& engine, std::int64_t index, std::string reason);
  void waitCycles(u64 c) {
    if (c)
      sc_core::wait(sc_core::sc_time::from_value(c * unit_), stop_ev_);
  }
  void notifyTokens() {
    for (auto& ev : tok_ev_)
      ev.notify(sc_core::SC_ZERO_TIME);
    for (auto& ev : room_ev_)
      ev.notify(sc_core::SC_ZERO_TIME);
  }

  const isa::IsaDescription& isa_;
  const Job& job_;
  const Options& opts_;
  u64 budget_;
  detail::Machine& m_;
  detail::RunState& st_;
  u64 unit_ = 1000;
  std::array<u64, 3> depth_{};
  std::array<std::deque<Pending>, 3> queue_;
  std::array<sc_core::sc_event, 3> put_ev_, get_ev_;
  std::array<u64, 4> tokens_{};
  std::array<sc_core::sc_event, 4> tok_ev_, room_ev_;
  std::array<bool, 3> drained_{};
  std::array<WaitState, 3> wait_{};
  std::int64_t fetch_wait_ = -1;
  std::array<std::int64_t, 3> current_{-1, -1, -1};
  bool fetch_done_ = false, stopped_ = false;
  detail::DramBus bus_;
  sc_core::sc_event stop_ev_; ///< Notified once, when the run stops early.
};

void Npu::raise(FaultKind k, const std::string& engine, std::int64_t index, std::string reason) {
  if (stopped_)
    return;
  st_.fault = Fault{k, now(), engine, index, std::move(reason)};
  stop();
}

void Npu::fetch() {
  const unsigned W = isa_.instructionBytes();
  const std::size_t n = W ? job_.text.size() / W : 0;
  for (std::size_t i = 0; i < n && !stopped_; ++i) {
    const std::string where = "instruction " + std::to_string(i);
    std::optional<isa::Instruction> insn;
    Cls cls{};
    int e = 0;
    try {
      insn = isa::Instruction::decode(isa_, job_.text.data() + i * W, "<program>", where);
      cls = detail::classOf(insn->desc());
    } catch (const std::exception& ex) {
      return raise(FaultKind::IllegalOpcode, "fetch", std::int64_t(i), ex.what());
    }
    try {
      e = static_cast<int>(insn->engine());
    } catch (const std::exception& ex) {
      e = -1;
    }
    if (e < 0 || e > 2)
      return raise(FaultKind::BadOperand, "fetch", std::int64_t(i),
                   insn->name() + " names no engine (engine field out of range)");
    u64 t0 = now();
    while (queue_[e].size() >= depth_[e]) {
      fetch_wait_ = std::int64_t(i);
      sc_core::wait(get_ev_[e] | stop_ev_);
      if (stopped_)
        return;
    }
    fetch_wait_ = -1;
    st_.fetch_stall += now() - t0;
    queue_[e].push_back(Pending{std::uint32_t(i), *insn, cls, now()});
    put_ev_[e].notify(sc_core::SC_ZERO_TIME);
    if (cls == Cls::Halt)
      break;
  }
  fetch_done_ = true;
  for (auto& ev : put_ev_)
    ev.notify(sc_core::SC_ZERO_TIME);
}

bool Npu::popTokens(int e, const Pending& p) {
  for (bool next : {false, true}) {
    if (!p.insn.has(next ? "pop_next" : "pop_prev") || !p.insn.get(next ? "pop_next" : "pop_prev"))
      continue;
    // Tokens into e from its neighbour: that neighbour's FIFO towards e.
    int from = next ? e + 1 : e - 1;
    const char* flag = next ? "pop_next" : "pop_prev";
    if (from < 0 || from > 2) {
      raise(FaultKind::TokenUnderflow, kEngineNames[e], p.index,
            std::string(flag) + " on the " + kEngineNames[e] + " engine, which has no " +
                (next ? "next" : "previous") + " engine: the FIFO can never hold a token");
      return false;
    }
    int f = fifoIndex(from, !next);
    while (tokens_[f] == 0) {
      if (drained_[from]) {
        raise(FaultKind::TokenUnderflow, kEngineNames[e], p.index,
              std::string(flag) + " of " + p.insn.name() + " on an empty " + kEngineNames[from] +
                  "->" + kEngineNames[e] + " token FIFO, and the " + kEngineNames[from] +
                  " engine has retired all its instructions");
        return false;
      }
      wait_[e] = WaitState{true, false, f, p.index, p.insn.name()};
      sc_core::wait(tok_ev_[f] | stop_ev_);
      if (stopped_)
        return false;
    }
    wait_[e] = WaitState{};
    --tokens_[f];
    room_ev_[f].notify(sc_core::SC_ZERO_TIME);
  }
  return true;
}

bool Npu::pushTokens(int e, const Pending& p) {
  for (bool next : {false, true}) {
    const char* flag = next ? "push_next" : "push_prev";
    if (!p.insn.has(flag) || !p.insn.get(flag))
      continue;
    int f = fifoIndex(e, next);
    if (f < 0) {
      raise(FaultKind::TokenOverflow, kEngineNames[e], p.index,
            std::string(flag) + " on the " + kEngineNames[e] + " engine, which has no " +
                (next ? "next" : "previous") + " engine to receive the token");
      return false;
    }
    const u64 depth = isa_.hw().queues.token_fifo_depth;
    const int to = next ? e + 1 : e - 1;
    while (tokens_[f] >= depth) {
      if (drained_[to]) {
        raise(FaultKind::TokenOverflow, kEngineNames[e], p.index,
              std::string(flag) + " of " + p.insn.name() + " into the full " + kEngineNames[e] +
                  "->" + kEngineNames[to] + " token FIFO (depth " + std::to_string(depth) +
                  "), and the " + kEngineNames[to] +
                  " engine has retired all its instructions: no room will ever come");
        return false;
      }
      wait_[e] = WaitState{true, true, f, p.index, p.insn.name()};
      sc_core::wait(room_ev_[f] | stop_ev_);
      if (stopped_)
        return false;
    }
    wait_[e] = WaitState{};
    ++tokens_[f];
    tok_ev_[f].notify(sc_core::SC_ZERO_TIME);
  }
  return true;
}

/// An instruction that would end past the cycle budget stops the run before its data
/// effect is computed, so a run's host time is bounded by its budget.
bool Npu::withinBudget(int e, const Pending& p, u64 start) {
  detail::DramBus probe = bus_;
  detail::Timing t = m_.timing(p.insn, p.cls, start, probe);
  if (t.overflow) {
    raise(FaultKind::CycleBudget, kEngineNames[e], p.index,
          p.insn.name() + ": its duration does not fit a 64-bit cycle count");
    return false;
  }
  if (start > budget_ || t.cycles > budget_ - start) {
    raise(FaultKind::CycleBudget, kEngineNames[e], p.index,
          "cycle budget of " + std::to_string(budget_) + " cycles exceeded: " + p.insn.name() +
              " starting at cycle " + std::to_string(start) + " takes " + std::to_string(t.cycles) +
              " cycles (" + std::to_string(st_.retired) + " of " +
              std::to_string(st_.instructions) + " instructions retired)");
    if (st_.fault)
      st_.fault->cycle = budget_; // where the budget runs out, as when time reaches it
    return false;
  }
  return true;
}

void Npu::engine(int e) {
  for (;;) {
    while (queue_[e].empty()) {
      if (fetch_done_) {
        drained_[e] = true;
        notifyTokens();
        return;
      }
      sc_core::wait(put_ev_[e] | stop_ev_);
      if (stopped_)
        return;
    }
    Pending p = std::move(queue_[e].front());
    queue_[e].pop_front();
    get_ev_[e].notify(sc_core::SC_ZERO_TIME);
    Slice s;
    s.index = p.index;
    s.engine = e;
    s.dispatch = p.dispatch;
    s.take = now();
    current_[e] = p.index;
    if (!popTokens(e, p))
      return;
    s.start = now();
    if (!withinBudget(e, p, s.start))
      return;
    detail::Counts counts;
    if (auto f = m_.execute(p.insn, p.cls, counts))
      return raise(f->kind, kEngineNames[e], p.index, p.insn.name() + ": " + f->reason);
    if (e == 2 && p.cls == Cls::DmaStore)
      sc_core::wait(sc_core::SC_ZERO_TIME); // same-cycle DRAM requests: load first
    detail::Timing t = m_.timing(p.insn, p.cls, s.start, bus_);
    if (t.overflow)
      return raise(FaultKind::CycleBudget, kEngineNames[e], p.index,
                   p.insn.name() + ": its duration does not fit a 64-bit cycle count");
    waitCycles(t.cycles);
    if (stopped_)
      return;
    s.end = now();
    s.memory_stall = t.memory_stall;
    s.name = p.insn.name();
    if (!pushTokens(e, p))
      return;
    current_[e] = -1;
    st_.retire(isa_, p.insn, p.cls, counts, std::move(s), opts_.record_slices);
    if (opts_.progress && st_.retired % 1024 == 0)
      opts_.progress(now(), st_.retired, st_.instructions);
  }
}

void Npu::describeDeadlock() {
  std::string reason = "no engine can progress:";
  std::int64_t first = -1;
  std::string firstEngine = "compute";
  for (int e = 0; e < 3; ++e) {
    const WaitState& w = wait_[e];
    if (drained_[e]) {
      reason += std::string(" ") + kEngineNames[e] + " has finished;";
      continue;
    }
    if (w.on_token) {
      int other = w.push ? fifoConsumer(w.fifo) : fifoProducer(w.fifo);
      reason += std::string(" ") + kEngineNames[e] + " waits at instruction " +
                std::to_string(w.index) + " (" + w.mnemonic + ") " +
                (w.push ? "for room in its full token FIFO to " : "for a token from ") +
                kEngineNames[other] + ";";
      if (first < 0 || w.index < first) {
        first = w.index;
        firstEngine = kEngineNames[e];
      }
    } else {
      reason += std::string(" ") + kEngineNames[e] + " waits for instructions;";
    }
  }
  if (fetch_wait_ >= 0)
    reason +=
        " fetch waits at instruction " + std::to_string(fetch_wait_) + " for room in a full queue;";
  reason.pop_back();
  st_.fault = Fault{FaultKind::Deadlock, now(), firstEngine, first, reason};
}

/// One SystemC context per run, so a process may run any number of simulations.
class ContextGuard {
public:
  ContextGuard() {
    static bool once = [] {
      setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
      sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
      sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
      return true;
    }();
    (void)once;
    ctx_ = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = ctx_;
    sc_core::sc_default_global_context = ctx_;
  }
  ~ContextGuard() {
    delete ctx_;
    sc_core::sc_curr_simcontext = nullptr;
    sc_core::sc_default_global_context = nullptr;
  }
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;

private:
  sc_core::sc_simcontext* ctx_;
};

void checkShapes(const isa::IsaDescription& isa) {
  const auto& hw = isa.hw();
  auto fail = [&](const std::string& why) { throw isa::Error(isa.file(), "/hardware", why); };
  for (const char* m : {"act", "weight", "acc", "param"})
    if (!isa.findMemory(m))
      fail(std::string("the simulator needs an SRAM named '") + m + "'");
  const auto& act = isa.memory("act");
  const auto& acc = isa.memory("acc");
  const auto& wgt = isa.memory("weight");
  const auto& par = isa.memory("param");
  if (act.elem_bits != 8 || wgt.elem_bits != 8 || acc.elem_bits != 32 || par.elem_bits != 32)
    fail("act and weight hold 8-bit elements, acc and param 32-bit ones");
  if (act.lanes() != hw.mac.rows)
    fail("act row lanes (" + std::to_string(act.lanes()) + ") != mac_array.rows (" +
         std::to_string(hw.mac.rows) + ")");
  if (acc.lanes() != hw.mac.cols)
    fail("acc row lanes (" + std::to_string(acc.lanes()) + ") != mac_array.cols (" +
         std::to_string(hw.mac.cols) + ")");
  if (wgt.row_bytes != u64(hw.mac.rows) * hw.mac.cols)
    fail("weight row bytes != mac_array.rows * cols");
  if (hw.vector.lanes != act.lanes() || hw.vector.lanes != acc.lanes() ||
      hw.vector.lanes != par.lanes())
    fail("vector.lanes must equal the lanes of act, acc and param rows");
}

} // namespace

Simulator::Simulator(isa::IsaDescription isa) : isa_(std::move(isa)) {
  checkShapes(isa_);
}

u64 Simulator::defaultCycleBudget(const Job& job) const {
  // The pass decodes every instruction and catches the decoder's exception for a faulty
  // one. It runs on a thread of its own: after a SystemC run has switched coroutine
  // stacks, AddressSanitizer's bounds of the calling thread's stack are stale, and an
  // exception unwound there leaves false stack poison (docs/robustness.md section 3).
  u64 budget = 0;
  std::exception_ptr error;
  std::thread pass([&] {
    try {
      budget = onePassBudget(job);
    } catch (...) {
      error = std::current_exception();
    }
  });
  pass.join();
  if (error)
    std::rethrow_exception(error);
  return budget;
}

u64 Simulator::onePassBudget(const Job& job) const {
  detail::Machine machine(isa_, DramImage(), 0);
  const unsigned W = isa_.instructionBytes();
  u64 sum = kBudgetSlack;
  for (std::size_t i = 0; W && i < job.text.size() / W; ++i) {
    try {
      isa::Instruction insn = isa::Instruction::decode(isa_, job.text.data() + i * W, "", "");
      u64 c = machine.passCycles(insn, detail::classOf(insn.desc()));
      sum = c > kMaxCycleBudget - sum ? kMaxCycleBudget : sum + c;
    } catch (const std::exception&) {
      // Faults at fetch; costs nothing.
    }
  }
  return std::min(sum, kMaxCycleBudget);
}

Result Simulator::run(const Job& job, const Options& opts) const {
  auto t0 = std::chrono::steady_clock::now();
  Result res;
  detail::RunState st(isa_, job);
  const u64 budget =
      opts.cycle_budget ? std::min(opts.cycle_budget, kMaxCycleBudget) : defaultCycleBudget(job);
  {
    detail::Machine machine(isa_, job.dram,
                            opts.dram_window_bytes ? opts.dram_window_bytes
                                                   : isa_.hw().dram.size_bytes);
    {
      ContextGuard ctx;
      auto npu = std::make_unique<Npu>("npu", isa_, job, opts, budget, machine, st);
      try {
        sc_core::sc_start(
            sc_core::sc_time::from_value(budget * sc_core::sc_time(1, sc_core::SC_NS).value()),
            sc_core::SC_EXIT_ON_STARVATION);
      } catch (const std::exception& ex) {
        if (!st.fault)
          st.fault = Fault{FaultKind::BadOperand, npu->now(), "npu", -1,
                           std::string("internal error: ") + ex.what()};
      }
      if (!st.fault && !npu->finished()) {
        if (sc_core::sc_pending_activity()) {
          std::int64_t oldest = -1;
          std::string engine = "fetch";
          npu->oldestInFlight(engine, oldest);
          st.fault = Fault{FaultKind::CycleBudget, budget, engine, oldest,
                           "cycle budget of " + std::to_string(budget) + " cycles exceeded after " +
                               std::to_string(st.retired) + " of " +
                               std::to_string(st.instructions) + " instructions retired"};
        } else {
          npu->describeDeadlock();
        }
      }
      if (st.fault)
        st.last_cycle = std::max(st.last_cycle, st.fault->cycle);
      if (!npu->finished()) { // budget, deadlock or fault: let every thread return
        npu->stop();
        try {
          sc_core::sc_start(sc_core::SC_ZERO_TIME);
          while (sc_core::sc_pending_activity_at_current_time())
            sc_core::sc_start(sc_core::SC_ZERO_TIME);
        } catch (const std::exception&) {
          // Unwinding only; the fault is already recorded.
        }
      }
      npu.reset();
    }
    res.dram = machine.dram().takeImage();
  }
  double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.report = st.finish(isa_, job, host);
  return res;
}

Job Simulator::makeJob(const isa::Binary& bin,
                       const std::map<std::string, std::vector<std::uint8_t>>& inputs, u64 window,
                       const std::string& file) const {
  Job job;
  const unsigned W = isa_.instructionBytes();
  job.text.resize(bin.code.size() * W);
  for (std::size_t i = 0; i < bin.code.size(); ++i)
    bin.code[i].encodeInto(job.text.data() + i * W);
  if (window == 0)
    window = isa_.hw().dram.size_bytes;
  // Every region must fit the window (I/O entries and constants lie inside regions).
  for (const auto& r : bin.memmap)
    if (r.dram_offset > window || r.size_bytes > window - r.dram_offset)
      throw isa::Error(file, "section .ember.memmap: region \"" + r.name + "\"",
                       "[" + std::to_string(r.dram_offset) + ", " +
                           std::to_string(r.dram_offset + r.size_bytes) +
                           ") does not fit the job's DRAM window of " + std::to_string(window) +
                           " bytes (--dram-window)");
  for (const auto& r : bin.memmap)
    if (r.kind == isa::RegionKind::Const)
      job.dram.write(r.dram_offset, bin.constants);
  for (const auto& [name, bytes] : inputs) {
    const isa::IoEntry* entry = nullptr;
    for (const auto& io : bin.io)
      if (io.name == name && io.dir == isa::IoDir::Input)
        entry = &io;
    if (!entry)
      throw isa::Error("<inputs>", name, "the binary has no input of this name");
    if (bytes.size() != entry->size_bytes)
      throw isa::Error("<inputs>", name,
                       std::to_string(bytes.size()) + " bytes given, the I/O table says " +
                           std::to_string(entry->size_bytes));
    job.dram.write(entry->dram_offset, bytes);
  }
  job.debug = bin.debug;
  return job;
}

Result Simulator::run(const isa::Binary& bin,
                      const std::map<std::string, std::vector<std::uint8_t>>& inputs,
                      const Options& opts) const {
  return run(makeJob(bin, inputs, opts.dram_window_bytes, opts.binary_name), opts);
}

} // namespace ember::sim
