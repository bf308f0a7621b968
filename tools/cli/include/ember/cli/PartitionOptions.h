#pragma once
/// \file
/// The partitioning options of emberc and ember-run (--fallback, --host-kind, --host-node,
/// --min-region, --no-cost-model, --host-gmacs; docs/compiler/partitioning.md),
/// declared once for both tools' CLI11 command lines and their `--help`.

#include "ember/driver/Partition.h"

#include <CLI/CLI.hpp>

namespace ember::cli {

/// Adds the partitioning options to `app` (help group "Partitioning"); parsing fills `o`.
/// A bad value is a usage error (exit status 2) naming the option and the value.
void addPartitionOptions(CLI::App& app, partition::PartitionOptions& o);

} // namespace ember::cli
