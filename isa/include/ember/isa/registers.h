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

} // namespace ember::isa
