#pragma once
/// \file
/// The NPU as an executing ember::Backend. What it supports is the NPU compiler's answer
/// (`npu::createNpuBackend`); compiling a function gives the NPU binary of all of it (no
/// host fallback: a backend runs what it supports, the partitioner mixes backends); running
/// it goes through an NpuRunner, because the compiler does not link the simulator. The
/// device layer registers one as "npu" (`ember::session::registerNpuBackend`), so
/// programs and tests that link it get the NPU from `createBackend("npu")` like any other
/// backend.

#include "ember/backend/Backend.h"
#include "ember/driver/Execute.h"
#include "ember/isa/description.h"

#include <memory>

namespace ember::partition {

/// The NPU of description `isa`, running its binaries through `runner`. `compile`
/// throws ember::Unsupported listing every node (kind, name, reason) the NPU cannot
/// take; the compiled function takes the function's float inputs and gives its outputs
/// (float outputs dequantized as the function's DequantizeLinear nodes do).
std::unique_ptr<Backend> createNpuBackend(const isa::IsaDescription& isa, NpuRunner runner,
                                          npu::CompileOptions options = {});

} // namespace ember::partition
