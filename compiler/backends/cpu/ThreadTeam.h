#pragma once
// A fixed team of threads that runs one function on every member (the caller is
// member 0) and a barrier the generated code calls between nodes. Members spin briefly
// at the barrier, then yield, so that an oversubscribed host still makes progress.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::cpu {

class ThreadTeam {
public:
  explicit ThreadTeam(int threads);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return threads_; }
  /// Runs fn(env, tid, size()) on every member; returns when all have finished.
  void run(void (*fn)(void* env, int64_t tid, int64_t nth), void* env);
  /// Every member waits until all have arrived.
  void barrier();
  /// C entry point of barrier() for the generated code (argument: the team).
  static void barrierEntry(void* team);

private:
  void worker(int tid);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  uint64_t job_ = 0;
  bool stop_ = false;
  void (*fn_)(void*, int64_t, int64_t) = nullptr;
  void* env_ = nullptr;
  std::atomic<int> arrived_{0};
  std::atomic<uint64_t> phase_{0};
};

} // namespace ember::cpu
