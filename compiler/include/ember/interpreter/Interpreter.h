#pragma once
/// \file
/// The interpreter backend: the executable definition of every operator. Clarity
/// first, but convolution and matrix products go through a blocked GEMM core so that
/// whole models run in seconds.

#include "ember/backend/Backend.h"

namespace ember {

/// Executes `f` node by node on the host. Tensors are freed after their last use.
class Interpreter : public CompiledFunction {
public:
  explicit Interpreter(const Function& f);
  TensorMap run(const TensorMap& inputs) override;

private:
  const Function& f_;
};

/// Evaluates one node on given input tensors (null for absent optional inputs) and
/// returns its results. Used by the interpreter and by constant folding.
std::vector<Tensor> evaluateNode(const Node& n, const std::vector<const Tensor*>& inputs);

/// Whether the interpreter has a kernel for the kind of `n`.
bool interpreterSupports(const Node& n);

/// The interpreter as a Backend ("interp").
std::unique_ptr<Backend> createInterpreterBackend();

} // namespace ember
