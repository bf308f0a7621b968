#include "ThreadTeam.h"

#include <climits>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EMBER_CPU_PAUSE() _mm_pause()
#else
#define EMBER_CPU_PAUSE() ((void)0)
#endif

namespace ember::cpu {

namespace {

/// Polls of a wait (with `pause`) before the member goes to sleep: about 10-40 us, long
/// enough for the last part of a node on a free core, short enough that a member
/// waiting on a descheduled one gives its core away.
constexpr int kSpins = 1000;
/// Polls of a worker for the next run before it sleeps on the condition variable.
constexpr int kJobSpins = 1000;

/// Sleeps while `*word == seen` (spurious returns are fine: the callers loop).
void sleepOn(std::atomic<uint32_t>& word, uint32_t seen) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, nullptr, nullptr,
          0);
#else
  if (word.load() == seen)
    std::this_thread::yield();
#endif
}

void wakeAll(std::atomic<uint32_t>& word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
#else
  (void)word;
#endif
}

} // namespace

ThreadTeam::ThreadTeam(int threads)
    : threads_(threads < 1 ? 1 : threads),
      memberEpoch_(new std::atomic<uint64_t>[size_t(threads_)]) {
  for (int t = 0; t < threads_; ++t)
    memberEpoch_[t].store(0, std::memory_order_relaxed);
  for (int t = 1; t < threads_; ++t)
    workers_.emplace_back([this, t] { worker(t); });
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_)
    w.join();
}

void ThreadTeam::prepare(size_t nodes) {
  slots_.reset(new Slot[nodes ? nodes : 1]);
  // A node is noted at most twice (as a node of one part, and in a wait), as a pair.
  noted_.assign(size_t(threads_), {});
  for (auto& n : noted_)
    n.reserve(4 * nodes);
}

void ThreadTeam::worker(int tid) {
  uint64_t seen = 0;
  for (;;) {
    // A run usually follows the last one closely: poll a while before sleeping.
    for (int spin = 0; spin < kJobSpins && job_.load(std::memory_order_acquire) == seen; ++spin)
      EMBER_CPU_PAUSE();
    void (*fn)(void*, int64_t, int64_t);
    void* env;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || job_.load(std::memory_order_relaxed) != seen; });
      if (stop_)
        return;
      seen = job_.load(std::memory_order_relaxed);
      fn = fn_;
      env = env_;
    }
    memberEpoch_[tid].store(seen, std::memory_order_relaxed);
    fn(env, tid, threads_);
  }
}

void ThreadTeam::run(void (*fn)(void*, int64_t, int64_t), void* env) {
  if (threads_ == 1) {
    fn(env, 0, 1);
    return;
  }
  uint64_t epoch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    env_ = env;
    epoch = job_.load(std::memory_order_relaxed) + 1;
    job_.store(epoch, std::memory_order_release);
  }
  wake_.notify_all();
  memberEpoch_[0].store(epoch, std::memory_order_relaxed);
  fn(env, 0, threads_);
}

int64_t ThreadTeam::take(Slot& s, uint64_t epoch, int64_t chunks, bool fromBack) {
  uint64_t v = s.next.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t e = v >> kCountBits;
    if (e > epoch)
      return -1; // a later run has begun: this member's run is over
    // The parts left, [front, back): all of them at the first take of this run.
    uint64_t front = e < epoch ? 0 : (v >> kEndBits) & kEndMask;
    uint64_t back = e < epoch ? uint64_t(chunks) : v & kEndMask;
    if (front >= back)
      return -1;
    const int64_t chunk = int64_t(fromBack ? --back : front++);
    const uint64_t next = (epoch << kCountBits) | (front << kEndBits) | back;
    if (s.next.compare_exchange_weak(v, next, std::memory_order_acq_rel, std::memory_order_relaxed))
      return chunk;
  }
}

void ThreadTeam::finish(Slot& s, uint64_t epoch, int64_t chunks) {
  uint64_t v = s.done.load(std::memory_order_relaxed), next;
  do {
    // A part of this run is unfinished, so no later run can have begun.
    const uint64_t count = (v >> kCountBits) == epoch ? (v & kCountMask) : 0;
    next = (epoch << kCountBits) | (count + 1);
  } while (
      !s.done.compare_exchange_weak(v, next, std::memory_order_seq_cst, std::memory_order_relaxed));
  if (int64_t(next & kCountMask) == chunks && sleepers_.load(std::memory_order_seq_cst) > 0) {
    signal_.fetch_add(1, std::memory_order_seq_cst);
    wakeAll(signal_);
  }
}

bool ThreadTeam::finished(const Slot& s, uint64_t epoch, int64_t chunks) {
  const uint64_t v = s.done.load(std::memory_order_seq_cst);
  return (v >> kCountBits) > epoch || v == ((epoch << kCountBits) | uint64_t(chunks));
}

void ThreadTeam::runNode(void* env, int64_t node, int64_t chunks, ChunkFn fn, void* scratch,
                         int64_t tid) {
  if (threads_ == 1) {
    fn(env, 0, 1, scratch);
    return;
  }
  Slot& s = slots_[size_t(node)];
  const uint64_t epoch = memberEpoch_[tid].load(std::memory_order_relaxed);
  if (chunks == 1 && tid != 0) {
    noted_[size_t(tid)].push_back(node);
    noted_[size_t(tid)].push_back(1);
    return;
  }
  for (int64_t c; (c = take(s, epoch, chunks, tid % 2 == 1)) >= 0;) {
    fn(env, c, chunks, scratch);
    finish(s, epoch, chunks);
  }
}

void ThreadTeam::waitNode(int64_t node, int64_t chunks, int64_t tid) {
  if (threads_ == 1)
    return;
  const Slot& s = slots_[size_t(node)];
  const uint64_t epoch = memberEpoch_[tid].load(std::memory_order_relaxed);
  for (int spin = 0; spin < kSpins; ++spin) {
    if (finished(s, epoch, chunks))
      return;
    EMBER_CPU_PAUSE();
  }
  // Announce the sleeper before the last check: a finisher that counts the last part
  // after that check sees it and bumps the futex word, so the sleep returns at once.
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    const uint32_t seen = signal_.load(std::memory_order_seq_cst);
    if (finished(s, epoch, chunks))
      break;
    sleepOn(signal_, seen);
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

void ThreadTeam::waitNodes(const int64_t* nodes, int64_t count, int64_t before, int64_t tid) {
  if (threads_ == 1)
    return;
  if (tid == 0) {
    for (int64_t i = 0; i < count; ++i)
      waitNode(nodes[2 * i], nodes[2 * i + 1], tid);
    return;
  }
  std::vector<int64_t>& noted = noted_[size_t(tid)];
  if (before == kAtEnd) {
    noted.clear();
    return;
  }
  noted.insert(noted.end(), nodes, nodes + 2 * count);
  if (before == kBeforeOnePart)
    return;
  for (size_t i = 0; i < noted.size(); i += 2)
    waitNode(noted[i], noted[i + 1], tid);
  noted.clear();
}

void ThreadTeam::runNodeEntry(void* team, void* env, int64_t node, int64_t chunks, ChunkFn fn,
                              void* scratch, int64_t tid, int64_t) {
  static_cast<ThreadTeam*>(team)->runNode(env, node, chunks, fn, scratch, tid);
}

void ThreadTeam::waitEntry(void* team, void (*)(void*), const int64_t* nodes, int64_t count,
                           int64_t before, int64_t tid, int64_t) {
  static_cast<ThreadTeam*>(team)->waitNodes(nodes, count, before, tid);
}

} // namespace ember::cpu
