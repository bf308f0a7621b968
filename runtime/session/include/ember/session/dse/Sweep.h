#pragma once
/// \file
/// Running a sweep: the models (imported and quantized once), the points (one NPU
/// description each), and one result per point and model: compiled with fallback none,
/// simulated on the SystemC model, optionally checked bit for bit against the int8
/// interpreter. SystemC has one kernel per process and simulations take turns in it
/// (simulator/src/Context.h), so points run in child processes (fork), at most `jobs`
/// at a time; a child that crashes is a result, not the end of the sweep.

#include "ember/session/dse/Space.h"

#include "ember/backend/Backend.h"
#include "ember/driver/Driver.h"
#include "ember/graph/Graph.h"
#include "ember/isa/description.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember::dse {

/// A model of the sweep, imported and quantized once for every point.
struct Model {
  std::string path; ///< The ONNX file.
  std::string name; ///< Its folder's name for ".../NAME/model.onnx", else the file's stem.
  std::unique_ptr<Module> module;
  Function* quantized = nullptr; ///< The int8 function every point compiles.
  TensorMap inputs;              ///< Random inputs, as ember-run --random-input 1.
  /// --check: the int8 interpreter's outputs on `inputs` (what the NPU must reproduce).
  std::optional<TensorMap> reference;
};

/// The model's name in tables: "resnet18" for ".../resnet18/model.onnx", else the stem.
std::string modelName(const std::string& path);

/// Imports `path` and quantizes it as emberc and ember-run do (the default pipeline,
/// calibration `calibrate`, e.g. "random:8", minmax), makes its inputs and, with `check`,
/// the int8 interpreter's outputs. `inputs` shapes its graph inputs (--input-shape).
/// Throws ember::Error naming the file.
Model loadModel(const std::string& path, const std::string& calibrate, bool check,
                const driver::InputBindings& inputs = {});

/// One point: its settings and the description they make.
struct Point {
  std::size_t index = 0;
  Settings settings;
  nlohmann::json description;
  std::string file;    ///< Where the description was written (messages name it).
  std::string invalid; ///< The validator's message, "" for a valid description.
};

/// What happened to one model on one point.
enum class Status {
  Ok,          ///< compiled, simulated (and with --check, bit-exact)
  Invalid,     ///< the description did not pass the validator
  Unsupported, ///< the NPU cannot run some nodes (fallback none)
  /// refused for the description's sizes (an SRAM too small for any tiling, or a program
  /// over the compiler's instruction limit), with the sizes at which the model compiles
  /// (grownSramSizes) in the message: a vendor's answer, not a failure of --check
  TooSmall,
  CompileError, ///< the compiler refused the model for another reason
  Fault,        ///< the NPU program faulted on the simulator
  RunError,     ///< the run was refused for another reason (e.g. by the runtime)
  Mismatch,     ///< --check: an output differs from the int8 interpreter's
  Crash,        ///< the child process died (signal or unexpected exit)
};

/// "ok", "invalid", "unsupported", "too-small", "compile-error", "fault", "run-error",
/// "mismatch", "crash".
const char* statusName(Status s);

/// Peak use of one SRAM by the compiled program.
struct SramPeak {
  std::string name;
  std::uint64_t peakBytes = 0, sizeBytes = 0;
};

/// One row of the sweep.
struct Result {
  std::size_t point = 0;
  std::string model;
  Status status = Status::Ok;
  std::string message; ///< Why, when the status is not Ok.
  std::uint64_t cycles = 0;
  double npuSeconds = 0; ///< cycles at the description's clock
  double energyUj = 0;
  double macUtilization = 0; ///< 0..1
  std::vector<SramPeak> sram;
  double hostSeconds = 0; ///< Wall time of compile + simulation on this machine.
  bool pareto = false;    ///< On the model's cycles/energy Pareto front (markPareto).
  /// --area: on the model's (cycles, NPU logic cells, SRAM bits) front (markAreaPareto).
  bool paretoArea = false;
};

nlohmann::json toJson(const Result& r);
Result resultFromJson(const nlohmann::json& j);

/// Evaluates model `m` on valid description `desc` (point `p`) in this process: compiled
/// with fallback none, simulated, with `check` compared with the int8 interpreter; a
/// refusal for the description's sizes searches the sizes at which it compiles
/// (TooSmall). One row of the sweep, whichever process or machine computes it.
Result evaluateModel(const Point& p, const isa::IsaDescription& desc, const Model& m, bool check);

/// Evaluates a valid description on every model in this process.
std::vector<Result> evaluatePoint(const Point& p, const isa::IsaDescription& desc,
                                  const std::vector<Model>& models, bool check);

/// Progress of runPoints: points finished, points in all, children running.
using Progress = std::function<void(std::size_t done, std::size_t total, std::size_t running)>;

/// Evaluates every point (Invalid rows for invalid ones, without a child), valid ones in
/// child processes, at most `jobs` at a time, each writing its rows to `scratch`.
/// Returns the rows in point order, then model order.
std::vector<Result> runPoints(const std::vector<Point>& points, const std::vector<Model>& models,
                              bool check, unsigned jobs, const std::string& scratch,
                              const Progress& progress);

} // namespace ember::dse
