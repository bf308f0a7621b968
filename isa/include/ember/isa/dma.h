// The DRAM bytes a DMA instruction reaches, from its fields and the description alone.
#pragma once

#include "ember/isa/description.h"
#include "ember/isa/instruction.h"

#include <cstdint>
#include <optional>

namespace ember::isa {

/// True for an instruction of the dma-load or dma-store class.
bool isDma(const Instruction& in);

/// One past the last DRAM byte a DMA instruction reads or writes:
/// `dram_addr + ((size2-1)*stride2 + (size1-1)*stride1 + size0) * row_bytes`, row_bytes
/// being the row of the SRAM its `sram` field selects, saturating at 2^64-1 so that no
/// field values wrap round into the window. nullopt when `in` is not a DMA or moves no
/// DRAM byte (a size of 0); a select that names no memory gives 2^64-1 (it reaches no
/// valid byte). One bound for the simulator's dram-out-of-range fault and the host's
/// DMA_EXTENT check of descriptions without a firmware build; the firmware's C check
/// (firmware/src/validate.c, docs/firmware.md section 3) computes the same box.
std::optional<std::uint64_t> dmaDramEnd(const IsaDescription& isa, const Instruction& in);

} // namespace ember::isa
