#pragma once
/// \file
/// ONNX -> Ember graph IR (opsets 1-17, static shapes; below opset 7 operator by operator).
///
/// Subgraphs computable at import time (Shape -> Gather -> Concat -> Reshape,
/// Constant, Identity, Dropout in inference) are folded into Constants, so shape-like
/// operands reach the graph as attributes. An import that meets operators it does not
/// support fails once, listing all of them with node names and op types.

#include "ember/graph/Graph.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ember {

/// How a user wrote the import options of one graph input, for messages (e.g.
/// "--input-shape x=1x3x8x8" or "input_shapes['x']"), by input name.
struct OnnxInputOrigins {
  std::map<std::string, std::string> constants; ///< Entries of constantInputs.
  std::map<std::string, std::string> shapes;    ///< Entries of inputShapes.
  std::map<std::string, std::string> feeds;     ///< Entries of feedShapes.
};

struct OnnxImportOptions {
  /// Graph inputs whose values are known at compile time: they become Constants
  /// (used by conformance tests for shape-like inputs, and to fix sequence lengths).
  std::map<std::string, Tensor> constantInputs;
  /// Overrides for symbolic / unknown dimensions of graph inputs, by input name.
  std::map<std::string, Shape> inputShapes;
  /// Shapes of the values the caller will feed to graph inputs (ember-run's --input
  /// files), by input name: each decides the unknown dimensions of an input inputShapes
  /// does not name, and nothing else (the dimensions the model fixes stay; the caller
  /// refuses a value that contradicts them when it checks the values).
  std::map<std::string, Shape> feedShapes;
  /// Where entries of the three maps above came from. An entry that has an origin is a
  /// user's and is checked against the model's declaration before anything is imported,
  /// errors naming the origin, the input and the reason: the name must be a graph input,
  /// an inputShapes entry must keep the input's rank and every dimension the model fixes,
  /// a constant must have the input's element type, rank and fixed dimensions, a
  /// feedShapes entry the input's rank. Entries without an origin (library callers) may
  /// override fixed dimensions.
  OnnxInputOrigins origins;
  /// Ends the message for an input dimension nothing decides with how to give the input's
  /// shape, from the input's name and an example shape (the declared one with unknown
  /// dimensions as 1; null when the model gives no shape at all), e.g. "give its shape
  /// with --input-shape x=1x3x224x224". Unset: the advice names inputShapes.
  std::function<std::string(const std::string& input, const Shape* example)> shapeAdvice;
  /// Ends the message for an operand that must be known at compile time (a Reshape
  /// target, Resize's scales) and is graph input `input`: how to bind it to a constant,
  /// e.g. "bind it with --bind shape=FILE.npy". Unset: the advice names constantInputs.
  std::function<std::string(const std::string& input)> bindAdvice;
  /// Name of the function created in the module.
  std::string functionName = "main";
  /// Receives, when set, each run-time graph input's dimensions as the model declares
  /// them, -1 where it leaves one unknown (a dynamic batch): what a caller may vary when
  /// it compiles the model again for other shapes.
  std::map<std::string, std::vector<int64_t>>* declaredDims = nullptr;
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
