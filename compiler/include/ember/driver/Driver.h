#pragma once
/// \file
/// The compile driver: the one chain every tool and test uses to turn an ONNX model into
/// what runs (ARCHITECTURE.md section 1): import, the default pass pipeline, calibration
/// and int8 quantization, partitioning between the NPU and the host, and the NPU compile
/// of every NPU segment. `emberc` writes its result; `ember-run` runs it.

#include "ember/driver/Partition.h"
#include "ember/graph/Graph.h"
#include "ember/isa/description.h"
#include "ember/quantization/Quantize.h"

#include <map>
#include <memory>
#include <string>

namespace ember::driver {

/// How a float function becomes int8 (docs/numerics.md).
struct QuantizeRequest {
  /// Calibration inputs: FILE.npy, a folder of .npy files, or random:N.
  std::string calibrate = "random:8";
  /// minmax, percentile or kl.
  std::string calibration = "minmax";
  /// Quantize with this saved profile instead of calibrating ("" = calibrate).
  std::string loadProfile;
  /// Save the calibration profile here ("" = not saved).
  std::string dumpProfile;
  /// Quantize with this profile (in memory) instead of calibrating: a program compiled
  /// again for other input shapes keeps its calibration (session::Session).
  std::shared_ptr<const quant::Profile> profile;
  /// Receives the profile the function was quantized with, when set.
  std::shared_ptr<const quant::Profile>* profileUsed = nullptr;
};

/// How messages name the input options of InputBindings.
enum class OptionSpelling {
  CommandLine, ///< --input-shape, --bind, --input (emberc, ember-run, ember-dse)
  Python,      ///< input_shapes=, bind= (ember.compile)
};

/// What a user says about a model's graph inputs before it is imported (docs/compiler/
/// importer.md, "Input shapes and bound inputs"). Every entry is checked against the model's
/// declaration before anything is imported; an error names the option as the user wrote
/// it, the input and the reason.
struct InputBindings {
  /// --input-shape NAME=DxDx...: an input's shape. It keeps the model's rank and every
  /// dimension the model fixes and decides the unknown ones (a dynamic batch).
  std::map<std::string, Shape> shapes;
  /// --bind NAME=FILE.npy: inputs folded into constants at import (shape operands such as
  /// Resize's scales, Reshape's target, Slice's bounds, TopK's k), read from the files.
  std::map<std::string, std::string> bindFiles;
  /// bind= in Python: the same with the values themselves.
  std::map<std::string, Tensor> bound;
  /// ember-run's --input NAME=FILE.npy: the files whose shapes decide the unknown
  /// dimensions of the inputs `shapes` does not name.
  std::map<std::string, std::string> feedFiles;
  OptionSpelling spelling = OptionSpelling::CommandLine;
  /// Whether the tool takes input files (ember-run): the message for an unknown
  /// dimension then offers them too.
  bool takesInputFiles = false;
  /// Receives, when set, each graph input's declared dimensions (-1 where the model
  /// leaves one unknown; OnnxImportOptions::declaredDims).
  std::map<std::string, std::vector<int64_t>>* declaredDims = nullptr;
};

/// Refuses input shapes and bindings for a file that is not an ONNX model (an NPU binary or
/// a package, compiled for fixed shapes): ember::UsageError naming the option as `b`
/// spells it and `what`.
void refuseInputOptions(const InputBindings& b, const std::string& what);

/// "1x3x224x224": a shape as --input-shape writes it.
std::string shapeArgument(const Shape& s);

/// Imports an ONNX file; the module's first function is the model (ember::Error naming
/// the file when there is none). `inputs` shapes and binds its graph inputs.
std::unique_ptr<Module> importModel(const std::string& path, const InputBindings& inputs = {});
/// The model's function in a module importModel made.
Function& modelFunction(const Module& m);

/// Runs the default pass pipeline on `f` (in place), calibrates (or loads the profile) and
/// quantizes; returns the int8 function (in f's module). Bad names (calibration method)
/// fail before any work.
Function* quantizeFunction(Function& f, const QuantizeRequest& r,
                           quant::QuantizeStats* stats = nullptr);

/// How a function is prepared for what runs it, the one rule every client follows: int8
/// (`int8`) is quantizeFunction (which runs the pipeline first); float for a compiling
/// backend (`compiling`: cpu, npu) runs the default pass pipeline in place; float for the
/// interpreter alone runs the graph as imported. Returns the function to run (f itself,
/// or the int8 function in f's module).
Function* prepareFunction(Function& f, bool int8, bool compiling, const QuantizeRequest& r = {},
                          quant::QuantizeStats* stats = nullptr);

/// A model compiled for the NPU and its host.
struct CompiledModel {
  std::unique_ptr<Module> module;
  Function* floatFunction = nullptr; ///< Optimised in place by the pipeline.
  Function* quantized = nullptr;
  quant::QuantizeStats stats;
  partition::Plan plan; ///< Whole: one NPU segment; otherwise a package's segments.
  double importSeconds = 0, quantizeSeconds = 0, partitionSeconds = 0;
};

/// Import (with `inputs`) -> pipeline -> quantize -> partition -> compile, for `isa`.
CompiledModel compileModel(const std::string& path, const isa::IsaDescription& isa,
                           const QuantizeRequest& q, const partition::PartitionOptions& p,
                           const InputBindings& inputs = {});

} // namespace ember::driver
