#pragma once
/// \file
/// Typed views of the attributes of the element-wise kinds (Nodes.def: elementwise
/// unary and binary), each with ONNX's defaults applied in one place. Passes, the
/// interpreter, quantization and the backends read these instead of attribute strings.

#include "ember/graph/Node.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace ember {

/// The real parameters of the float unary maps (LeakyRelu, Elu, Selu, Celu,
/// ThresholdedRelu, HardSigmoid, Shrink), with the ONNX default of the node's kind for
/// each absent one (0 where a kind has no such parameter).
struct UnaryAttrs {
  double alpha = 0, beta = 0, gamma = 0, bias = 0, lambd = 0;
};
/// Reads the parameters of a node of kind `k` with attributes `a`, with the defaults of
/// its kind.
UnaryAttrs unaryOf(NodeKind k, const Attrs& a);
inline UnaryAttrs unaryOf(const Node& n) {
  return unaryOf(n.kind(), n.attrs());
}

/// Clip's bounds (float; an absent bound is unbounded).
struct ClipAttrs {
  std::optional<double> min, max; ///< As written.
  /// The lower bound, `def` when absent.
  double lo(double def = -std::numeric_limits<double>::infinity()) const {
    return min.value_or(def);
  }
  /// The upper bound, `def` when absent.
  double hi(double def = std::numeric_limits<double>::infinity()) const {
    return max.value_or(def);
  }
  bool bounded() const { return min || max; }
};
ClipAttrs clipOf(const Attrs& a);

/// Cast: the name of the target element kind ("" when absent).
struct CastAttrs {
  std::string to;
};
CastAttrs castOf(const Attrs& a);

/// IsInf: which infinities are detected (both by default).
struct IsInfAttrs {
  bool detectNegative = true, detectPositive = true;
};
IsInfAttrs isInfOf(const Attrs& a);

/// Mod: C fmod (true) or Python's sign of the divisor (false, the default).
struct ModAttrs {
  bool fmod = false;
};
ModAttrs modOf(const Attrs& a);

/// BitShift: "LEFT" or "RIGHT" ("" when absent, which type inference rejects).
struct BitShiftAttrs {
  std::string direction;
  bool left() const { return direction == "LEFT"; }
};
BitShiftAttrs bitShiftOf(const Attrs& a);

} // namespace ember
