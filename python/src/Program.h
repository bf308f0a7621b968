#pragma once
/// \file
/// What the Python package's `ember.Program` is in C++: a model compiled for a target
/// (the NPU, or a host backend), or an NPU binary or package loaded from a file, that
/// runs on the devices of the device layer. It keeps every prepared form (NPU sessions
/// per device, compiled host functions per backend) so that repeated runs do not compile
/// again. The Python binding (EmberModule.cpp) only converts arrays and errors.

#include "ember/driver/Execute.h"
#include "ember/driver/Partition.h"
#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/platform/Report.h"
#include "ember/session/PackageSession.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember::python {

/// ember.compile's arguments.
struct CompileArgs {
  std::string target = "npu";                    ///< npu, cpu or interp.
  std::string isa;                               ///< Description file ("" = the default).
  std::string precision;                         ///< int8 or float ("" = int8 for npu, else float).
  std::string calibrate = "random:8";            ///< FILE.npy, a folder of .npy files, or random:N.
  std::string calibration = "minmax";            ///< minmax, percentile or kl.
  std::string fallback;                          ///< npu: cpu, interp or none ("" = the default).
  std::vector<std::string> hostKinds, hostNodes; ///< npu: forced host placement.
  std::map<std::string, Shape> inputShapes;      ///< input_shapes=: shapes of graph inputs.
  std::map<std::string, Tensor> bind;            ///< bind=: inputs folded into constants.
};

/// One declared input or output.
struct ValueInfo {
  std::string name;
  std::string dtype; ///< float32, int8, int32, int64, bool
  std::vector<int64_t> shape;
};

class Program {
public:
  /// Imports, optimises, quantizes (int8) and compiles `model` (an ONNX file).
  static std::unique_ptr<Program> compile(const std::string& model, const CompileArgs& args);
  /// Loads an NPU binary (ELF) or a package that emberc (or save) wrote, for the
  /// description `isa` ("" = the default).
  static std::unique_ptr<Program> load(const std::string& path, const std::string& isa);
  ~Program();

  /// Writes the program as emberc does: the NPU binary when the NPU runs the whole model,
  /// else a package (atomically). Host-only programs have no file form (UsageError).
  void save(const std::string& path) const;
  /// Runs on `device` ("" = the target's own: sim for npu programs) and returns every
  /// output. npu programs run on sim and rtl, and (their int8 function) on cpu and interp.
  TensorMap run(const TensorMap& inputs, const std::string& device);

  const std::string& target() const { return target_; }
  const std::string& precision() const { return precision_; }
  std::string isaName() const { return isa_->name(); }
  /// The devices `run` accepts, the default first.
  std::vector<std::string> devices() const;
  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> outputs() const;
  /// Whether the NPU runs the whole model (save writes an ELF, else a package).
  bool wholeOnNpu() const { return binary_ || (plan_ && plan_->whole); }
  /// npu programs: the placement's summary line and full report ("" otherwise).
  std::string placement() const;
  std::string placementReport() const;
  /// npu programs run whole: the NPU compiler's summary table.
  std::string compileSummary() const;
  /// The last NPU run as one self-contained HTML page (platform::toHtml), written atomically
  /// to `path`; ember::Error when the last run did not use the NPU.
  void writeHtml(const std::string& path) const;
  /// The reports (as JSON text) of the last run's NPU segments, in order; empty after a
  /// host run.
  std::vector<std::string> lastReports() const;

private:
  Program() = default;
  /// The inputs the program reads; every unknown and every missing name at once
  /// (ember::Error). Inputs the model declares but no output depends on are dropped.
  TensorMap usedInputs(const TensorMap& inputs) const;
  TensorMap runBinary(const TensorMap& inputs, const std::string& device);
  TensorMap runHost(const TensorMap& inputs, const std::string& device);

  std::string target_, precision_, source_;
  std::vector<std::string> declaredInputs_; ///< Every input the ONNX file declares.
  std::optional<isa::IsaDescription> isa_;
  std::unique_ptr<Module> module_;
  const Function* function_ = nullptr;    ///< What host devices run (int8 or float).
  std::unique_ptr<partition::Plan> plan_; ///< npu programs compiled or loaded as a package
  std::unique_ptr<isa::Binary> binary_;   ///< a loaded ELF
  std::map<std::string, std::unique_ptr<session::PlanSession>> npu_;
  std::map<std::string, std::unique_ptr<CompiledFunction>> host_;
  std::vector<platform::Report> lastReports_;
};

} // namespace ember::python
