#pragma once
/// \file
/// The options that shape and bind a model's graph inputs before it is imported, declared
/// once for every tool that imports models (emberc, ember-run, ember-dse):
///
///   --input-shape NAME=DxDx...   the shape of input NAME (e.g. input=1x3x224x224): it
///                                decides the dimensions the model leaves unknown (a
///                                dynamic batch) and must keep those it fixes
///   --bind NAME=FILE.npy         folds input NAME into a constant at import (a shape
///                                operand: Resize's scales, Reshape's target, ...)
///
/// A value that is not NAME=DxDx... with whole numbers of at least 1, or a name given
/// twice, is a usage error (exit status 2) naming the option, the input and the reason;
/// what only the model can say (a name it lacks, another rank, a dimension it fixes
/// otherwise) is checked by the import (driver::InputBindings), before any other work.

#include "ember/driver/Driver.h"

#include <CLI/CLI.hpp>

#include <string>
#include <utility>

namespace ember::cli {

/// Parses a value of --input-shape, "NAME=DxDx...": ember::UsageError naming the option,
/// the value, the input and the reason for anything else (no '=', an empty name, an empty,
/// non-numeric, zero or too large dimension).
std::pair<std::string, Shape> parseInputShape(const std::string& arg);

/// Which of the input options a tool takes.
enum class InputOptionSet {
  Shapes,         ///< --input-shape (ember-dse)
  ShapesAndBinds, ///< --input-shape and --bind (emberc, ember-run)
};

/// Adds the input options to `app` (help group "Model inputs"); parsing fills `b.shapes`
/// and `b.bindFiles`.
void addInputOptions(CLI::App& app, driver::InputBindings& b, InputOptionSet set);

} // namespace ember::cli
