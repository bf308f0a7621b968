// The NPU's cycle engine: the timing contract of docs/simulator.md section 2, rule by
// rule. The RTL implements the same rules; co-simulation compares every instruction's
// take, start and end cycle.
#include "Npu.h"

#include "ember/isa/roles.h"

#include "PlatformTypes.h"
#include <algorithm>

namespace ember::sim::detail {

namespace {

using u64 = std::uint64_t;

constexpr const char* kEngineNames[3] = {"load", "compute", "store"};

/// Token FIFO from engine `from` to its neighbour (`toNext`: towards store), or -1
/// (docs/isa/programmers-model.md section 1: 0 load->compute, 1 compute->load, 2 compute->store,
/// 3 store->compute).
int fifoIndex(int from, bool toNext) {
  if (toNext)
    return from < 2 ? from * 2 : -1;
  return from > 0 ? (from - 1) * 2 + 1 : -1;
}
int fifoProducer(int f) {
  return (f == 0) ? 0 : (f == 3) ? 2 : 1;
}
int fifoConsumer(int f) {
  return (f == 0 || f == 3) ? 1 : (f == 1) ? 0 : 2;
}
bool flag(const isa::Instruction& in, const char* role) {
  return in.has(role) && in.get(role) != 0;
}

} // namespace

Npu::Npu(const isa::IsaDescription& isa, const Job& job, const Options& opts, u64 budget,
         Machine& m, RunState& st, const AbortSignal* abort)
    : isa_(isa), job_(job), opts_(opts), budget_(budget), m_(m), st_(st), abort_(abort) {
  const auto& q = isa.hw().queues;
  depth_ = {q.load_depth, q.compute_depth, q.store_depth};
  unit_ = sc_core::sc_time(1, sc_core::SC_NS).value();
  const unsigned W = isa_.instructionBytes();
  count_ = W ? job_.text.size() / W : 0;
  // F1: the first instruction is written into its queue in cycle latency - 1 and can be
  // taken from cycle latency on.
  fetchAt_ = isa.hw().fetch.latency_cycles ? isa.hw().fetch.latency_cycles - 1 : 0;
  fetchDone_ = count_ == 0;
}

u64 Npu::now() const {
  return sc_core::sc_time_stamp().value() / unit_ - t0_;
}

bool Npu::sleep(u64 cycles) {
  const sc_core::sc_time t = sc_core::sc_time::from_value(cycles * unit_);
  if (!abort_) {
    sc_core::wait(t);
    return true;
  }
  if (!abort_->requested)
    sc_core::wait(t, abort_->event);
  aborted_ = abort_->requested;
  return !aborted_;
}

void Npu::raise(FaultKind k, const std::string& engine, std::int64_t index, std::string reason,
                u64 c, std::optional<u64> signal) {
  if (!st_.fault) {
    st_.fault = Fault{k, c, engine, index, std::move(reason)};
    st_.fault->signal_cycle = signal ? *signal : c;
  }
}

void Npu::run() {
  std::optional<u64> c = begin();
  u64 at = 0;
  while (c) {
    if (!sleep(*c - at))
      return;
    at = *c;
    c = step(at);
  }
}

std::optional<u64> Npu::begin() {
  t0_ = sc_core::sc_time_stamp().value() / unit_;
  if (fetchDone_) {
    finished_ = true;
    return std::nullopt;
  }
  const u64 c = fetchAt_;
  if (c > budget_) {
    raise(FaultKind::CycleBudget, "fetch", 0,
          "cycle budget of " + std::to_string(budget_) +
              " cycles ends before the first instruction is fetched",
          budget_, budget_ + 1);
    return std::nullopt;
  }
  return c;
}

std::optional<u64> Npu::step(u64 c) {
  booked_ = false;
  if (!cycle(c))
    return std::nullopt;
  updateDrained();
  if (fetchDone_ && eng_[0].drained && eng_[1].drained && eng_[2].drained && c >= arrayFree_) {
    st_.last_cycle = std::max(st_.last_cycle, c); // E6: DONE waits for the array
    finished_ = true;
    return std::nullopt;
  }
  if (!checkStarvation(c))
    return std::nullopt;
  const std::optional<u64> n = nextCycle(c);
  if (!n) {
    describeDeadlock(c);
    return std::nullopt;
  }
  if (*n > budget_) {
    std::int64_t oldest = -1;
    std::string engine = "fetch";
    for (int e = 0; e < 3; ++e)
      if (eng_[e].phase != Phase::Idle &&
          (oldest < 0 || std::int64_t(eng_[e].cur.index) < oldest)) {
        oldest = eng_[e].cur.index;
        engine = kEngineNames[e];
      }
    raise(FaultKind::CycleBudget, engine, oldest,
          "cycle budget of " + std::to_string(budget_) + " cycles exceeded after " +
              std::to_string(st_.retired) + " of " + std::to_string(st_.instructions) +
              " instructions retired",
          budget_, budget_ + 1);
    return std::nullopt;
  }
  return n;
}

bool Npu::cycle(u64 c) {
  popped_ = false;
  fetchWrote_ = false;
  const bool ok = retirePhase(c) && startPhase(c) && fetchPhase(c);
  if (st_.fault)
    ended_.clear(); // a fault's cycle retires nothing (docs/simulator.md, "Faults")
  else
    countEnded(c);
  return ok;
}

void Npu::countEnded(u64 c) {
  for (Ended& x : ended_) {
    st_.retire(isa_, x.insn, x.counts, std::move(x.slice), opts_.record_slices);
    if (opts_.progress && st_.retired % 1024 == 0)
      opts_.progress(c, st_.retired, st_.instructions);
  }
  ended_.clear();
}

// E3/E4: an instruction ends at start + duration; it retires in that cycle when every
// FIFO it pushes into had room at the start of the cycle (a pop frees room from the next
// cycle on), else it waits, stalled on tokens.
bool Npu::retirePhase(u64 c) {
  for (int e = 0; e < 3; ++e) {
    EngineState& s = eng_[e];
    if (s.phase == Phase::Busy && s.end <= c)
      s.phase = Phase::WaitPush;
    if (s.phase == Phase::WaitPush && !tryRetire(e, c))
      return false;
  }
  return true;
}

bool Npu::tokenFifos(int e, u64 c, bool push, std::array<int, 2>& fifos) {
  const EngineState& s = eng_[e];
  fifos = {-1, -1};
  for (bool next : {false, true}) {
    const char* role = push ? (next ? isa::role::kPushNext : isa::role::kPushPrev)
                            : (next ? isa::role::kPopNext : isa::role::kPopPrev);
    if (!flag(*s.cur.insn, role))
      continue;
    const int other = next ? e + 1 : e - 1;
    if (other < 0 || other > 2) {
      raise(push ? FaultKind::TokenOverflow : FaultKind::TokenUnderflow, kEngineNames[e],
            s.cur.index,
            std::string(role) + " on the " + kEngineNames[e] + " engine, which has no " +
                (next ? "next" : "previous") + " engine" +
                (push ? " to receive the token" : ": the FIFO can never hold a token"),
            c);
      return false;
    }
    fifos[next] = push ? fifoIndex(e, next) : fifoIndex(other, !next);
  }
  return true;
}

bool Npu::tryRetire(int e, u64 c) {
  EngineState& s = eng_[e];
  std::array<int, 2> fifos;
  if (!tokenFifos(e, c, true, fifos))
    return false;
  for (int f : fifos)
    if (f >= 0 && tokens_[f] >= isa_.hw().queues.token_fifo_depth)
      return true; // no room yet
  for (int f : fifos)
    if (f >= 0)
      ++tokens_[f];
  s.slice.end = c;
  s.slice.push_stall = c - s.end;
  s.phase = Phase::Idle;
  ended_.push_back(Ended{std::move(*s.cur.insn), s.counts, std::move(s.slice)});
  s.cur.insn.reset();
  s.slice = Slice{};
  return true;
}

// E1/E2: in engine order load, compute, store: a free engine takes the head of its
// queue (written by fetch in an earlier cycle); an engine holding an instruction starts
// it in the first cycle every FIFO it pops from holds a token, counting tokens pushed
// in this same cycle.
bool Npu::startPhase(u64 c) {
  for (int e = 0; e < 3; ++e) {
    EngineState& s = eng_[e];
    if (s.phase == Phase::Idle && !queue_[e].empty() && queue_[e].front().dispatch < c) {
      s.cur = std::move(queue_[e].front());
      queue_[e].pop_front();
      s.slice.index = s.cur.index;
      s.slice.engine = e;
      s.slice.dispatch = s.cur.dispatch;
      s.slice.take = c;
      s.slice.name = s.cur.insn->name();
      s.phase = Phase::WaitPop;
    }
    if (s.phase == Phase::WaitPop && !tryStart(e, c))
      return false;
  }
  return true;
}

bool Npu::tryStart(int e, u64 c) {
  EngineState& s = eng_[e];
  const isa::Instruction& in = *s.cur.insn;
  std::array<int, 2> fifos;
  if (!tokenFifos(e, c, false, fifos))
    return false;
  for (int f : fifos)
    if (f >= 0 && tokens_[f] == 0)
      return true; // waits for a token
  // E6: a gemm, a compute sync and finish wait for the array to finish its last gemm.
  const bool array = in.desc().cls->on_array;
  if (e == 1 && isa::timing::waitsForArray(in.desc()) && c < arrayFree_)
    return true;
  // Duration first: an instruction that would end past the budget stops the run before
  // its data effect is computed, so host time stays bounded by the budget.
  isa::timing::Duration t;
  isa::timing::Channel probe = *channel_;
  std::optional<isa::timing::DmaPhases> dma;
  if (s.cur.cls == Cls::DmaLoad || s.cur.cls == Cls::DmaStore) {
    dma = isa::timing::dmaPhases(isa_, in);
    t = isa::timing::dmaOnChannel(*dma, c, probe);
  } else
    t = isa::timing::idle(isa_, in);
  // E6: a background array instruction holds its engine for its issue cycles; the array
  // runs it for t.
  const u64 arrayCycles = t.cycles;
  t.cycles = isa::timing::engineCycles(in.desc(), t.cycles);
  if (t.overflow) {
    raise(FaultKind::CycleBudget, kEngineNames[e], s.cur.index,
          in.name() + ": its duration does not fit a 64-bit cycle count", c);
    return false;
  }
  if (c > budget_ || t.cycles > budget_ - c) {
    raise(FaultKind::CycleBudget, kEngineNames[e], s.cur.index,
          "cycle budget of " + std::to_string(budget_) + " cycles exceeded: " + in.name() +
              " starting at cycle " + std::to_string(c) + " takes " + std::to_string(t.cycles) +
              " cycles (" + std::to_string(st_.retired) + " of " +
              std::to_string(st_.instructions) + " instructions retired)",
          budget_, c);
    return false;
  }
  s.counts = Counts{};
  m_.setArrayBusy(c < arrayFree_);
  if (auto f = m_.execute(in, s.cur.cls, s.counts)) {
    raise(f->kind, kEngineNames[e], s.cur.index, in.name() + ": " + f->reason, c);
    return false;
  }
  for (int f : fifos)
    if (f >= 0) {
      --tokens_[f];
      popped_ = true;
    }
  if (dma && dma->uses_channel) {
    // D3: the channel is booked in start order, load before store; on a shared DRAM the
    // wait beyond this device's own last booking is arbitration (M2, docs/systems.md).
    const u64 ready = c + dma->head, own = std::max(ready, ownFree_);
    arbitrationStall_ += t.memory_stall - (own - ready);
    ownFree_ = probe.free_at;
    booked_ = true;
  }
  *channel_ = probe;
  s.slice.start = c;
  s.slice.memory_stall = t.memory_stall;
  s.end = c + t.cycles;
  if (array)
    arrayFree_ = c + arrayCycles;
  s.phase = Phase::Busy;
  return true;
}

// F1/F2: fetch writes at most one instruction per cycle, in stream order, into its
// engine's queue when that queue has room after this cycle's takes.
bool Npu::fetchPhase(u64 c) {
  if (fetchDone_ || c < fetchAt_)
    return true;
  const unsigned W = isa_.instructionBytes();
  const std::int64_t i = std::int64_t(next_);
  Pending p;
  p.index = std::uint32_t(next_);
  try {
    p.insn = isa::Instruction::decode(isa_, job_.text.data() + next_ * W, "<program>",
                                      "instruction " + std::to_string(next_));
    p.cls = classOf(p.insn->desc());
  } catch (const std::exception& ex) {
    raise(FaultKind::IllegalOpcode, "fetch", i, ex.what(), c);
    return false;
  }
  int e = -1;
  try {
    e = static_cast<int>(p.insn->engine());
  } catch (const std::exception&) {
    e = -1;
  }
  if (e < 0 || e > 2) {
    raise(FaultKind::BadOperand, "fetch", i,
          p.insn->name() + " names no engine (engine field out of range)", c);
    return false;
  }
  if (queue_[e].size() >= depth_[e]) {
    fetchBlocked_ = true;
    return true;
  }
  st_.fetch_stall += c - fetchAt_;
  fetchBlocked_ = false;
  fetchWrote_ = true;
  p.dispatch = c;
  const bool halt = p.cls == Cls::Halt;
  queue_[e].push_back(std::move(p));
  ++next_;
  fetchAt_ = c + 1;
  fetchDone_ = halt || next_ >= count_;
  return true;
}

void Npu::updateDrained() {
  for (int e = 0; e < 3; ++e)
    eng_[e].drained = fetchDone_ && queue_[e].empty() && eng_[e].phase == Phase::Idle;
}

bool Npu::checkStarvation(u64 c) {
  const u64 depth = isa_.hw().queues.token_fifo_depth;
  for (int e = 0; e < 3; ++e) {
    const EngineState& s = eng_[e];
    if (s.phase != Phase::WaitPop && s.phase != Phase::WaitPush)
      continue;
    const isa::Instruction& in = *s.cur.insn;
    for (bool next : {false, true}) {
      if (s.phase == Phase::WaitPop) {
        const char* role = next ? isa::role::kPopNext : isa::role::kPopPrev;
        const int from = next ? e + 1 : e - 1;
        const int f = from >= 0 && from <= 2 ? fifoIndex(from, !next) : -1;
        if (f < 0 || !flag(in, role) || tokens_[f] > 0 || !eng_[from].drained)
          continue;
        raise(FaultKind::TokenUnderflow, kEngineNames[e], s.cur.index,
              std::string(role) + " of " + in.name() + " on an empty " + kEngineNames[from] + "->" +
                  kEngineNames[e] + " token FIFO, and the " + kEngineNames[from] +
                  " engine has retired all its instructions",
              c, c + 1);
        return false;
      }
      const char* role = next ? isa::role::kPushNext : isa::role::kPushPrev;
      const int to = next ? e + 1 : e - 1;
      const int f = fifoIndex(e, next);
      if (f < 0 || !flag(in, role) || tokens_[f] < depth || !eng_[to].drained)
        continue;
      raise(FaultKind::TokenOverflow, kEngineNames[e], s.cur.index,
            std::string(role) + " of " + in.name() + " into the full " + kEngineNames[e] + "->" +
                kEngineNames[to] + " token FIFO (depth " + std::to_string(depth) + "), and the " +
                kEngineNames[to] +
                " engine has retired all its instructions: no room will ever come",
            c, c + 1);
      return false;
    }
  }
  return true;
}

std::optional<u64> Npu::nextCycle(u64 c) const {
  std::optional<u64> n;
  auto consider = [&](u64 x) { n = n ? std::min(*n, x) : x; };
  bool waitPush = false;
  for (const auto& s : eng_) {
    if (s.phase == Phase::Busy)
      consider(std::max(s.end, c + 1));
    waitPush = waitPush || s.phase == Phase::WaitPush;
  }
  if (arrayFree_ > c)
    consider(arrayFree_); // E6: a gemm, sync or finish may wait for the array
  if (popped_ && waitPush)
    consider(c + 1); // room made by a pop is usable from the next cycle
  if (fetchWrote_)
    consider(c + 1); // its engine may take it; fetch may write the next one
  else if (!fetchDone_ && !fetchBlocked_)
    consider(std::max(c + 1, fetchAt_));
  return n;
}

void Npu::describeDeadlock(u64 c) {
  std::string reason = "no engine can progress:";
  std::int64_t first = -1;
  std::string firstEngine = "compute";
  for (int e = 0; e < 3; ++e) {
    const EngineState& s = eng_[e];
    if (s.drained) {
      reason += std::string(" ") + kEngineNames[e] + " has finished;";
      continue;
    }
    if (s.phase == Phase::WaitPop || s.phase == Phase::WaitPush) {
      const bool push = s.phase == Phase::WaitPush;
      const isa::Instruction& in = *s.cur.insn;
      int other = -1;
      for (bool next : {false, true}) {
        const int nb = next ? e + 1 : e - 1;
        if (nb < 0 || nb > 2)
          continue;
        const int out = fifoIndex(e, next), in2 = fifoIndex(nb, !next);
        if (push && out >= 0 && flag(in, next ? isa::role::kPushNext : isa::role::kPushPrev) &&
            tokens_[out] >= isa_.hw().queues.token_fifo_depth)
          other = fifoConsumer(out);
        if (!push && in2 >= 0 && flag(in, next ? isa::role::kPopNext : isa::role::kPopPrev) &&
            tokens_[in2] == 0)
          other = fifoProducer(in2);
      }
      reason += std::string(" ") + kEngineNames[e] + " waits at instruction " +
                std::to_string(s.cur.index) + " (" + in.name() + ") " +
                (push ? "for room in its full token FIFO to " : "for a token from ") +
                (other >= 0 ? kEngineNames[other] : "?") + ";";
      if (first < 0 || std::int64_t(s.cur.index) < first) {
        first = s.cur.index;
        firstEngine = kEngineNames[e];
      }
    } else {
      reason += std::string(" ") + kEngineNames[e] + " waits for instructions;";
    }
  }
  if (fetchBlocked_ && !fetchDone_)
    reason += " fetch waits at instruction " + std::to_string(next_) + " for room in a full queue;";
  reason.pop_back();
  raise(FaultKind::Deadlock, firstEngine, first, reason, c, c + 1);
}

} // namespace ember::sim::detail
