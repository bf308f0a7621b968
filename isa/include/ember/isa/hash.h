// Self-contained SHA-256 (FIPS 180-4), used for the ISA identity of binaries, and CRC-32C,
// the per-section digest of the binary container (docs/isa/assembly-binary.md section 6).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ember::isa {

/// A SHA-256 digest.
using Sha256Digest = std::array<std::uint8_t, 32>;

/// SHA-256 of `size` bytes at `data`. Implemented here so libember_isa needs no crypto
/// library; it identifies descriptions, it is not used for security.
Sha256Digest sha256(const void* data, std::size_t size);
/// SHA-256 of a string's bytes.
inline Sha256Digest sha256(std::string_view s) {
  return sha256(s.data(), s.size());
}
/// Lower-case hexadecimal of a digest (64 characters).
std::string toHex(const Sha256Digest& d);

/// CRC-32C (Castagnoli: reflected polynomial 0x82F63B78, initial value and final XOR
/// 0xFFFFFFFF), as iSCSI and ext4 use it; crc32c("123456789") == 0xE3069283. `crc` continues
/// a previous result (pass the value returned for the bytes before), 0 starts afresh.
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0);

} // namespace ember::isa
