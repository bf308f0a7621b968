// The copy DMA of CopyDma.h.
#include "ember/platform/CopyDma.h"

#include "ember/isa/hash.h"
#include "ember/isa/registers.h"

#include <algorithm>
#include <cstring>

namespace ember::platform {

namespace {
constexpr const char* kUser = "the copy DMA (docs/firmware.md section 6)";
}

std::uint64_t copyDmaCycles(const isa::IsaDescription& isa, std::uint64_t bytes, bool check) {
  const std::uint64_t bpc = isa.hw().dram.bytes_per_cycle;
  return isa.hw().dma.latency_cycles + (check ? 1 : 2) * ((bytes + bpc - 1) / bpc);
}

CopyDma::CopyDma(const isa::IsaDescription& isa)
    : isa_(isa), busyMask_(isa::registerFieldMask(isa, "COPY_STATUS", "BUSY", kUser)),
      doneMask_(isa::registerFieldMask(isa, "COPY_STATUS", "DONE", kUser)),
      errorMask_(isa::registerFieldMask(isa, "COPY_STATUS", "ERROR", kUser)) {}

void CopyDma::start(std::uint64_t now, std::uint8_t* dram, std::uint64_t dram_bytes,
                    std::uint64_t src, std::uint64_t dst, std::uint32_t len, std::uint32_t seed,
                    bool check) {
  if (busy(now))
    return;
  prevCrc_ = started_ ? crc_ : 0;
  started_ = true;
  const bool inside = src <= dram_bytes && len <= dram_bytes - src &&
                      (check || (dst <= dram_bytes && len <= dram_bytes - dst));
  error_ = !inside;
  if (!inside) {
    crc_ = seed;
    doneAt_ = now + 1;
    return;
  }
  if (!check && (dst >= src + len || src >= dst + len)) {
    // Apart: one pass, each chunk's CRC then its copy while it is in the cache (a job's
    // constants, tens of MiB, were read from DRAM twice).
    constexpr std::uint64_t kChunk = std::uint64_t(1) << 16;
    std::uint32_t crc = seed;
    for (std::uint64_t at = 0; at < len; at += kChunk) {
      const std::uint64_t n = std::min<std::uint64_t>(kChunk, len - at);
      crc = isa::crc32c(dram + src + at, n, crc);
      std::memcpy(dram + dst + at, dram + src + at, n);
    }
    crc_ = crc;
  } else {
    crc_ = isa::crc32c(dram + src, len, seed); // the source as it was, then the move
    if (!check)
      std::memmove(dram + dst, dram + src, len);
  }
  doneAt_ = now + 1 + copyDmaCycles(isa_, len, check);
}

std::uint32_t CopyDma::status(std::uint64_t now) const {
  if (!started_)
    return 0;
  if (now < doneAt_)
    return busyMask_;
  return doneMask_ | (error_ ? errorMask_ : 0u);
}

std::uint32_t CopyDma::crc(std::uint64_t now) const {
  return started_ && now >= doneAt_ ? crc_ : prevCrc_;
}

} // namespace ember::platform
