// Registers of a description's map looked up by name: for the parts that give registers a
// meaning (the SystemC platform, the runtime, the RTL platform), so that a vendor's map
// may place them anywhere and a missing one is a clear error, not a wrong offset.
#pragma once

#include "ember/isa/description.h"

#include <cstdint>
#include <string_view>

namespace ember::isa {

/// Offset of register `name`; throws Error (the description's file, "/registers") saying
/// that `user` (e.g. "the runtime") needs it when the map has none.
std::uint32_t registerOffset(const IsaDescription& isa, std::string_view name,
                             std::string_view user);
/// Bits of field `field` of register `reg` as a mask; throws as registerOffset.
std::uint32_t registerFieldMask(const IsaDescription& isa, std::string_view reg,
                                std::string_view field, std::string_view user);
/// The field's bit range; throws as registerOffset.
BitRange registerField(const IsaDescription& isa, std::string_view reg, std::string_view field,
                       std::string_view user);

/// Word `w` (0 or 1) of the description's SHA-256 as the little-endian 32-bit value of
/// ISA_HASH_LO (w = 0) and ISA_HASH_HI (w = 1): bytes 4w to 4w+3, the first the lowest.
std::uint32_t isaHashWord(const IsaDescription& isa, int w);
/// ISA_HASH_HI:ISA_HASH_LO, the first 8 bytes of the hash (what an RTL model reports).
std::uint64_t isaHash64(const IsaDescription& isa);

} // namespace ember::isa
