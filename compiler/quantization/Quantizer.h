#pragma once
/// \file
/// The quantizer's working state (private to compiler/quantization): the float
/// function being read, the int8 function being built, and for every float value its
/// float and/or int8 counterpart in the new function, created on demand. The per-kind
/// rules (QuantizeRules.cpp) use it to build int8 nodes.

#include "ember/quantization/Numerics.h"
#include "ember/quantization/Quantize.h"

#include <functional>
#include <map>
#include <optional>

namespace ember {
namespace quant {

class Quantizer;

/// A rule: builds the int8 form of node `n` and returns true, or returns false WITHOUT
/// creating anything when the rule does not apply (the node then stays float).
using RuleFn = std::function<bool(const Node& n, Quantizer& q)>;

/// The rule of `k`, or nullptr.
const RuleFn* findRule(NodeKind k);
/// Whether the int8 form of kind `k` chooses its own output parameters (rather than
/// keeping its input's, as max pools, Relu, Clip and data movement do).
bool ownsOutputParams(NodeKind k);

class Quantizer {
public:
  Quantizer(const Function& src, Function& dst, const Profile& profile,
            const QuantizeOptions& options);

  /// Translates every node, then the outputs.
  void run();
  const QuantizeStats& stats() const { return stats_; }

  // ---- for the rules -----------------------------------------------------------------
  /// The per-tensor int8 parameters `v` has (or will have) in the new function: those of
  /// its int8 counterpart if one exists, else from the profile (or, for a float Constant,
  /// from its values); nullopt when unknown.
  std::optional<QuantParams> paramsOf(NodeValue v);
  /// Whether a node or an output of the float function reads `v`.
  bool isUsed(NodeValue v) const;
  /// The nodes of the float function that read `v`.
  std::vector<const Node*> readersOf(NodeValue v) const;
  /// Whether `v` already has an int8 counterpart.
  bool hasInt8(NodeValue v) const { return int8_.count(v) != 0; }
  /// The int8 counterpart of `v` (made by QuantizeLinear, or a quantized Constant);
  /// paramsOf(v) must be known.
  NodeValue int8Of(NodeValue v);
  /// The counterpart of `v` in its original kind (float: by DequantizeLinear if only an
  /// int8 counterpart exists; placeholders and constants are shared).
  NodeValue origOf(NodeValue v);
  /// Records the int8 counterpart of a float value.
  void setInt8(NodeValue v, NodeValue q) { int8_[v] = q; }
  /// Creates an int8 node in the new function (results given explicitly) and counts it.
  Node* createInt8(NodeKind kind, const std::string& name, std::vector<NodeValue> inputs,
                   Attrs attrs, std::vector<Type> results);
  /// A new constant of the module.
  Node* constant(const std::string& name, Tensor t);
  /// The kind's Rescale of an int8 value to parameters `to` (the value itself if equal).
  NodeValue rescaled(NodeValue int8Value, const QuantParams& to, const std::string& name);

private:
  void shareConcatParams();
  void translate(const Node& n);
  void copyFloat(const Node& n);

  const Function& src_;
  Function& dst_;
  const Profile& profile_;
  const QuantizeOptions& options_;
  std::map<NodeValue, NodeValue> orig_, int8_;
  std::map<NodeValue, QuantParams> params_;
  QuantizeStats stats_;
};

/// An int8 type of shape `dims` and parameters `q`.
inline Type int8Type(const Shape& dims, const QuantParams& q) {
  return Type(ElemKind::Int8, dims, q);
}

} // namespace quant
} // namespace ember
