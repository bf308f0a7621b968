// A sparse image of a job's DRAM window.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace ember::platform {

/// Bytes of a DRAM window, stored sparsely: 64 KiB pages are allocated on their first
/// write, and a byte never written reads as 0. So a window as large as
/// hardware.dram.size_bytes (4 GiB in ember-v1) costs only the pages a job touches.
/// Copies share their pages until one side writes (copy-on-write), so handing an image
/// to a run copies nothing. A page may also be a view of memory the image does not own
/// (view(): a device's DRAM handed to its engine without a copy), read in place and
/// copied on its first write like a shared page.
class DramImage {
public:
  static constexpr std::uint64_t kPageBytes = std::uint64_t(1) << 16;

  DramImage() = default;
  /// An image whose bytes [0, flat.size()) are `flat` (not explicit, so a test's
  /// std::vector converts).
  DramImage(const std::vector<std::uint8_t>& flat);

  /// Copies `n` bytes at `addr` to `out` (0 for bytes never written).
  void read(std::uint64_t addr, std::uint8_t* out, std::uint64_t n) const;
  /// The `n` bytes at `addr`.
  std::vector<std::uint8_t> read(std::uint64_t addr, std::uint64_t n) const;
  /// Byte at `addr`.
  std::uint8_t operator[](std::uint64_t addr) const;
  /// Stores `n` bytes at `addr`.
  void write(std::uint64_t addr, const std::uint8_t* in, std::uint64_t n);
  void write(std::uint64_t addr, const std::vector<std::uint8_t>& bytes) {
    write(addr, bytes.data(), bytes.size());
  }
  /// Makes the pages of [addr, addr + n) (`addr` and `n` multiples of kPageBytes) views
  /// of the `n` bytes at `bytes`, replacing what they held: reads see those bytes as
  /// they are when read, a write copies the page first (the bytes are never written). The
  /// bytes must outlive this image and every copy that still holds one of these pages.
  void view(std::uint64_t addr, const std::uint8_t* bytes, std::uint64_t n);
  /// Pages allocated or viewed so far (each kPageBytes).
  std::size_t pages() const { return pages_.size(); }
  /// One past the last byte of the highest allocated page (0 when empty).
  std::uint64_t extent() const;
  /// Calls f(address, bytes, kPageBytes) for every allocated page, in address order (to
  /// copy an image out without reading the whole window).
  template <class F> void forEachPage(F&& f) const {
    for (const auto& [page, p] : pages_)
      f(page * kPageBytes, static_cast<const std::uint8_t*>(p->bytes), kPageBytes);
  }
  /// Equal contents (a page never written equals a page of zeros).
  bool operator==(const DramImage& o) const;
  bool operator!=(const DramImage& o) const { return !(*this == o); }

private:
  /// kPageBytes at `bytes`: its own (`owned`) or a view of memory it does not own.
  struct Page {
    std::uint8_t* bytes = nullptr;
    std::unique_ptr<std::uint8_t[]> owned;
  };
  /// A page of its own holding the kPageBytes at `from` (zeros when null).
  static std::shared_ptr<Page> ownPage(const std::uint8_t* from);
  /// The page of `addr`, allocated (and unshared) for writing.
  std::uint8_t* writable(std::uint64_t page);
  std::map<std::uint64_t, std::shared_ptr<Page>> pages_;
};

} // namespace ember::platform
