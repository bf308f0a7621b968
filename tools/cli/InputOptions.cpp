// The options that shape and bind a model's graph inputs (ember/cli/InputOptions.h).
#include "ember/cli/InputOptions.h"

#include "ember/cli/Cli.h"
#include "ember/support/Error.h"

#include <vector>

namespace ember::cli {

namespace {

const char* kGroup = "Model inputs (docs/compiler/importer.md, \"Input shapes and bound inputs\")";

/// Parses `arg` into `out`; "" when it is NAME=DxDx..., else why not.
std::string shapeError(const std::string& arg, std::pair<std::string, Shape>& out) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    return "expects NAME=DxDx... (e.g. input=1x3x224x224), got '" + arg + "'";
  out.first = arg.substr(0, eq);
  out.second.clear();
  const std::string dims = arg.substr(eq + 1);
  const std::string input = "input '" + out.first + "'";
  if (dims.empty())
    return "no shape given for " + input + " (expects NAME=DxDx..., e.g. " + out.first +
           "=1x3x224x224)";
  std::size_t start = 0;
  for (;;) {
    const std::size_t x = dims.find('x', start);
    const std::string d =
        dims.substr(start, x == std::string::npos ? std::string::npos : x - start);
    const std::string which = "dimension " + std::to_string(out.second.size()) + " of " + input;
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos)
      return which + " is '" + d + "', not a whole number (expects DxDx..., e.g. 1x3x224x224)";
    if (d.size() > 12 || std::stoll(d) > kMaxTensorElements)
      return which + " is " + d + ", more than " + std::to_string(kMaxTensorElements);
    const int64_t n = std::stoll(d);
    if (n < 1)
      return which + " is 0; every dimension must be at least 1";
    out.second.push_back(n);
    if (x == std::string::npos)
      return "";
    start = x + 1;
  }
}

} // namespace

std::pair<std::string, Shape> parseInputShape(const std::string& arg) {
  std::pair<std::string, Shape> out;
  const std::string why = shapeError(arg, out);
  if (!why.empty())
    throw UsageError("--input-shape " + arg, why);
  return out;
}

void addInputOptions(CLI::App& app, driver::InputBindings& b, InputOptionSet set) {
  app.add_option_function<std::vector<std::string>>(
         "--input-shape",
         [&b](const std::vector<std::string>& args) {
           for (const std::string& arg : args) {
             auto [name, dims] = parseInputShape(arg);
             if (!b.shapes.emplace(name, dims).second)
               throw CLI::ValidationError("--input-shape",
                                          "input '" + name + "' is given a shape twice");
           }
         },
         "the shape of model input NAME (repeatable), e.g. input=1x3x224x224:\n"
         "it decides the dimensions the model leaves unknown (a dynamic\n"
         "batch) and must keep those the model fixes")
      ->type_name("NAME=DxDx...")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            std::pair<std::string, Shape> parsed;
            const std::string why = shapeError(v, parsed);
            // A malformed value is quoted in the reason; a bad dimension is not.
            return why.empty() || why.rfind("expects", 0) == 0 ? why : v + ": " + why;
          },
          ""))
      ->allow_extra_args(false)
      ->take_all()
      ->group(kGroup);
  if (set != InputOptionSet::ShapesAndBinds)
    return;
  app.add_option_function<std::vector<std::string>>(
         "--bind",
         [&b](const std::vector<std::string>& args) {
           for (const std::string& arg : args) {
             auto [name, file] = splitNameValue(arg);
             if (!b.bindFiles.emplace(name, file).second)
               throw CLI::ValidationError("--bind", "input '" + name + "' is bound twice");
           }
         },
         "fold model input NAME into a constant with the value of FILE.npy\n"
         "(repeatable): shape operands that arrive as inputs, such as\n"
         "Resize's scales, Reshape's target, Slice's bounds, TopK's k")
      ->type_name("NAME=FILE.npy")
      ->check(nameEqualsValue("NAME=FILE.npy"))
      ->allow_extra_args(false)
      ->take_all()
      ->group(kGroup);
}

} // namespace ember::cli
