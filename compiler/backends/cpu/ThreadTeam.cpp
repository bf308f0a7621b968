#include "ThreadTeam.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EMBER_CPU_PAUSE() _mm_pause()
#else
#define EMBER_CPU_PAUSE() ((void)0)
#endif

namespace ember::cpu {

ThreadTeam::ThreadTeam(int threads) : threads_(threads < 1 ? 1 : threads) {
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

void ThreadTeam::worker(int tid) {
  uint64_t seen = 0;
  for (;;) {
    void (*fn)(void*, int64_t, int64_t);
    void* env;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || job_ != seen; });
      if (stop_)
        return;
      seen = job_;
      fn = fn_;
      env = env_;
    }
    fn(env, tid, threads_);
    barrier();
  }
}

void ThreadTeam::run(void (*fn)(void*, int64_t, int64_t), void* env) {
  if (threads_ == 1) {
    fn(env, 0, 1);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    env_ = env;
    ++job_;
  }
  wake_.notify_all();
  fn(env, 0, threads_);
  barrier();
}

void ThreadTeam::barrier() {
  if (threads_ == 1)
    return;
  const uint64_t phase = phase_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
    arrived_.store(0, std::memory_order_relaxed);
    phase_.store(phase + 1, std::memory_order_release);
    return;
  }
  for (int spin = 0; phase_.load(std::memory_order_acquire) == phase; ++spin) {
    if (spin < 20000)
      EMBER_CPU_PAUSE();
    else
      std::this_thread::yield();
  }
}

void ThreadTeam::barrierEntry(void* team) {
  static_cast<ThreadTeam*>(team)->barrier();
}

} // namespace ember::cpu
