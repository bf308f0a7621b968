#pragma once
/// \file
/// The host-side API of Ember in one object: a Session is a model compiled for a target
/// (the NPU, or a host backend), or an NPU binary or package loaded from a file, that runs
/// on the devices of the device table (Devices.h), is cross-checked across them and
/// reports its NPU runs. It keeps every prepared form (NPU sessions per device, compiled
/// host functions per backend) so that repeated runs do not compile again. The Python
/// package's `ember.Program` is this class with NumPy arrays; a C++ program that embeds
/// Ember uses it the same way. ember-run's flow (RunTool.h) is built from the same pieces.

#include "ember/driver/Driver.h"
#include "ember/driver/Execute.h"
#include "ember/driver/Partition.h"
#include "ember/isa/binary.h"
#include "ember/isa/description.h"
#include "ember/platform/Report.h"
#include "ember/session/Compare.h"
#include "ember/session/PackageSession.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ember::session {

/// How Session::compile prepares a model (ember.compile's arguments; emberc's options).
struct CompileOptions {
  std::string target = "npu";                    ///< npu, cpu or interp.
  std::string isa;                               ///< Description file ("" = the default).
  std::string precision;                         ///< int8 or float ("" = int8 for npu, else float).
  std::string calibrate = "random:8";            ///< FILE.npy, a folder of .npy files, or random:N.
  std::string calibration = "minmax";            ///< minmax, percentile or kl.
  std::string fallback;                          ///< npu: cpu, interp or none ("" = the default).
  std::vector<std::string> hostKinds, hostNodes; ///< npu: forced host placement.
  std::map<std::string, Shape> inputShapes;      ///< Shapes of graph inputs left unknown.
  std::map<std::string, Tensor> bind;            ///< Inputs folded into constants.
  /// How option names are spelled in messages (Python's input_shapes= or the tools').
  driver::OptionSpelling spelling = driver::OptionSpelling::Python;
};

/// One declared input or output.
struct ValueInfo {
  std::string name;
  std::string dtype; ///< float32, int8, int32, int64, bool
  std::vector<int64_t> shape;
};

/// What Session::crossCheck found: every device's outputs against the first device's.
struct CrossCheck {
  /// One per device, in the order asked (runSeconds: the run's wall time, the device's
  /// preparation included when it is the first run there).
  std::vector<DeviceOutputs> runs;
  std::string table; ///< compareRuns' table, then one timing line per NPU pair.
  /// Every disagreement ("output 'y' on sim", a timing difference); empty when all agree.
  std::vector<std::string> mismatch;
};

class Session {
public:
  /// Imports, optimises, quantizes (int8) and compiles `model` (an ONNX file). A program
  /// compiled from a model runs inputs of other shapes too where the model leaves
  /// dimensions unknown (a dynamic batch): it is compiled again for those shapes, with
  /// this compile's calibration, once per distinct set of shapes (kept for later runs).
  static std::unique_ptr<Session> compile(const std::string& model, const CompileOptions& opts);
  /// Loads an NPU binary (ELF) or a package that emberc (or save) wrote, for the
  /// description `isa` ("" = the default).
  static std::unique_ptr<Session> load(const std::string& path, const std::string& isa);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Writes the program as emberc does: the NPU binary when the NPU runs the whole model,
  /// else a package (atomically). Host-only programs have no file form (UsageError).
  void save(const std::string& path) const;
  /// Runs on `device` ("" = the target's own: sim for npu programs) and returns every
  /// output. npu programs run on sim and rtl, and (their int8 function) on cpu and interp.
  TensorMap run(const TensorMap& inputs, const std::string& device);
  /// Runs on every device of `devices` (at least two, no repeats) and compares each with
  /// the first: int8 outputs bit for bit, float ones within 1e-4 * max(1, max|ref|); an
  /// int8 program compiled from a model is also compared with its float function on the
  /// interpreter (cosine, top-1); two NPU devices (sim, rtl) must agree on every
  /// instruction's timing and the energy. reports() afterwards: the first NPU device's.
  CrossCheck crossCheck(const TensorMap& inputs, const std::vector<std::string>& devices);

  const std::string& target() const { return target_; }
  const std::string& precision() const { return precision_; }
  std::string isaName() const { return isa_->name(); }
  /// The devices `run` accepts, the default first.
  std::vector<std::string> devices() const;
  std::vector<ValueInfo> inputs() const;
  std::vector<ValueInfo> outputs() const;
  /// Compiled programs: each input's dimensions as the model declares them, -1 where it
  /// leaves one unknown; inputs may differ from inputs() there (the program compiles
  /// itself again for them). Empty for a loaded binary or package (fixed shapes).
  const std::map<std::string, std::vector<int64_t>>& modelDims() const { return modelDims_; }
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
  /// The reports of the last run's NPU segments, in order; empty after a host run.
  const std::vector<platform::Report>& reports() const { return lastReports_; }
  /// The name the runtime's fault lines give the client ("ember" unless set; the Python
  /// package says "ember (python)").
  void setToolName(const std::string& name) { tool_ = name; }

private:
  Session() = default;
  /// compile(), quantizing with `profile` instead of calibrating when it is set.
  static std::unique_ptr<Session> compileWith(const std::string& model, const CompileOptions& opts,
                                              std::shared_ptr<const quant::Profile> profile);
  /// The inputs the program reads; every unknown and every missing name at once
  /// (ember::Error). Inputs the model declares but no output depends on are dropped.
  TensorMap usedInputs(const TensorMap& inputs) const;
  /// `device` ("" = the default) if this program runs on it, else UsageError.
  std::string checkedDevice(const std::string& device) const;
  /// The program compiled for the shapes of `inputs` when they differ from this one's
  /// (compiled on first use, then kept); nullptr when they agree or the program was
  /// loaded from a file (whose shapes are fixed).
  Session* variantFor(const TensorMap& inputs);
  TensorMap runBinary(const TensorMap& inputs, const std::string& device);
  TensorMap runHost(const Function& f, const TensorMap& inputs, const std::string& device);

  std::string target_, precision_, source_, tool_ = "ember";
  std::vector<std::string> declaredInputs_; ///< Every input the ONNX file declares.
  std::optional<isa::IsaDescription> isa_;
  std::unique_ptr<Module> module_;
  const Function* function_ = nullptr;      ///< What host devices run (int8 or float).
  const Function* floatFunction_ = nullptr; ///< The model in float (compiled programs).
  std::unique_ptr<partition::Plan> plan_;   ///< npu programs compiled or loaded as a package
  std::unique_ptr<isa::Binary> binary_;     ///< a loaded ELF
  std::map<std::string, std::unique_ptr<PlanSession>> npu_;
  std::map<std::string, std::unique_ptr<CompiledFunction>> host_;
  std::vector<platform::Report> lastReports_;
  std::optional<CompileOptions> options_;                    ///< compiled programs: how
  std::shared_ptr<const quant::Profile> profile_;            ///< int8 programs: the calibration
  std::map<std::string, std::unique_ptr<Session>> variants_; ///< by input shapes
  std::map<std::string, std::vector<int64_t>> modelDims_;
  /// run and crossCheck fill the maps above lazily: callers on several threads (Python
  /// releases the GIL) take turns.
  std::recursive_mutex mu_;
};

} // namespace ember::session
