#pragma once
/// \file
/// The fused-activation attribute contract shared by the fuse-activation pass, every
/// kernel that computes Conv, Gemm, MatMul or Add (float and int8) and the NPU backend.
///
/// A node of those kinds may carry the string attribute `activation`:
///   - absent:  no activation;
///   - "relu":  y = x <= 0 ? 0 : x applied to the node's result (NaN stays NaN);
///   - "clip":  y = min(max(x, activation_min), activation_max) with float attributes
///              `activation_min` / `activation_max` (Clip's semantics: max first).
/// The activation is part of the node's meaning, so it is applied to the float result
/// (float kernels) or narrows the requantization clamp (int8 kernels, docs/numerics.md).
/// It lives with the graph's attribute views (not in passes/) because the interpreter,
/// the quantization numerics and every backend read it; header-only.

#include "ember/graph/Node.h"
#include "ember/support/Error.h"

#include <limits>

namespace ember {

/// Attribute names of the contract.
inline constexpr const char* kActivationAttr = "activation";
inline constexpr const char* kActivationMinAttr = "activation_min";
inline constexpr const char* kActivationMaxAttr = "activation_max";

/// Whether a node of kind `k` may carry a fused activation.
inline bool canCarryActivation(NodeKind k) {
  return k == NodeKind::Conv || k == NodeKind::Gemm || k == NodeKind::MatMul || k == NodeKind::Add;
}

/// A parsed `activation` attribute.
struct FusedActivation {
  enum class Kind { None, Relu, Clip };
  Kind kind = Kind::None;
  /// Clip bounds (for Relu: 0 and +inf); an absent bound is +-infinity.
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();

  bool active() const { return kind != Kind::None; }

  /// Whether `at` carries a fused activation (of any name), without validating it.
  static bool present(const Attrs& at) { return at.has(kActivationAttr); }

  /// Reads the attributes of `n`; ember::Error naming the node for an unknown
  /// activation or one on a kind that cannot carry it.
  static FusedActivation of(const Node& n) {
    FusedActivation a;
    const Attrs& at = n.attrs();
    if (!at.has(kActivationAttr))
      return a;
    const std::string where = std::string(n.kindName()) + " '" + n.name() + "'";
    if (!canCarryActivation(n.kind()))
      throw Error(where, "this kind cannot carry a fused activation");
    const std::string name = at.getString(kActivationAttr);
    if (name == "relu") {
      a.kind = Kind::Relu;
      a.lo = 0;
    } else if (name == "clip") {
      a.kind = Kind::Clip;
      a.lo = at.getFloat(kActivationMinAttr, a.lo);
      a.hi = at.getFloat(kActivationMaxAttr, a.hi);
    } else {
      throw Error(where, "unknown fused activation '" + name + "' (expected relu or clip)");
    }
    return a;
  }

  /// Writes the attributes of this activation into `at` (removing them for None).
  void writeTo(Attrs& at) const {
    at.erase(kActivationAttr);
    at.erase(kActivationMinAttr);
    at.erase(kActivationMaxAttr);
    if (kind == Kind::Relu) {
      at.set(kActivationAttr, std::string("relu"));
    } else if (kind == Kind::Clip) {
      at.set(kActivationAttr, std::string("clip"));
      at.set(kActivationMinAttr, lo);
      at.set(kActivationMaxAttr, hi);
    }
  }

  /// The activation of one float value, bit-identical to the Relu / Clip kernels.
  float apply(float x) const {
    if (kind == Kind::Relu)
      return x <= 0 ? 0.f : x; // NaN stays NaN (docs/numerics.md)
    const float y = static_cast<double>(x) < lo ? static_cast<float>(lo) : x;
    return static_cast<double>(y) > hi ? static_cast<float>(hi) : y;
  }
};

/// Applies the fused activation of `n` (if any) in place to its result `out`: the one
/// helper every float kernel of a fusable kind calls on its output.
inline void applyFusedActivation(const Node& n, Tensor& out) {
  const FusedActivation a = FusedActivation::of(n);
  if (!a.active())
    return;
  if (out.kind() == ElemKind::Float32) {
    float* p = out.data<float>();
    for (int64_t i = 0, e = out.size(); i < e; ++i)
      p[i] = a.apply(p[i]);
    return;
  }
  // A quantized result is clamped in the integer domain by the int8 kernel itself (the
  // bounds quantized with the result's scale and zero point, docs/numerics.md).
  if (out.type().quant.isQuantized())
    throw Unsupported(std::string(n.kindName()) + " '" + n.name() + "'",
                      "a fused activation on a quantized result must be applied by the int8 "
                      "kernel's requantization clamp");
  // Plain integer results (not produced by the passes): clamped by value.
  for (int64_t i = 0, e = out.size(); i < e; ++i) {
    const double v = out.getAsDouble(i);
    out.setFromDouble(i, v < a.lo ? a.lo : (v > a.hi ? a.hi : v));
  }
}

} // namespace ember
