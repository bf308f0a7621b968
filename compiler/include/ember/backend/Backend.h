#pragma once
/// \file
/// The one interface every backend (interpreter, cpu, npu) implements, and the
/// registry that finds them by name. The compiler core never includes a backend; it
/// asks this interface what a backend supports and wants lowered.

#include "ember/graph/Graph.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ember {

/// Named tensors: inputs by placeholder name, outputs by function output name.
using TensorMap = std::map<std::string, Tensor>;

/// A function prepared for execution by one backend.
class CompiledFunction {
public:
  virtual ~CompiledFunction() = default;
  /// Runs once. Inputs must match the function's placeholders in name, kind and shape
  /// (ember::Error otherwise, naming the input); returns every output.
  virtual TensorMap run(const TensorMap& inputs) = 0;
};

/// A code generator / executor for one target.
class Backend {
public:
  virtual ~Backend() = default;
  /// Short name used on command lines ("interp", "cpu", "npu").
  virtual std::string name() const = 0;
  /// Whether this backend can execute node `n` as it is.
  virtual bool supports(const Node& n) const = 0;
  /// Whether the lowering pass should break `n` into simpler primitives for this
  /// backend (default: no).
  virtual bool shouldLower(const Node& /*n*/) const { return false; }
  /// What the backend has for node kind `k`, for the operator support table of
  /// docs/compiler/operators.md: "" when nothing, else a short note ("float, int8", the codegen
  /// families, ...). Whether one node of the kind runs is `supports`' answer.
  virtual std::string kindSupport(NodeKind k) const = 0;
  /// Prepares `f` for execution; the function must outlive the result.
  virtual std::unique_ptr<CompiledFunction> compile(const Function& f) const = 0;
};

/// Makes a fresh backend.
using BackendFactory = std::function<std::unique_ptr<Backend>()>;

/// Creates the backend called `name`; throws ember::Error listing the known names.
std::unique_ptr<Backend> createBackend(const std::string& name);
/// Names of all backends of this program: those built into the compiler (interp, and cpu
/// when LLVM is built), then those registered at run time, in registration order.
std::vector<std::string> backendNames();
/// Adds backend `name` for the rest of the program. For backends whose execution lives
/// above the compiler: the NPU runs through the runtime, which the compiler does not
/// link, so the device layer registers it (`ember::session::registerNpuBackend`).
/// Throws ember::InternalError when the name is taken.
void registerBackend(const std::string& name, BackendFactory create);
/// Whether a backend called `name` exists in this program.
bool isBackendRegistered(const std::string& name);

/// Every node of `f` that `b` does not support, as "Kind 'name'" strings (all of them,
/// so a user sees the whole list at once).
std::vector<std::string> unsupportedNodes(const Backend& b, const Function& f);

/// Throws ember::Unsupported at `where` ("device 'cpu'", "backend 'interp'") listing
/// every node of `f` (`what` names it: "the model", "its segment") that `b` cannot run;
/// returns when it runs them all.
void requireSupported(const Backend& b, const Function& f, const std::string& where,
                      const std::string& what = "the model");

} // namespace ember
