#pragma once
/// \file
/// The exit statuses of every Ember tool (docs/robustness.md), in one place: the tools'
/// command-line helper (tools/cli, ember/cli/Cli.h) maps errors to them, and the runtime
/// returns kExitNpuFault as the status of a run whose NPU program faulted.

namespace ember {

/// Exit statuses shared by the tools.
enum ExitStatus : int {
  kExitOk = 0,       ///< success
  kExitBadInput = 1, ///< bad input (an ember::Error) or an internal error
  kExitUsage = 2,    ///< a bad command line (CLI11's parse errors, ember::UsageError)
  kExitNpuFault = 3, ///< the NPU program faulted (or, with ember-sim --jobs, a job did not finish)
};

} // namespace ember
