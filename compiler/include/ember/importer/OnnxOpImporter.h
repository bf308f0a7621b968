#pragma once
/// \file
/// What an ONNX operator's importer sees: one node being imported. Operator importers
/// live in compiler/importer/onnx/*Importers.cpp, one family per file, and register
/// themselves by ONNX op type. They translate attributes and operands, turning
/// compile-time-known operands (shapes, axes, pads) into attributes, and emit nodes.
///
/// This header does not include onnx/protobuf: only the importer links them.

#include "ember/graph/Graph.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ember {

/// The import state of one ONNX node. Implemented in OnnxImporter.cpp.
class OnnxNodeContext {
public:
  virtual ~OnnxNodeContext() = default;

  virtual Function& function() = 0;
  virtual Module& module() = 0;
  /// The ONNX op type and the node's name (or a generated one).
  virtual const std::string& opType() const = 0;
  virtual const std::string& nodeName() const = 0;
  /// The opset version of the default domain.
  virtual int64_t opset() const = 0;

  /// Operands. An operand given as "" in ONNX is absent.
  virtual size_t numInputs() const = 0;
  virtual bool hasInput(size_t i) const = 0;
  /// The operand's value; throws (naming the node) if absent.
  virtual NodeValue input(size_t i) = 0;
  /// The operand's value when known at import time (a Constant), else nullopt.
  virtual std::optional<Tensor> constantInput(size_t i) = 0;
  /// The operand as a list of integers; throws "operand WHAT must be known at compile
  /// time" when it is not constant.
  virtual std::vector<int64_t> constantInts(size_t i, const char* what) = 0;
  /// The operand as a list of floats (same rule).
  virtual std::vector<double> constantFloats(size_t i, const char* what) = 0;

  /// Number of outputs the ONNX node declares (including optional ones).
  virtual size_t numOutputs() const = 0;
  /// Whether output i is used (declared with a non-empty name).
  virtual bool hasOutput(size_t i) const = 0;

  /// Attributes (ONNX names), with defaults for absent ones.
  virtual bool hasAttr(const std::string& name) const = 0;
  virtual int64_t attrInt(const std::string& name, int64_t def) const = 0;
  virtual double attrFloat(const std::string& name, double def) const = 0;
  virtual std::string attrString(const std::string& name, const std::string& def) const = 0;
  virtual std::vector<int64_t> attrInts(const std::string& name,
                                        std::vector<int64_t> def = {}) const = 0;
  virtual std::vector<double> attrFloats(const std::string& name,
                                         std::vector<double> def = {}) const = 0;
  virtual std::vector<std::string> attrStrings(const std::string& name,
                                               std::vector<std::string> def = {}) const = 0;
  /// A tensor-valued attribute (Constant's value, ConstantOfShape's value).
  virtual std::optional<Tensor> attrTensor(const std::string& name) const = 0;

  /// Emits a node named after the ONNX node (plus `suffix`); when every input is a
  /// Constant the node is evaluated at once and a Constant is returned instead.
  virtual Node* emitNode(NodeKind kind, std::vector<NodeValue> inputs, Attrs attrs = {},
                         const std::string& suffix = "") = 0;
  /// emitNode returning result 0.
  NodeValue emit(NodeKind kind, std::vector<NodeValue> inputs, Attrs attrs = {},
                 const std::string& suffix = "") {
    return NodeValue(emitNode(kind, std::move(inputs), std::move(attrs), suffix), 0);
  }
  /// A new Constant named after the node.
  virtual NodeValue constant(Tensor t, const std::string& suffix = "") = 0;

  /// Binds ONNX output i to `v`.
  virtual void setOutput(size_t i, NodeValue v) = 0;

  /// Throws ember::Error naming the model, the node and its op type.
  [[noreturn]] virtual void fail(const std::string& reason) const = 0;
  /// Throws ember::Unsupported (well-formed, but a feature Ember lacks), same naming.
  [[noreturn]] virtual void unsupported(const std::string& reason) const = 0;
};

using OnnxOpImportFn = std::function<void(OnnxNodeContext&)>;

/// How Ember imports one ONNX op type: the one place that says which attributes it knows.
struct OnnxOpDef {
  /// The ONNX attributes (of any opset version) the importer reads, or may ignore because
  /// they cannot change an inference result (BatchNormalization's momentum). The importer
  /// reads no other (OnnxNodeContext checks). A node carrying another attribute is
  /// refused before import: ember::Unsupported when the ONNX schema of the model's opset
  /// defines it (a feature Ember lacks), ember::Error when it does not (a typo).
  std::vector<std::string> attrs;
  /// The importer.
  OnnxOpImportFn fn;
};

/// Registers the importer of ONNX op `opType` (default domain) with the attributes it
/// knows (see OnnxOpDef::attrs).
void registerOnnxOp(const std::string& opType, std::vector<std::string> attrs, OnnxOpImportFn fn);
/// The definition of `opType`, or nullptr.
const OnnxOpDef* findOnnxOp(const std::string& opType);

/// Family registration functions, one per file in compiler/importer/onnx/.
void registerOnnxElementwiseImporters();
void registerOnnxReductionImporters();
void registerOnnxNNImporters();
void registerOnnxDataMovementImporters();
void registerOnnxQuantImporters();
void registerOnnxQLinearImporters();   // QLinearImporters.cpp
void registerOnnxIndexImporters();     // IndexImporters.cpp
void registerOnnxRecurrentImporters(); // RecurrentImporters.cpp
void registerOnnxComposedImporters();  // ComposedImporters.cpp

} // namespace ember
