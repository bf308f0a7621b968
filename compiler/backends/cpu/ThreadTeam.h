#pragma once
// A fixed team of threads that runs the generated code (`ember_run`) on every member (the
// caller is member 0), and the dynamic schedule that code calls for each node: a node is
// cut into `chunks` parts (disjoint outputs, each computed by the same arithmetic
// whatever member takes it), and the members take the parts from a per-node atomic
// counter, so a member that starts late or is descheduled simply takes fewer parts.
// Before a node that reads or writes what an earlier node touched, a member waits until
// every part of that earlier node is finished (a completion count, not a barrier: a member
// that has not arrived yet holds nobody up). Waits spin briefly, then sleep on a futex.
//
// A node of one part (a small one) is run by member 0; the other members, the helpers,
// do not wait for it: they note it and the waits before it, and wait for all those noted
// only before the next node of several parts, where they have work. So the helpers of a
// run of small nodes sleep once, and member 0 runs small nodes without waking anybody.
//
// Runs are numbered (epochs); every counter carries the epoch it counts for, so a member
// still finishing the traversal of an earlier run takes no part of a later one, and the
// caller's run() returns as soon as the outputs are complete, without waiting for late
// members.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::cpu {

/// One part of a node: `fn(env, chunk, chunks, scratch)` computes part `chunk` of
/// `chunks`, with `scratch` the calling member's own scratch buffer.
using ChunkFn = void (*)(void* env, int64_t chunk, int64_t chunks, void* scratch);

class ThreadTeam {
public:
  explicit ThreadTeam(int threads);
  /// Joins the workers, each once it is done with the run it is in (if any).
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return threads_; }
  /// Makes room for the counters of `nodes` nodes (node indices 0 .. nodes - 1); call
  /// before the first run.
  void prepare(size_t nodes);
  /// Starts fn(env, tid, size()) on every member and runs member 0's call on the calling
  /// thread; returns when the caller's call returns. Workers that are still in an earlier
  /// run join when they are done with it. The generated code's last waits make the caller
  /// return only once every node is finished.
  void run(void (*fn)(void* env, int64_t tid, int64_t nth), void* env);

  /// Member `tid` takes parts of node `node` until none is left (all of them when the
  /// team has one member); a node of one part is member 0's (the helpers note it).
  void runNode(void* env, int64_t node, int64_t chunks, ChunkFn fn, void* scratch, int64_t tid);
  /// Returns once every part of node `node` (of `chunks`) is finished in member `tid`'s
  /// run, or that run is over.
  void waitNode(int64_t node, int64_t chunks, int64_t tid);
  /// What a wait comes before: it tells the helpers whether to wait now.
  enum WaitBefore : int64_t {
    kBeforeParts = 0,   ///< a node of several parts: everybody waits
    kBeforeOnePart = 1, ///< a node of one part: member 0 waits, the helpers note the nodes
    kAtEnd = 2,         ///< the end of the run: member 0 waits, the helpers return
  };
  /// Member `tid`'s wait for the `count` nodes of `nodes` (pairs: node index, chunks).
  void waitNodes(const int64_t* nodes, int64_t count, int64_t before, int64_t tid);

  /// C entry points for the generated code (environment fields kEnvRunNode and
  /// kEnvWaitNodes; `team` is the kEnvTeam field). The bundle's single-threaded and
  /// static entry points (libjit/Schedule.cpp) have the same signatures.
  static void runNodeEntry(void* team, void* env, int64_t node, int64_t chunks, ChunkFn fn,
                           void* scratch, int64_t tid, int64_t nth);
  /// waitNodes; `barrier` is unused here (the bundle's static schedule calls it instead).
  static void waitEntry(void* team, void (*barrier)(void*), const int64_t* nodes, int64_t count,
                        int64_t before, int64_t tid, int64_t nth);

private:
  /// A node's counters: the parts left to take, [front, back), and the parts finished,
  /// each with its epoch in the high bits. One cache line each, so members do not share
  /// lines.
  struct alignas(64) Slot {
    std::atomic<uint64_t> next{0};
    char pad0[56];
    std::atomic<uint64_t> done{0};
    char pad1[56];
  };
  static constexpr unsigned kCountBits = 24;
  static constexpr uint64_t kCountMask = (uint64_t(1) << kCountBits) - 1;
  /// `next` holds front and back in 12 bits each under the epoch (parts <= kMaxParts).
  static constexpr unsigned kEndBits = 12;
  static constexpr uint64_t kEndMask = (uint64_t(1) << kEndBits) - 1;

public:
  /// The most parts of a node.
  static constexpr int64_t kMaxParts = int64_t(kEndMask);

private:
  void worker(int tid);
  /// The next part of `s` for `epoch`, or -1 when none is left: the first left, or with
  /// `fromBack` the last, so that two members on time take the two halves in order (each
  /// core then mostly reads what it wrote in the layer before), and one alone takes all.
  static int64_t take(Slot& s, uint64_t epoch, int64_t chunks, bool fromBack);
  /// Counts one finished part; wakes sleeping members when it was the last.
  void finish(Slot& s, uint64_t epoch, int64_t chunks);
  static bool finished(const Slot& s, uint64_t epoch, int64_t chunks);

  int threads_;
  std::vector<std::thread> workers_;
  std::unique_ptr<Slot[]> slots_;
  /// The epoch of the run each member is in (written by that member only).
  std::unique_ptr<std::atomic<uint64_t>[]> memberEpoch_;
  /// Each helper's noted nodes (pairs: node index, chunks), room for every node twice.
  std::vector<std::vector<int64_t>> noted_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<uint64_t> job_{0}; ///< the latest run's epoch
  bool stop_ = false;
  void (*fn_)(void*, int64_t, int64_t) = nullptr;
  void* env_ = nullptr;
  /// Members asleep in waitNode, and the futex word finishers bump to wake them.
  std::atomic<int> sleepers_{0};
  std::atomic<uint32_t> signal_{0};
};

} // namespace ember::cpu
