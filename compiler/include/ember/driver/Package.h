#pragma once
/// \file
/// A partitioned model as one file (docs/package.md): the container of
/// ember/isa/package.h holding "manifest.json" (the segments in execution order, their
/// backends, the boundary values with type and quantization, the model's inputs and
/// outputs, the placement of every node), one "segN.elf" per NPU segment (the binary
/// ember-run runs on the NPU) and one "segN.graph" per host segment (Ember's graph IR,
/// Serialize.h, which the interpreter runs and the cpu backend compiles when loaded).
/// A model the NPU runs whole is not a package: emberc writes the plain NPU binary.

#include "ember/driver/Partition.h"
#include "ember/isa/description.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::partition {

/// The package's bytes (deterministic), for description `isa`; an NPU segment with its own
/// description (Segment::isa, another hash) is serialised for it and the manifest names it.
/// Throws ember::Error for a whole plan (write the NPU binary instead) or what the format
/// cannot carry (a constant model output).
std::vector<uint8_t> packageBytes(const Plan& plan, const isa::IsaDescription& isa);
/// Writes the package atomically.
void writePackage(const std::string& path, const Plan& plan, const isa::IsaDescription& isa);

/// True if the file starts with the package magic.
bool isPackageFile(const std::string& path);
/// Loads a package built for `isa`: the container checked (version, every CRC), the
/// description's hash compared (a package for another description is refused), every
/// NPU binary parsed and every host segment rebuilt and type-checked. The plan has no
/// partitioned function (Plan::function is null) and runs with PlanExecutor.
/// `others`: the descriptions an NPU segment may be compiled for besides `isa` (a system's
/// devices'); a segment whose description is neither is refused, naming it and --system.
Plan loadPackage(const std::string& path, const isa::IsaDescription& isa,
                 const std::vector<isa::IsaDescription>& others = {});
Plan parsePackage(const uint8_t* data, size_t size, const isa::IsaDescription& isa,
                  const std::string& file, const std::vector<isa::IsaDescription>& others = {});

} // namespace ember::partition
