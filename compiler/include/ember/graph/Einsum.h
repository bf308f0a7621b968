#pragma once
/// \file
/// The meaning of an Einsum equation for given operand shapes: which label each
/// dimension of each operand and of the result carries, and every label's extent. Type
/// inference and the interpreter kernel both use it, so the equation is parsed by one
/// piece of code.

#include "ember/tensor/Type.h"

#include <string>
#include <vector>

namespace ember {

/// A parsed and sized Einsum. Labels are small integers: the equation's letters, and
/// one label per dimension an ellipsis covers (right-aligned across operands, as
/// numpy broadcasts them).
struct EinsumPlan {
  /// The label of each dimension of each operand (a label repeated within an operand
  /// takes the diagonal).
  std::vector<std::vector<int>> operandLabels;
  /// The label of each dimension of the result.
  std::vector<int> outputLabels;
  /// Extent of every label (index = label).
  std::vector<int64_t> extents;
  /// Labels summed over (in no operand of the result).
  std::vector<int> summedLabels;
};

/// Parses `equation` ("ij,jk->ik", "...ii->...i", implicit "ij,jk") for operands of
/// `shapes`. Throws ember::Error with the reason when the equation is malformed or
/// does not fit the shapes (a label of two different extents that are not 1).
EinsumPlan planEinsum(const std::string& equation, const std::vector<Shape>& shapes);

} // namespace ember
