// The heap on huge pages before the libraries' constructors (ember/cli/HugePageHeap.h).
#include "ember/cli/HugePageHeap.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace ember::cli {

namespace {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

/// The heap's first chunk and the untouched one that pads to a huge page boundary: kept
/// for the life of the process (reachable, not leaked). Volatile: the compiler may drop a
/// malloc whose result nobody reads, and it did drop the pad's.
void* volatile firstChunk = nullptr;
void* volatile padChunk = nullptr;
} // namespace

void heapOnHugePages(int, char**, char**) {
  if (!kGlibcHeap)
    return;
  constexpr std::uintptr_t kHuge = std::uintptr_t(1) << 21;
  if (!mallopt(M_MMAP_THRESHOLD, 8 << 20) || !mallopt(M_TRIM_THRESHOLD, 128 << 20) ||
      !mallopt(M_TOP_PAD, 64 << 20))
    return;
  void* const first = std::malloc(16); // grows the heap by the top pad
  firstChunk = first;
  const auto at = reinterpret_cast<std::uintptr_t>(first);
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t lo = (at + kHuge - 1) & ~(kHuge - 1), hi = end & ~(kHuge - 1);
  if (!first || at > end || hi <= lo) // not on the brk heap, or no whole huge page
    return;
  if (madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE) != 0)
    return;
  // The chunk after the pad starts at `lo` (a chunk's header is 16 bytes before its data,
  // which the pad's size leaves out): what the libraries allocate from then on, SystemC's
  // 3 MiB first, lies on whole huge pages; the pad itself is never touched.
  if (lo - at > 64)
    padChunk = std::malloc(lo - at - 32);
}

void heapOneArena() {
  if (kGlibcHeap)
    mallopt(M_ARENA_MAX, 1);
}

} // namespace ember::cli
