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
};

/// Imports an ONNX file; the module's first function is the model (ember::Error naming
/// the file when there is none).
std::unique_ptr<Module> importModel(const std::string& path);
/// The model's function in a module importModel made.
Function& modelFunction(const Module& m);

/// Runs the default pass pipeline on `f` (in place), calibrates (or loads the profile) and
/// quantizes; returns the int8 function (in f's module). Bad names (calibration method)
/// fail before any work.
Function* quantizeFunction(Function& f, const QuantizeRequest& r,
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

/// Import -> pipeline -> quantize -> partition -> compile, for `isa`.
CompiledModel compileModel(const std::string& path, const isa::IsaDescription& isa,
                           const QuantizeRequest& q, const partition::PartitionOptions& p);

} // namespace ember::driver
