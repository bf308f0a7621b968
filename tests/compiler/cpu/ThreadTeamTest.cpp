// The cpu backend's ThreadTeam (compiler/backends/cpu/ThreadTeam.h): the dynamic schedule
// of the generated code, driven here by a program of two nodes written by hand (node 0
// fills a, node 1 reads all of a). A member that starts late, or not at all, holds nobody
// up and takes no part of a run that is over; a member that sleeps inside a part is
// waited for; the bytes are the same whichever member takes which part.
#include "ThreadTeam.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace ember::cpu {
namespace {

constexpr int64_t kParts = 12, kPerPart = 50, kN = kParts * kPerPart;

/// The state the hand-written program runs on (the generated code's environment).
struct Env {
  ThreadTeam* team = nullptr;
  std::vector<int64_t> a = std::vector<int64_t>(kN), b = std::vector<int64_t>(kParts);
  std::atomic<int64_t> run{0};          ///< the run the test started last
  std::atomic<bool> holdMember1{false}; ///< member 1 waits for `release` on entering
  std::atomic<bool> release{false};
  std::atomic<bool> member1Held{false}; ///< member 1 is being held in a run
  std::atomic<bool> member1Left{false}; ///< member 1 returned from a held run
  std::atomic<int> partsByMember1{0};   ///< parts member 1 computed
  std::atomic<bool> member1SleepsInParts{false};
  std::atomic<int> member1PartsBefore{0}; ///< partsByMember1 when the run started
};

thread_local int64_t tMember = -1, tRun = -1;

/// Node 0, part c: a[i] = i + 1000 * run over the part's range.
void fill(void* e, int64_t c, int64_t chunks, void*) {
  auto* env = static_cast<Env*>(e);
  EXPECT_EQ(chunks, kParts);
  if (tMember == 1) {
    env->partsByMember1.fetch_add(1);
    if (env->member1SleepsInParts.load())
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
  } else if (env->member1SleepsInParts.load()) {
    // Member 0 holds its part until member 1 has taken one of this run.
    while (env->partsByMember1.load() == env->member1PartsBefore.load())
      std::this_thread::yield();
  }
  for (int64_t i = c * kPerPart; i < (c + 1) * kPerPart; ++i)
    env->a[size_t(i)] = i + 1000 * tRun;
}

/// Node 1, part c: b[c] = the sum of all of a plus c (needs every part of node 0).
void sum(void* e, int64_t c, int64_t, void*) {
  auto* env = static_cast<Env*>(e);
  if (tMember == 1)
    env->partsByMember1.fetch_add(1);
  int64_t s = 0;
  for (int64_t v : env->a)
    s += v;
  env->b[size_t(c)] = s + c;
}

/// What ember_run does: each node's parts, a wait before the node that reads its result,
/// and a wait for every node at the end.
void program(void* e, int64_t tid, int64_t nth) {
  auto* env = static_cast<Env*>(e);
  EXPECT_EQ(nth, 2);
  tMember = tid;
  tRun = env->run.load();
  const bool held = tid == 1 && env->holdMember1.load();
  if (held)
    env->member1Held.store(true);
  while (held && !env->release.load())
    std::this_thread::yield();
  env->team->runNode(e, 0, kParts, fill, nullptr, tid);
  env->team->waitNode(0, kParts, tid);
  env->team->runNode(e, 1, kParts, sum, nullptr, tid);
  env->team->waitNode(1, kParts, tid);
  if (held)
    env->member1Left.store(true);
}

/// Runs the program once as run `run` and checks every byte against the sums computed
/// here.
void runAndCheck(ThreadTeam& team, Env& env, int64_t run) {
  env.run.store(run);
  env.member1PartsBefore.store(env.partsByMember1.load());
  team.run(program, &env);
  int64_t s = 0;
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(env.a[size_t(i)], i + 1000 * run) << "run " << run << ", a[" << i << "]";
    s += i + 1000 * run;
  }
  for (int64_t c = 0; c < kParts; ++c)
    ASSERT_EQ(env.b[size_t(c)], s + c) << "run " << run << ", b[" << c << "]";
}

/// A team of two members prepared for the program's two nodes, and its environment.
struct TwoMembers {
  TwoMembers() {
    team.prepare(2);
    env.team = &team;
  }
  ThreadTeam team{2};
  Env env;
};

TEST(CpuThreadTeam, ALateMemberHoldsNobodyUpAndTakesNoPartOfAnEndedRun) {
  TwoMembers t;
  ThreadTeam& team = t.team;
  Env& env = t.env;
  // Member 1 is held at the start of run 1 (or joins after it): member 0 computes every
  // part of run 1 alone (were it to wait for member 1, run 1 would never return).
  env.holdMember1.store(true);
  runAndCheck(team, env, 1);
  // Member 1 enters run 1 (over by then) and is held there while run 2 runs.
  while (!env.member1Held.load())
    std::this_thread::yield();
  env.holdMember1.store(false);
  runAndCheck(team, env, 2);
  EXPECT_EQ(env.partsByMember1.load(), 0);
  // Released, member 1 goes through run 1 (over) and run 2 (over) and takes nothing.
  env.release.store(true);
  while (!env.member1Left.load())
    std::this_thread::yield();
  EXPECT_EQ(env.partsByMember1.load(), 0);
  EXPECT_EQ(env.a[0], 2000);
  // Both members from now on; any split gives the same bytes.
  for (int64_t run = 3; run < 200; ++run)
    runAndCheck(team, env, run);
}

TEST(CpuThreadTeam, AWaitLastsUntilTheLastPartIsFinished) {
  TwoMembers t;
  ThreadTeam& team = t.team;
  Env& env = t.env;
  env.release.store(true);
  // Member 0 holds its first part until member 1 has taken one, in which member 1 sleeps
  // long past member 0's spinning: member 0 then sleeps in the wait for node 0 and is
  // woken by member 1's last part.
  env.member1SleepsInParts.store(true);
  for (int64_t run = 1; run < 20; ++run)
    runAndCheck(team, env, run);
  EXPECT_GE(env.partsByMember1.load(), 19);
}

TEST(CpuThreadTeam, OneMemberRunsEveryNodeAsOnePart) {
  ThreadTeam team(1);
  team.prepare(2);
  Env env;
  env.team = &team;
  std::vector<int64_t> seen;
  struct Probe {
    static void part(void* e, int64_t c, int64_t chunks, void*) {
      static_cast<std::vector<int64_t>*>(e)->push_back(c * 100 + chunks);
    }
  };
  team.runNode(&seen, 0, kParts, Probe::part, nullptr, 0);
  team.waitNode(0, kParts, 0);
  EXPECT_EQ(seen, std::vector<int64_t>{1}); // part 0 of 1
}

} // namespace
} // namespace ember::cpu
