#pragma once
/// \file
/// The command line of every Ember tool, over CLI11 (Debian's libcli11-dev): one way to
/// declare options, one `--help` generated from those declarations, one `--version`, and
/// one set of exit statuses (docs/robustness.md):
///
///   0 (kExitOk)       success
///   1 (kExitBadInput) bad input: an ember::Error (malformed or missing file, unsupported
///                     operator, refused output path, ...) or an internal error
///   2 (kExitUsage)    a bad command line: CLI11's parse errors (unknown option, missing
///                     value or argument, a value its check refuses) and ember::UsageError
///   3 (kExitNpuFault) the NPU program faulted: the runtime returns it as the run's
///                     status (runtime::RunResult::status) and the tool's body returns
///                     it, or the device layer throws ember::NpuFault
///
/// (the enum ember::ExitStatus, ember/support/ExitStatus.h)
///
/// A tool calls `setup` on its CLI::App, declares its options, and hands its real main to
/// `run`, which parses, prints `--help` / `--version` on stdout, and turns every error
/// into one line on stderr, "TOOL: ..." (ember::toolMain's messages; a usage error ends
/// with "(see TOOL --help)").

#include "ember/support/ToolMain.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>

namespace ember::cli {

/// Which NPU description a tool's `--version` line reports.
enum class Description {
  Default,    ///< the tool always uses the default one (IsaDescription::defaultPath)
  Selectable, ///< the tool takes `--isa`: the line reports the default and says so
};

/// The `--version` line: "TOOL VERSION (description NAME sha256 HEX16)" with the first 16
/// hex digits of the default description's hash (binaries record the whole hash); for a
/// Selectable tool "(default description NAME sha256 HEX16; --isa selects another)".
/// A default description that does not load is named with the reason instead.
std::string versionLine(const std::string& tool, Description d);

/// Ember's conventions on `app` (constructed with the tool's name): `--version`
/// (versionLine), a repeated single-value option keeps its last value (as every tool
/// did before CLI11), and the help's column width. Call it before declaring options:
/// CLI11 applies option defaults to the options declared after them.
void setup(CLI::App& app, Description d);

/// Parses `argv` into `app`, then runs `body` (the tool's real main) through
/// ember::toolMain and returns the exit status: 0 after `--help` or `--version`, 2 with
/// CLI11's message for a bad command line, and otherwise what `body` returns or the
/// status of what it throws (ember::Error 1, ember::UsageError 2, ember::NpuFault 3).
int run(CLI::App& app, int argc, char** argv, const std::function<int()>& body);

/// A check for a whole number in decimal, `min` to `max`: refuses anything else as
/// "expects a non-negative integer, got 'V'" or "must be at least MIN, got V" (CLI11
/// puts the option's name in front). CLI11's own conversion takes "-3" for an unsigned.
CLI::Validator wholeNumber(std::uint64_t min, std::uint64_t max);

/// A check for a file or folder name: refuses an empty value ("expects a path, got ''") so
/// that `--report ""` is an error instead of a run that writes nothing.
CLI::Validator pathValue();

/// A check for "NAME=VALUE" with both parts non-empty: "expects FORM, got 'V'".
CLI::Validator nameEqualsValue(const std::string& form);

/// Splits a value that passed nameEqualsValue at its first '='.
std::pair<std::string, std::string> splitNameValue(const std::string& arg);

} // namespace ember::cli
