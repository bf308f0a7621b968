#pragma once
/// \file
/// Comparing a backend's outputs with a reference's, for the compiler's tests.

#include "ember/backend/Backend.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ember::test {

/// "" when every output agrees within tol * max(1, max |ref|) (NaN where the reference
/// has NaN; integers and booleans exactly), else the first difference.
inline std::string compareOutputs(const TensorMap& got, const TensorMap& ref, double tol) {
  for (const auto& [name, r] : ref) {
    auto it = got.find(name);
    if (it == got.end())
      return "missing output " + name;
    const Tensor& g = it->second;
    if (g.type().kind != r.type().kind || g.dims() != r.dims())
      return name + ": type " + g.type().toString() + " vs " + r.type().toString();
    double maxRef = 1;
    for (int64_t i = 0; i < r.size(); ++i)
      if (std::isfinite(r.getAsDouble(i)))
        maxRef = std::max(maxRef, std::fabs(r.getAsDouble(i)));
    const double bound = r.kind() == ElemKind::Float32 ? tol * maxRef : 0.0;
    for (int64_t i = 0; i < r.size(); ++i) {
      const double a = g.getAsDouble(i), b = r.getAsDouble(i);
      const bool bad =
          std::isnan(b) ? !std::isnan(a) : (std::isinf(b) ? a != b : !(std::fabs(a - b) <= bound));
      if (bad)
        return name + " element " + std::to_string(i) + ": " + std::to_string(a) + " vs " +
               std::to_string(b) + " (bound " + std::to_string(bound) + ")";
    }
  }
  return "";
}

} // namespace ember::test
