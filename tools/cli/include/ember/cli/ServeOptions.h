#pragma once
/// \file
/// ember-run's serving options (--requests, --concurrency, --queue-depth, --when-full,
/// --batch, --batch-deadline, --system, --distinct-inputs, --reference; docs/systems.md
/// section 4), declared for its CLI11 command line and `--help`.

#include "ember/session/ServeTool.h"

#include <CLI/CLI.hpp>

namespace ember::cli {

/// Adds the serving options to `app` (help group "Serving"); parsing fills `o`.
void addServeOptions(CLI::App& app, session::ServeOptions& o);

} // namespace ember::cli
