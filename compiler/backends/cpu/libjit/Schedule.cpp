// The schedule of an AOT bundle (Bundle.cpp), with the signatures of the JIT's dynamic
// one (ThreadTeam.h): the bundle's threads take the parts of a node in turn (thread t
// parts t, t + nth, ...), and a wait is one call of the bundle's barrier. One thread runs
// every node as a single part, as the JIT does with one thread.
#include "Libjit.h"

typedef void (*EmberPartFn)(void* env, int64_t chunk, int64_t chunks, void* scratch);

EMBER_KERNEL void ember_static_run_node(void* team, void* env, int64_t node, int64_t chunks,
                                        EmberPartFn fn, void* scratch, int64_t tid, int64_t nth) {
  (void)team;
  (void)node;
  if (nth <= 1) {
    fn(env, 0, 1, scratch);
    return;
  }
  for (int64_t c = tid; c < chunks; c += nth)
    fn(env, c, chunks, scratch);
}

EMBER_KERNEL void ember_static_wait(void* team, void (*barrier)(void*), const int64_t* nodes,
                                    int64_t count, int64_t before, int64_t tid, int64_t nth) {
  (void)nodes;
  (void)count;
  (void)before;
  (void)tid;
  if (nth > 1)
    barrier(team);
}
