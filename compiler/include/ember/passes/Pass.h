#pragma once
/// \file
/// The graph optimisation pipeline: a registry of named passes over a Function, the
/// default order in which they run, and per-pass statistics.
///
/// Passes are data, not a switch: each registers a name, a one-line description and a
/// function (see Passes.h). A pipeline is a list of names, so tools can print it
/// (`emberc --print-pipeline`), tests can run one pass alone, and the quantizer can run
/// the default pipeline before it quantizes. The verifier runs after every pass so a
/// broken rewrite is reported by the pass that made it.

#include "ember/graph/Graph.h"

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace ember {

class Backend;

/// What a pass may consult besides the function itself.
struct PassContext {
  /// The backend the function is compiled for: the `lower` pass asks its
  /// `shouldLower(node)`. Null means "lower nothing" (the interpreter's choice too).
  const Backend* backend = nullptr;
  /// constant-fold does not create a tensor of more elements than this when the result
  /// is larger than the node's constant inputs together (Expand, Tile, ...): a huge
  /// folded constant would cost more memory than the computation it replaces.
  int64_t foldLimitElements = int64_t(1) << 20;
  /// Run the verifier after every pass (ember::Error naming the pass on failure).
  bool verify = true;
};

/// A pass: rewrites `f` in place and returns the number of rewrites it made (nodes
/// replaced, fused, folded or re-wired; 0 = nothing changed).
using PassFn = std::function<size_t(Function& f, const PassContext& ctx)>;

/// One entry of the pass registry.
struct PassInfo {
  std::string name;        ///< e.g. "fold-batchnorm"
  std::string description; ///< one line, printed by printPipeline
  PassFn run;
};

/// Registers (or replaces) a pass. The built-in passes register themselves on first
/// use of the registry; other libraries may add theirs.
void registerPass(PassInfo info);
/// The registered pass called `name`, or nullptr.
const PassInfo* findPass(const std::string& name);
/// Names of all registered passes, sorted.
std::vector<std::string> passNames();

/// What one pass did in one pipeline run.
struct PassStats {
  std::string pass;
  size_t nodesBefore = 0, nodesAfter = 0; ///< function nodes (storage excluded)
  size_t changed = 0;                     ///< rewrites the pass reported
  double milliseconds = 0;
  /// Nodes removed (negative if the pass added nodes, as lowering does).
  int64_t removed() const { return int64_t(nodesBefore) - int64_t(nodesAfter); }
};

/// The default optimisation pipeline, in order (names of registered passes).
std::vector<std::string> defaultPipeline();

/// Runs the named passes in order on `f`. Every name is checked before anything runs:
/// an unknown one is an ember::Error listing the known passes. With ctx.verify the
/// verifier runs after each pass. Returns one PassStats per pass run.
std::vector<PassStats> runPipeline(Function& f, const std::vector<std::string>& passNames);
std::vector<PassStats> runPipeline(Function& f, const std::vector<std::string>& passNames,
                                   const PassContext& ctx);

/// Prints `pipeline` (default: defaultPipeline()) one pass a line: position, name and
/// description.
void printPipeline(std::ostream& os);
void printPipeline(std::ostream& os, const std::vector<std::string>& pipeline);

/// Prints a table of statistics: pass, nodes before -> after, changes, time.
void printPassStats(std::ostream& os, const std::vector<PassStats>& stats);

} // namespace ember
