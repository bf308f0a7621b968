#pragma once
/// \file
/// The operator registry: for each node kind, its operand names and its type
/// inference. This is the one place that says what a well-formed node of a kind is;
/// Function::create and the verifier both ask it.

#include "ember/graph/Node.h"

#include <functional>

namespace ember {

/// Infers result types from input values and attributes. Throws ember::Error with a
/// reason (the caller prefixes the node's name) when the node is ill-formed.
using InferFn =
    std::function<std::vector<Type>(const std::vector<NodeValue>& inputs, const Attrs& attrs)>;

/// The definition of one node kind.
struct OpInfo {
  NodeKind kind;
  /// Names of the operands, for dumps and error messages; inputs beyond the required
  /// count are optional (a null NodeValue means absent). A trailing "..." means
  /// variadic (Concat).
  std::vector<std::string> operandNames;
  unsigned minInputs = 1;
  InferFn infer;
};

/// The registered definition of `k`, or nullptr if none is registered.
const OpInfo* findOpInfo(NodeKind k);

/// Registers or replaces the definition of a kind (called by the op family files).
void registerOpInfo(OpInfo info);

/// Family registration functions, one per file in compiler/graph/ops/.
void registerElementwiseOps();
void registerReductionOps();
void registerNNOps();
void registerDataMovementOps();
void registerQuantOps();

} // namespace ember
