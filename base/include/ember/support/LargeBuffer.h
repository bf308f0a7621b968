// Host memory for large byte images: a binary's file, a device's DRAM.
#pragma once

#include "ember/support/AtomicFile.h"

#include <cstdint>
#include <string>

namespace ember {

/// Bytes reserved from the host as anonymous pages and not written: a page costs memory
/// only once touched, and reads 0 until written. From 2 MiB on, the reservation is
/// aligned to, and advised for, transparent huge pages where the host has them (Linux's
/// "madvise" mode), so that filling tens of MiB takes a few page faults instead of
/// thousands (and reading them, a few TLB entries). Move-only; the memory is returned to the host
/// when the buffer goes.
class LargeBuffer {
public:
  LargeBuffer() = default;
  /// Reserves `capacity` bytes, size() 0. Throws ember::Error naming `what` when the host
  /// refuses the reservation. `hugePages` false: 4 KiB pages whatever the size, for a
  /// sparse buffer of which only a few scattered bytes are written.
  explicit LargeBuffer(std::uint64_t capacity, const std::string& what = "memory",
                       bool hugePages = true);
  ~LargeBuffer();
  LargeBuffer(LargeBuffer&& o) noexcept;
  LargeBuffer& operator=(LargeBuffer&& o) noexcept;
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;

  std::uint8_t* data() { return data_; }
  const std::uint8_t* data() const { return data_; }
  /// Bytes in use (what a reader filled), at most capacity().
  std::uint64_t size() const { return size_; }
  std::uint64_t capacity() const { return capacity_; }
  /// Sets size(); throws std::length_error past capacity().
  void resize(std::uint64_t n);
  /// Moves the pages holding the size() bytes to `dst` (a page boundary inside memory
  /// the caller mapped, whose pages there it gives up) without copying them; the buffer is
  /// empty afterwards. False (and nothing changed) when the host cannot move them. The
  /// bytes of the last page past size() come along.
  bool moveTo(std::uint8_t* dst);

private:
  void release();
  void* map_ = nullptr;        ///< The reservation as mapped.
  std::uint64_t mapBytes_ = 0; ///< Its length.
  std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0, capacity_ = 0;
};

/// The file at `path` read into a LargeBuffer (size() its length): readFileBytes's checks
/// and errors, without a copy beyond the read itself.
LargeBuffer readFileBuffer(const std::string& path, std::uint64_t limit = kDefaultReadLimit);

} // namespace ember
