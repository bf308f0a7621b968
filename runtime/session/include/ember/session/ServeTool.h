#pragma once
/// \file
/// `ember-run PROGRAM --requests N --concurrency C [--system SYS.json]`: serving concurrent
/// requests in simulated time (docs/systems.md section 4). The program (an ONNX model,
/// compiled for one NPU as the sim device compiles it; an NPU binary; or a package: a
/// pipeline emberc --system wrote, or any package of NPU segments) runs on the SystemC
/// model once per distinct input, which gives every stage's NPU cycles and outputs; the
/// schedule (Serve.h) then serves the requests over the devices.

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember::session {

/// The ranges serving accepts, whether from ember-run's options or from Python's
/// Program.serve (checkServeOptions checks them; the command line names them in --help).
struct ServeLimits {
  static constexpr uint64_t maxRequests = 100000000;
  static constexpr uint64_t maxConcurrency = 1000000;
  static constexpr uint64_t maxQueueDepth = 1000000;
  static constexpr uint64_t maxBatch = 4096;
  static constexpr uint64_t maxBatchDeadline = 1000000000000; ///< Cycles.
  static constexpr uint64_t maxDistinctInputs = 100000;
};

/// The serving options of ember-run (RunOptions::serve).
struct ServeOptions {
  size_t requests = 0; ///< 0: no serving (an ordinary run).
  size_t concurrency = 1;
  size_t queueDepth = 0; ///< 0: as many as `concurrency`.
  std::string whenFull = "block";
  /// Batching (ServeConfig::batch): up to `batch` ready requests of a stage at once,
  /// waiting at most `batchDeadline` cycles after the oldest is ready.
  size_t batch = 1;
  uint64_t batchDeadline = 0;
  /// The system of NPUs (isa/systems/*.json): a package of K NPU stages runs stage k on
  /// device k (K devices), a binary or a one-stage package is replicated over every
  /// device. Empty: one NPU of the program's description.
  std::string system;
  /// Distinct inputs simulated (request r takes input r mod D); 0: min(requests, 4).
  size_t distinctInputs = 0;
  /// An NPU binary of the whole model on one NPU: every distinct input is run on it too
  /// and every output must agree bit for bit (int8 codes against the dequantized output
  /// as the model's DequantizeLinear computes it).
  std::string reference;
};

struct RunOptions;

/// Refuses (ember::UsageError) serving options without --requests, values outside
/// ServeLimits, and --requests with what serving does not do (--compare, a device other
/// than sim).
void checkServeOptions(const RunOptions& o);

/// What serving produced: the stages' table and the summary ember-run prints, the
/// serving report (JSON, as --report writes it), with `o.traceJson` the trace and with
/// `o.html` the page with the per-device timeline (ServeHtml.h).
struct ServeOutcome {
  std::string stages, summary, reportJson, traceJson, html;
};

/// Serves `o.model` as `o.serve` says and returns the outcome (writes only --out's
/// outputs): the logic of serveTool, for the Python package's Program.serve.
ServeOutcome serve(const RunOptions& o);

/// Serves `o.model` as `o.serve` says: prints the stages, the schedule's summary and, with
/// `o.reportJson`, writes the serving report (JSON). `--out DIR` writes input K's outputs
/// to DIR/K/NAME.npy. Returns 0; throws ember::Error for what the user can fix (naming
/// device, stage and bytes where they matter).
int serveTool(const RunOptions& o);

} // namespace ember::session
