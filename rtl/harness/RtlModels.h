// Internal: the table of Verilated models this build holds (written by CMake into the
// build folder as rtl_models.cpp, one row per description, rtl/CMakeLists.txt).
#pragma once

#include "ember/rtl/NpuHarness.h"

#include <functional>
#include <string>
#include <vector>

namespace ember::rtl::detail {

struct ModelEntry {
  std::string name;
  std::function<std::uint64_t()> hash; ///< The model's isa_hash_o.
  std::function<RtlResult(const isa::IsaDescription&, const platform::Job&,
                          const platform::Options&, std::uint64_t)>
      run;
};

const std::vector<ModelEntry>& models();

} // namespace ember::rtl::detail
