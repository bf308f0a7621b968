#pragma once
/// \file
/// emberc's flow for any client: import, optimise, quantize, partition and compile a
/// model for the NPU (an ELF or a package), or into a cpu bundle; the operator table and
/// the pipeline listing. A client fills CompileToolOptions and calls compileTool; the
/// command-line tool only declares its options.

#include "ember/driver/Driver.h"
#include "ember/driver/Partition.h"

#include <string>

namespace ember::driver {

/// What to compile and what to write (emberc's options).
struct CompileToolOptions {
  std::string model, output, isa;
  std::string backend = "npu", bundleDir, bundleName, precision;
  std::string calibrate = "random:8", calibration = "minmax";
  std::string dumpProfile, loadProfile, dumpLir;
  partition::PartitionOptions partition;
  InputBindings inputs; ///< --input-shape, --bind
  std::string opTableCheck, opTableUpdate;
  /// --system SYS.json: pipeline the model over a system's NPUs (docs/systems.md): print
  /// the stages with --partition-report, write the pipeline's package with -o.
  std::string system;
  /// --stage-cycles R.json: cost the pipeline's layers with a simulation report's cycles.
  std::string stageCycles;
  bool printPipeline = false, partitionReport = false, opTable = false, quiet = false;
};

/// What CLI11 cannot say about the options: which ones go together (UsageError).
void checkCompileToolOptions(const CompileToolOptions& o);

/// Compiles as emberc does, printing its summary lines to stdout (unless `o.quiet`) and
/// writing every output atomically after checking its path. Returns the exit status;
/// throws ember::Error for anything the user can fix.
int compileTool(const CompileToolOptions& o);

} // namespace ember::driver
