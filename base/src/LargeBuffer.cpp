// Large anonymous reservations advised for transparent huge pages (LargeBuffer.h).
#include "ember/support/LargeBuffer.h"

#include "ember/support/Error.h"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

namespace ember {

namespace {
/// The huge page size transparent huge pages use on x86-64 and arm64 (4 KiB base pages).
constexpr std::uint64_t kHugePage = std::uint64_t(1) << 21;
} // namespace

LargeBuffer::LargeBuffer(std::uint64_t capacity, const std::string& what, bool hugePages) {
  if (capacity == 0)
    return;
  // One huge page more than asked, so that the buffer can start on a huge page boundary;
  // a buffer smaller than a huge page gets 4 KiB pages (a huge one would be zeroed whole).
  const bool huge = hugePages && capacity >= kHugePage;
  const std::uint64_t bytes = capacity + (huge ? kHugePage : 0);
  if (bytes < capacity)
    throw Error(what, "cannot reserve " + std::to_string(capacity) + " bytes");
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw Error(what,
                "cannot reserve " + std::to_string(capacity) + " bytes: " + std::strerror(errno));
  map_ = p;
  mapBytes_ = bytes;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::uint64_t align = huge ? kHugePage : 1;
  data_ = reinterpret_cast<std::uint8_t*>((at + align - 1) / align * align);
  capacity_ = capacity;
#ifdef MADV_HUGEPAGE
  if (huge)
    ::madvise(data_, capacity_, MADV_HUGEPAGE); // a hint: without huge pages, 4 KiB ones
#endif
}

LargeBuffer::~LargeBuffer() {
  release();
}

LargeBuffer::LargeBuffer(LargeBuffer&& o) noexcept
    : map_(std::exchange(o.map_, nullptr)), mapBytes_(std::exchange(o.mapBytes_, 0)),
      data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)),
      capacity_(std::exchange(o.capacity_, 0)) {}

LargeBuffer& LargeBuffer::operator=(LargeBuffer&& o) noexcept {
  if (this != &o) {
    release();
    map_ = std::exchange(o.map_, nullptr);
    mapBytes_ = std::exchange(o.mapBytes_, 0);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
  }
  return *this;
}

void LargeBuffer::resize(std::uint64_t n) {
  if (n > capacity_)
    throw std::length_error("LargeBuffer::resize: " + std::to_string(n) + " bytes, capacity " +
                            std::to_string(capacity_));
  size_ = n;
}

bool LargeBuffer::moveTo(std::uint8_t* dst) {
#ifdef MREMAP_FIXED
  const auto page = std::uint64_t(::sysconf(_SC_PAGESIZE));
  const std::uint64_t bytes = (size_ + page - 1) / page * page;
  if (!data_ || bytes == 0 || reinterpret_cast<std::uintptr_t>(dst) % page ||
      reinterpret_cast<std::uintptr_t>(data_) % page)
    return false;
  if (::mremap(data_, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, dst) == MAP_FAILED)
    return false;
  // What is left of the reservation goes now: the moved range is free address space that
  // another mapping may take, which a later munmap of the whole must not touch.
  auto* lo = static_cast<std::uint8_t*>(map_);
  if (data_ > lo)
    ::munmap(lo, std::size_t(data_ - lo));
  if (data_ + bytes < lo + mapBytes_)
    ::munmap(data_ + bytes, std::size_t(lo + mapBytes_ - (data_ + bytes)));
  map_ = nullptr;
  release();
  return true;
#else
  (void)dst;
  return false;
#endif
}

void LargeBuffer::release() {
  if (map_)
    ::munmap(map_, mapBytes_);
  map_ = nullptr;
  data_ = nullptr;
  mapBytes_ = size_ = capacity_ = 0;
}

} // namespace ember
