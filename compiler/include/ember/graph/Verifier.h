#pragma once
/// \file
/// Structural and type verification of a Function: run after import and after every
/// pass in debug pipelines, so a broken transformation is caught where it happens.

#include "ember/graph/Graph.h"

#include <string>
#include <vector>

namespace ember {

/// Returns every problem found (empty when the function is valid): dangling or
/// foreign inputs, use before definition, result types that disagree with the op
/// registry's inference, constants whose payload disagrees with their type, missing
/// or duplicate outputs, duplicate node names.
std::vector<std::string> verifyFunction(const Function& f);

/// Throws ember::Error listing all problems when verifyFunction finds any.
void verifyOrThrow(const Function& f);

} // namespace ember
