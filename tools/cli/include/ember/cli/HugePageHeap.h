// The heap of a simulating tool on transparent huge pages, from before the shared
// libraries' constructors run.
#pragma once

namespace ember::cli {

/// Advises the start of the process's heap for transparent huge pages, for a tool that
/// runs the SystemC simulator (ember-sim, ember-run). SystemC allocates and zeroes a
/// 3 MiB scratch heap (sc_temp_heap) in its library constructor: on 4 KiB pages that is
/// some 770 page faults, about 7 ms of a 20 ms start on a virtual machine where a fresh
/// page costs ~12 us (bench/sim, issue 46 item 4). Run as a DT_PREINIT_ARRAY entry of the
/// executable (EMBER_CLI_HEAP_ON_HUGE_PAGES), i.e. before any library constructor: it
/// keeps allocations below 8 MiB on the heap (M_MMAP_THRESHOLD, as glibc's own dynamic
/// threshold would after the first large free), grows the heap 64 MiB at a time
/// (M_TOP_PAD, address space only: an untouched page costs nothing) and never trims it
/// below 128 MiB (M_TRIM_THRESHOLD), advises the heap's whole 2 MiB pages of its first
/// growth (MADV_HUGEPAGE: Linux's "madvise" mode) and pads the heap to such a boundary
/// with a chunk never touched, so that SystemC's 3 MiB and every later allocation lie on
/// huge pages. (Until 2026-12-07 the compiler dropped the pad's malloc, whose result
/// nobody read, and SystemC's block began some 900 KiB before the boundary: 220 of the
/// 478 page faults of `ember-sim --version`.) Nothing the
/// tools compute or write changes; where the host has no huge pages the pages are 4 KiB
/// as before. Does nothing under the sanitizers (their allocator is not glibc's heap).
void heapOnHugePages(int argc, char** argv, char** envp);

/// Makes every thread allocate from the process's one heap (glibc's M_ARENA_MAX 1), the
/// huge pages heapOnHugePages advised, for a process that only simulates: the SystemC
/// thread, where the engine allocates its pages of DRAM, the per-instruction slices and
/// its memories (some 900 fresh 4 KiB pages on ResNet-50 in an arena of its own, each a
/// page fault), and the control core's thread run by turns, never at once, so they gain
/// nothing from arenas of their own. Call before the process starts a thread; not for a
/// run whose host devices compute on several threads (interp, cpu), which allocate at
/// once. Does nothing under the sanitizers.
void heapOneArena();

} // namespace ember::cli

/// Puts ember::cli::heapOnHugePages into the executable's DT_PREINIT_ARRAY (once, in the
/// translation unit of its main).
#define EMBER_CLI_HEAP_ON_HUGE_PAGES                                                               \
  __attribute__((section(".preinit_array"), used)) static void (*const emberCliHeapPreinit)(       \
      int, char**, char**) = ember::cli::heapOnHugePages
