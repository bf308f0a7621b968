// Host-side layout of I/O tensors: logical row-major elements <-> the bytes the I/O table
// places in DRAM (Flat: as is; Nchwc: N, C/L, H, W, L with channels zero-padded to L; a
// 2-D Nchwc entry [N, C] is laid out as [N, C, 1, 1], as the NPU keeps a fully connected
// layer's rows).
#pragma once

#include "ember/isa/binary.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::platform {

/// Bytes of `entry` in DRAM from its logical elements (row-major, `entry.shape`,
/// isa::sizeOf(entry.dtype) bytes each). `lanes` is the act row's lane count (the L of
/// Nchwc). Throws isa::Error if `elems` has the wrong size or an Nchwc shape is not 4-D or 2-D.
std::vector<std::uint8_t> packIo(const isa::IoEntry& entry, const std::vector<std::uint8_t>& elems,
                                 unsigned lanes);
/// The inverse: logical row-major elements of `entry` from its DRAM bytes.
std::vector<std::uint8_t> unpackIo(const isa::IoEntry& entry, const std::uint8_t* dram,
                                   unsigned lanes);

/// The input entry `name` of `bin` that `size` bytes of DRAM-layout data are for. Throws
/// isa::Error (naming the input) for a name the binary has no input of, or a size other
/// than the entry's.
const isa::IoEntry& inputEntry(const isa::Binary& bin, const std::string& name, std::size_t size);

} // namespace ember::platform
