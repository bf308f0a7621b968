#pragma once
/// \file
/// The one way every Ember tool turns errors into messages and exit statuses.
///
/// Exit statuses (ExitStatus.h; the same in every tool, documented in each `--help`):
///   0 success; 1 bad input (an ember::Error: malformed file, unsupported operator,
///   refused output path, ...) or an internal error; 2 a bad command line
///   (ember::UsageError); 3 the NPU program faulted (the body returns it, or throws
///   ember::NpuFault). The tools' command lines go through ember::cli::run (tools/cli),
///   which calls toolMain.
/// Messages are one line, "TOOL: error: FILE: PLACE: REASON", never a C++ library's
/// text: a std::filesystem error is reworded as "PATH: REASON", an allocation failure
/// as "out of memory", and anything else is reported as an internal error.

#include "ember/support/ExitStatus.h"

#include <functional>
#include <string>

namespace ember {

/// Runs `body` (a tool's real main) and returns its status, or prints the exception it
/// throws as `tool: error: ...` on stderr and returns the matching status. Installs the
/// handlers that remove temporary output files on SIGINT/SIGTERM first.
int toolMain(const char* tool, const std::function<int()>& body);

/// The message line toolMain prints for the exception being handled (for tools that
/// report an error and go on, e.g. one job of several). Call inside a catch block.
std::string describeCurrentException(const char* tool, int* status = nullptr);

} // namespace ember
