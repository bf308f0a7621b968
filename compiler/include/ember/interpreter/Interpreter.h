#pragma once
/// \file
/// The interpreter backend: the executable definition of every operator. Clarity
/// first, but convolution and matrix products go through a blocked GEMM core so that
/// whole models run in seconds.

#include "ember/backend/Backend.h"

#include <functional>

namespace ember {

/// Executes `f` node by node on the host. Tensors are freed after their last use.
class Interpreter : public CompiledFunction {
public:
  explicit Interpreter(const Function& f);
  TensorMap run(const TensorMap& inputs) override;

  /// Called with every node and its results right after the node ran (before any
  /// tensor is freed): how calibration (ember/quantization/Profile.h) observes the
  /// intermediate values of a run. Null (the default) = no observer.
  using Observer = std::function<void(const Node& n, const std::vector<Tensor>& results)>;
  void setObserver(Observer o) { observer_ = std::move(o); }

private:
  /// "FILE: node 'NAME' (KIND)" of a node of the function (errors of a run).
  std::string whereIs(const Node& n) const;

  const Function& f_;
  Observer observer_;
};

/// Evaluates one node on given input tensors (null for absent optional inputs) and
/// returns its results. Used by the interpreter and by constant folding.
std::vector<Tensor> evaluateNode(const Node& n, const std::vector<const Tensor*>& inputs);

/// Whether the interpreter has a kernel for the kind of `n`.
bool interpreterSupports(const Node& n);

/// The interpreter as a Backend ("interp").
std::unique_ptr<Backend> createInterpreterBackend();

} // namespace ember
