#pragma once
/// \file
/// Module and Function: the containers of the high-level graph IR (as in Glow).
///
/// A Module owns the storage shared by its functions (Placeholders: run-time inputs;
/// Constants: weights and folded values) and the functions. A Function is a list of
/// nodes kept in topological order plus its named outputs. Nodes are created through
/// `Function::create`, which infers and checks result types from the op registry, so
/// a graph is well-typed by construction.

#include "ember/graph/Node.h"

#include <list>
#include <optional>

namespace ember {

class Module;

/// A computation: nodes in topological order and named outputs.
class Function {
public:
  Function(Module* m, std::string name) : module_(m), name_(std::move(name)) {}
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  const std::string& name() const { return name_; }
  Module& module() const { return *module_; }

  /// Creates a node of `kind`, infers its result types (ember::Error with the node's
  /// name if inputs or attributes are invalid) and appends it. When `resultTypes` is
  /// given (quantized results), each must agree in kind and shape with inference, and
  /// its quantization parameters are kept. The name is made unique if taken.
  Node* create(NodeKind kind, const std::string& name, std::vector<NodeValue> inputs,
               Attrs attrs = {}, std::optional<std::vector<Type>> resultTypes = std::nullopt);

  /// Nodes in topological order (Placeholders/Constants are not here: see Module).
  const std::list<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  size_t numNodes() const { return nodes_.size(); }

  /// Named outputs, in order.
  struct Output {
    std::string name;
    NodeValue value;
  };
  const std::vector<Output>& outputs() const { return outputs_; }
  void addOutput(const std::string& name, NodeValue v) { outputs_.push_back({name, v}); }
  void setOutputValue(size_t i, NodeValue v) { outputs_.at(i).value = v; }

  /// Placeholders read by this function, in Module order.
  std::vector<Node*> inputs() const;

  /// Replaces every use of `from` (node inputs and outputs) by `to`.
  void replaceAllUsesOf(NodeValue from, NodeValue to);
  /// Number of uses of any result of `n` (inputs of nodes plus outputs).
  size_t numUses(const Node* n) const;
  /// Removes `n`, which must have no uses.
  void erase(Node* n);
  /// Removes nodes none of whose results reach an output; returns how many.
  size_t eraseDeadNodes();
  /// Re-sorts nodes_ topologically (stable: keeps the current order where possible).
  void topoSort();
  /// Looks a node up by name (nullptr if absent).
  Node* findNode(const std::string& name) const;

private:
  Module* module_;
  std::string name_;
  std::list<std::unique_ptr<Node>> nodes_;
  std::vector<Output> outputs_;
};

/// Owner of storage and functions.
class Module {
public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  Function* createFunction(const std::string& name);
  Function* getFunction(const std::string& name) const;

  /// The file the module was imported from ("" when built in memory): run-time and
  /// backend errors start with it, as import errors do.
  const std::string& source() const { return source_; }
  void setSource(std::string s) { source_ = std::move(s); }
  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }

  /// A run-time input of type t.
  Node* createPlaceholder(const std::string& name, Type t);
  /// A compile-time value.
  Node* createConstant(const std::string& name, Tensor value);

  const std::vector<std::unique_ptr<Node>>& placeholders() const { return placeholders_; }
  const std::vector<std::unique_ptr<Node>>& constants() const { return constants_; }
  Node* getPlaceholder(const std::string& name) const;

  /// Removes constants that no function uses; returns how many.
  size_t eraseUnusedConstants();

  /// A name not used by any node of the module yet, based on `base`.
  std::string uniqueName(const std::string& base);
  /// Records that `name` is taken (used by Function::create).
  void reserveName(const std::string& name) { names_.insert({name, 0}); }

private:
  std::vector<std::unique_ptr<Function>> functions_;
  std::vector<std::unique_ptr<Node>> placeholders_;
  std::vector<std::unique_ptr<Node>> constants_;
  std::map<std::string, int> names_;
  std::string source_;
};

} // namespace ember
