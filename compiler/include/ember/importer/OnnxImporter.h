#pragma once
/// \file
/// ONNX -> Ember graph IR (opsets 1-17, static shapes; below opset 7 operator by operator).
///
/// Subgraphs computable at import time (Shape -> Gather -> Concat -> Reshape,
/// Constant, Identity, Dropout in inference) are folded into Constants, so shape-like
/// operands reach the graph as attributes. An import that meets operators it does not
/// support fails once, listing all of them with node names and op types.

#include "ember/graph/Graph.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ember {

struct OnnxImportOptions {
  /// Graph inputs whose values are known at compile time: they become Constants
  /// (used by conformance tests for shape-like inputs, and to fix sequence lengths).
  std::map<std::string, Tensor> constantInputs;
  /// Overrides for symbolic / unknown dimensions of graph inputs, by input name.
  std::map<std::string, Shape> inputShapes;
  /// Name of the function created in the module.
  std::string functionName = "main";
};

/// Imports the ONNX file at `path`; throws ember::Error naming the file and the node.
std::unique_ptr<Module> importOnnxFile(const std::string& path,
                                       const OnnxImportOptions& options = {});
/// Imports a serialized ModelProto held in memory (`what` names it in errors).
std::unique_ptr<Module> importOnnxBytes(const std::string& bytes, const std::string& what,
                                        const OnnxImportOptions& options = {});

/// The ONNX op types (default domain) the importer supports, sorted.
std::vector<std::string> supportedOnnxOps();

} // namespace ember
