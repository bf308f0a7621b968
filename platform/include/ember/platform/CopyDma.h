// The copy DMA of the control core (registers COPY_*, docs/firmware.md section 6): one
// model of its timing and effect that the SystemC platform and the RTL platform both use,
// so that they agree cycle for cycle. The firmware programs it to copy a job's constants
// into the job's window and to stream the binary's sections for the digest check's
// CRC-32Cs.
#pragma once

#include "ember/isa/description.h"

#include <cstdint>

namespace ember::platform {

/// Cycles a transfer of `bytes` takes from the cycle after its START write to the cycle
/// DONE shows: hardware.dma.latency_cycles + passes * ceil(bytes / dram.bytes_per_cycle),
/// one pass over DRAM for a CHECK (read only), two for a copy (every byte read and
/// written through the one DRAM port).
std::uint64_t copyDmaCycles(const isa::IsaDescription& isa, std::uint64_t bytes, bool check);

/// The copy DMA's state, as its registers show it.
class CopyDma {
public:
  explicit CopyDma(const isa::IsaDescription& isa);

  /// A COPY_CTRL write with START in platform cycle `now` and the registers' values:
  /// ignored while a transfer is busy; otherwise the bytes move now (nothing reads them
  /// before DONE shows) and DONE shows at now + 1 + copyDmaCycles. A range outside
  /// device DRAM [0, dram_bytes) moves nothing and ends at once (now + 1) with ERROR.
  void start(std::uint64_t now, std::uint8_t* dram, std::uint64_t dram_bytes, std::uint64_t src,
             std::uint64_t dst, std::uint32_t len, std::uint32_t seed, bool check);
  /// COPY_STATUS in cycle `now` (fields of the description's map).
  std::uint32_t status(std::uint64_t now) const;
  /// COPY_CRC in cycle `now`: the CRC-32C of the last finished transfer.
  std::uint32_t crc(std::uint64_t now) const;
  bool busy(std::uint64_t now) const { return started_ && now < doneAt_; }
  /// The first cycle after `now` in which status() may differ from status(now) with no
  /// START in between: a busy transfer's end, else never (UINT64_MAX). The SystemC
  /// platform answers the firmware's polls up to it without asking again.
  std::uint64_t statusSteadyUntil(std::uint64_t now) const {
    return busy(now) ? doneAt_ : ~std::uint64_t(0);
  }

private:
  const isa::IsaDescription& isa_;
  std::uint32_t busyMask_, doneMask_, errorMask_;
  bool started_ = false, error_ = false;
  std::uint64_t doneAt_ = 0;
  std::uint32_t crc_ = 0, prevCrc_ = 0;
};

} // namespace ember::platform
