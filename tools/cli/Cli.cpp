// The tools' shared command line: CLI11 set up the same way everywhere, `--version`, and
// parse errors, help and version mapped to Ember's exit statuses (ember/cli/Cli.h).
#include "ember/cli/Cli.h"

#include "ember/isa/description.h"
#include "ember/support/Error.h"
#include "ember/support/Version.h"

#include <exception>
#include <stdexcept>

namespace ember::cli {

std::string versionLine(const std::string& tool, Description d) {
  const bool selectable = d == Description::Selectable;
  std::string line = tool + " " + versionString() + " (" + (selectable ? "default " : "");
  try {
    const isa::IsaDescription isa = isa::IsaDescription::loadDefault();
    line += "description " + isa.name() + " sha256 " + isa.hashHex().substr(0, 16);
  } catch (const std::exception& e) {
    // --version still answers when the default description is missing or broken.
    line += "description: none loaded: " + std::string(e.what());
  }
  return line + (selectable ? "; --isa selects another)" : ")");
}

void setup(CLI::App& app, Description d) {
  const std::string tool = app.get_name();
  app.set_version_flag("--version",
                       std::function<std::string()>([tool, d] { return versionLine(tool, d); }),
                       "Print the version and the default description's hash and exit");
  // A blank line between the description and CLI11's usage line.
  app.description(app.get_description() + "\n");
  // The hand-written parsers this replaces let a repeated option's last value win.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.get_formatter()->column_width(32);
}

int run(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  const std::string tool = app.get_name();
  return toolMain(tool.c_str(), [&]() -> int {
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      if (e.get_exit_code() == 0) { // --help, --version: printed on stdout
        app.exit(e);
        return kExitOk;
      }
      // toolMain prints "TOOL: MESSAGE (see TOOL --help)" and returns kExitUsage.
      throw UsageError(e.what());
    }
    return body();
  });
}

namespace {
bool allDigits(const std::string& v) {
  return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos;
}
} // namespace

CLI::Validator wholeNumber(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& v) -> std::string {
        if (!allDigits(v))
          return "expects a non-negative integer, got '" + v + "'";
        std::uint64_t n = 0;
        try {
          n = std::stoull(v);
        } catch (const std::out_of_range&) {
          return "must be at most " + std::to_string(max) + ", got " + v;
        }
        if (n < min)
          return "must be at least " + std::to_string(min) + ", got " + v;
        if (n > max)
          return "must be at most " + std::to_string(max) + ", got " + v;
        return "";
      },
      "");
}

CLI::Validator pathValue() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (v.empty())
          return "expects a path, got ''";
        if (v.find('\0') != std::string::npos)
          return "expects a path, got a value with a NUL byte";
        return "";
      },
      "");
}

CLI::Validator nameEqualsValue(const std::string& form) {
  return CLI::Validator(
      [form](std::string& v) -> std::string {
        const std::size_t eq = v.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
          return "expects " + form + ", got '" + v + "'";
        return "";
      },
      "");
}

std::pair<std::string, std::string> splitNameValue(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos)
    return {arg, ""};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

} // namespace ember::cli
