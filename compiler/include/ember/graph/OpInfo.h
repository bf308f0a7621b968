#pragma once
/// \file
/// The operator registry: for each node kind, its operand names and its type
/// inference. This is the one place that says what a well-formed node of a kind is;
/// Function::create and the verifier both ask it.

#include "ember/graph/Node.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

namespace ember {

/// Infers result types from input values and attributes. Throws ember::Error with a
/// reason (the caller prefixes the node's name) when the node is ill-formed.
using InferFn =
    std::function<std::vector<Type>(const std::vector<NodeValue>& inputs, const Attrs& attrs)>;

/// Properties of a kind that passes and backends ask about. They are stated where the
/// kind is defined (its family file in compiler/graph/ops), so an operator is described
/// in one place and no pass keeps a list of kinds of its own.
enum class OpTrait : uint32_t {
  /// One input; result[i] depends on input[i] alone, so a transpose commutes with it.
  ElementwiseUnary = 1u << 0,
  /// Two operands combined index by index after broadcasting (transposes of equal
  /// operands commute with it).
  ElementwiseBinary = 1u << 1,
  /// result[i] is computed from the inputs at index i only (broadcast operands at their
  /// broadcast index) and has an input's element size: it may overwrite that input.
  InPlaceSafe = 1u << 2,
  /// Its int8 form moves or selects codes (data movement, max, ReLU/Clip on codes): the
  /// result keeps its input's quantization parameters.
  KeepsQuantization = 1u << 3,
};

/// The definition of one node kind.
struct OpInfo {
  NodeKind kind;
  /// Names of the operands, for dumps and error messages; inputs beyond the required
  /// count are optional (a null NodeValue means absent). A trailing "..." means
  /// variadic (Concat).
  std::vector<std::string> operandNames;
  unsigned minInputs = 1;
  InferFn infer;
  uint32_t traits = 0; ///< OpTrait bits.
};

/// The registered definition of `k`, or nullptr if none is registered.
const OpInfo* findOpInfo(NodeKind k);

/// Registers or replaces the definition of a kind (called by the op family files).
void registerOpInfo(OpInfo info);
/// Adds traits to kinds registered already (called by the op family files).
void addOpTraits(std::initializer_list<NodeKind> kinds, std::initializer_list<OpTrait> traits);
/// Whether kind `k` has trait `t`.
bool hasTrait(NodeKind k, OpTrait t);
/// "elementwise-unary, in-place" (the kind's traits, for docs), or "".
std::string traitNames(NodeKind k);

/// Family registration functions, one per file in compiler/graph/ops/.
void registerElementwiseOps();
void registerReductionOps();
void registerNNOps();
void registerDataMovementOps();
void registerQuantOps();
void registerIndexOps();

} // namespace ember
