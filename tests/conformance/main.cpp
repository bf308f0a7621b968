// ember-conformance: runs ONNX's backend node tests (libonnx-testdata) through Ember's
// importer and interpreter and compares with ONNX's expected outputs.
//
//   ember-conformance [--data DIR] [--filter REGEX] [--verbose] [--json OUT]
//                     [--min-pass N [--floor-only]] [--no-fork] [--timeout SEC]
//
// Each case runs in a child process (unless --no-fork), so a crash or hang in one
// operator is reported as that case's failure instead of stopping the run.
#include "Conformance.h"

#include "ember/cli/Cli.h"
#include "ember/support/Error.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>

namespace fs = std::filesystem;
using namespace ember::conformance;

namespace {

struct Options {
  std::string data = "/usr/share/libonnx-testdata/data/node";
  std::string filter;
  std::string json;
  bool verbose = false;
  bool fork = true;
  long minPass = -1;
  bool floorOnly = false;
  unsigned timeout = 120;
};

const char* kFooter =
    R"(Runs every ONNX node test case (DIR/*/model.onnx + test_data_set_*/) on Ember's
interpreter. Each case runs in a child process (unless --no-fork), so a crash or hang in
one operator is reported as that case's failure instead of stopping the run.

exit status: 0 when no case of a supported operator fails (and, with --min-pass, at
least N cases pass); 1 otherwise, or on bad input (an unwritable --json file); 2 on a
bad command line (also a bad --filter regex); 77 when DIR does not exist (ctest: skipped).
--floor-only: the status reflects only the --min-pass floor.)";

/// Declares the runner's command line on `app`; parsing fills `o`.
void declareOptions(CLI::App& app, Options& o) {
  app.add_option("--data", o.data, "the node tests (default " + o.data + ")")->type_name("DIR");
  app.add_option("--filter", o.filter, "run only the cases whose name matches REGEX")
      ->type_name("REGEX");
  app.add_flag("-v,--verbose", o.verbose, "print every case's status");
  app.add_option("--json", o.json, "write every case's result as JSON")->type_name("OUT");
  app.add_option("--min-pass", o.minPass, "fail unless at least N cases pass")
      ->type_name("N")
      ->check(ember::cli::wholeNumber(0, 1000000000));
  app.add_flag("--floor-only", o.floorOnly, "the status reflects only the --min-pass floor");
  app.add_flag_callback(
      "--no-fork", [&o] { o.fork = false; }, "run every case in this process");
  app.add_option("--timeout", o.timeout, "seconds a case may take in its child process")
      ->type_name("SEC")
      ->check(ember::cli::wholeNumber(1, 86400));
}

const char* statusName(Status s) {
  switch (s) {
  case Status::Pass:
    return "pass";
  case Status::Fail:
    return "FAIL";
  case Status::Unsupported:
    return "unsupported";
  }
  return "?";
}

struct Counts {
  int pass = 0, fail = 0, unsupported = 0, claimedFail = 0;
  void add(const CaseResult& r) {
    pass += r.status == Status::Pass;
    fail += r.status == Status::Fail;
    unsupported += r.status == Status::Unsupported;
    claimedFail += r.status == Status::Fail && r.claimed;
  }
};

void writeJson(const std::string& path, const std::vector<CaseResult>& results,
               const Counts& total) {
  nlohmann::json j;
  j["total"] = {{"cases", results.size()},
                {"pass", total.pass},
                {"fail", total.fail},
                {"claimed_fail", total.claimedFail},
                {"unsupported", total.unsupported}};
  for (const CaseResult& r : results)
    j["cases"].push_back({{"name", r.name},
                          {"group", r.group},
                          {"ops", r.ops},
                          {"status", statusName(r.status)},
                          {"claimed", r.claimed},
                          {"reason", r.reason}});
  std::ofstream out(path);
  out << j.dump(1) << "\n";
  if (!out)
    throw ember::Error(path, "cannot write");
}

/// The runner's real main, after parsing.
int runConformance(const Options& o) {
  if (!fs::is_directory(o.data)) {
    std::cout << "ember-conformance: no test data at " << o.data << " (package libonnx-testdata)"
              << ": skipped\n";
    return 77;
  }
  std::regex filter;
  try {
    filter = std::regex(o.filter.empty() ? ".*" : o.filter);
  } catch (const std::regex_error& e) {
    throw ember::UsageError("--filter", std::string("bad regex: ") + e.what());
  }
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(o.data))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx") &&
        std::regex_search(entry.path().filename().string(), filter))
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());

  std::vector<CaseResult> results;
  std::map<std::string, Counts> byGroup;
  Counts total;
  for (const fs::path& dir : cases) {
    CaseResult r = o.fork ? runCaseIsolated(dir, o.timeout) : runCase(dir);
    if (o.verbose)
      std::cout << statusName(r.status) << "  " << r.name
                << (r.reason.empty() ? "" : ": " + r.reason) << "\n";
    byGroup[r.group].add(r);
    total.add(r);
    results.push_back(std::move(r));
  }

  std::printf("%-32s %6s %6s %12s\n", "operator", "pass", "fail", "unsupported");
  for (const auto& [group, c] : byGroup)
    std::printf("%-32s %6d %6d %12d%s\n", group.c_str(), c.pass, c.fail, c.unsupported,
                c.claimedFail ? "  <-- failures" : "");
  std::printf("TOTAL %zu cases: %d pass, %d fail (%d of supported operators), %d unsupported\n",
              results.size(), total.pass, total.fail, total.claimedFail, total.unsupported);
  if (total.claimedFail) {
    std::printf("failing cases of supported operators:\n");
    for (const CaseResult& r : results)
      if (r.status == Status::Fail && r.claimed)
        std::printf("  %s: %s\n", r.name.c_str(), r.reason.c_str());
  }
  if (!o.json.empty())
    writeJson(o.json, results, total);
  int status = total.claimedFail && !o.floorOnly ? 1 : 0;
  if (o.minPass >= 0 && total.pass < o.minPass) {
    std::printf("only %d cases pass, the floor is %ld\n", total.pass, o.minPass);
    status = 1;
  }
  return status;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app("ember-conformance: runs ONNX's backend node tests (libonnx-testdata) through "
               "Ember's importer and interpreter.",
               "ember-conformance");
  ember::cli::setup(app, ember::cli::Description::Default);
  Options o;
  declareOptions(app, o);
  app.footer(kFooter);
  return ember::cli::run(app, argc, argv, [&] { return runConformance(o); });
}
