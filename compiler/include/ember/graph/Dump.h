#pragma once
/// \file
/// Human-readable dumps of a function: a textual listing (one node per line, with
/// types and attributes) and Graphviz DOT, for debugging imports and passes.

#include "ember/graph/Graph.h"

#include <ostream>
#include <string>

namespace ember {

/// Text dump: inputs, constants (types only), nodes in order, outputs.
void dumpText(const Function& f, std::ostream& os);
std::string dumpText(const Function& f);

/// Graphviz DOT: one box per node, edges labelled with value types.
void dumpDot(const Function& f, std::ostream& os);

} // namespace ember
