// The partitioning options of emberc and ember-run, declared once (ember/cli/PartitionOptions.h).
#include "ember/cli/PartitionOptions.h"

#include "ember/cli/Cli.h"

#include <string>

namespace ember::cli {

namespace {
/// A check for --host-gmacs: a positive number (at least 1e-6, at most 1e9).
CLI::Validator positiveNumber() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        std::size_t used = 0;
        double d = -1;
        try {
          d = std::stod(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != v.size() || !(d >= 1e-6) || d > 1e9)
          return "expects a positive number, got '" + v + "'";
        return "";
      },
      "");
}
} // namespace

void addPartitionOptions(CLI::App& app, partition::PartitionOptions& o) {
  const char* group =
      "Partitioning (models the NPU cannot run whole; docs/compiler/partitioning.md)";
  app.add_option_function<std::string>(
         "--fallback", [&o](const std::string& v) { o.fallback = partition::parseFallback(v); },
         "where nodes the NPU cannot run go: cpu (default when built),\n"
         "interp, or none (refuse the model, listing every such node)")
      ->type_name("B")
      ->group(group);
  app.add_option_function<std::vector<std::string>>(
         "--host-kind",
         [&o](const std::vector<std::string>& v) { o.hostKinds.insert(v.begin(), v.end()); },
         "run every node of this kind on the host (repeatable)")
      ->type_name("KIND")
      ->allow_extra_args(false)
      ->take_all()
      ->group(group);
  app.add_option_function<std::vector<std::string>>(
         "--host-node",
         [&o](const std::vector<std::string>& v) { o.hostNodes.insert(v.begin(), v.end()); },
         "run this node of the quantized model on the host (repeatable)")
      ->type_name("NAME")
      ->allow_extra_args(false)
      ->take_all()
      ->group(group);
  app.add_option("--min-region", o.minRegionNodes,
                 "NPU regions of fewer than N layers run on the host (default 1)")
      ->type_name("N")
      ->check(wholeNumber(0, 1000000000))
      ->group(group);
  app.add_flag_callback(
         "--no-cost-model", [&o] { o.costModel = false; },
         "keep every region the NPU can run, even where the host is\n"
         "estimated to be faster")
      ->group(group);
  app.add_option_function<double>(
         "--host-gmacs",
         [&o](double g) {
           o.hostMacsPerSecond = g * 1e9;
           o.hostElementsPerSecond = g * 1e9 / 4;
         },
         "the host's int8 speed the cost model assumes, in GMAC/s\n"
         "(default 4: an embedded application processor; element-wise\n"
         "work at G/4 billion elements/s)")
      ->type_name("G")
      ->check(positiveNumber())
      ->group(group);
}

} // namespace ember::cli
