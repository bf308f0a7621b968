// ember-conformance: runs ONNX's backend node tests (libonnx-testdata) through Ember's
// importer and interpreter and compares with ONNX's expected outputs.
//
//   ember-conformance [--data DIR] [--filter REGEX] [--verbose] [--json OUT]
//                     [--min-pass N] [--no-fork] [--timeout SEC]
//
// Each case runs in a child process (unless --no-fork), so a crash or hang in one
// operator is reported as that case's failure instead of stopping the run.
#include "Conformance.h"

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

void usage(std::ostream& os) {
  os << "usage: ember-conformance [--data DIR] [--filter REGEX] [--verbose] [--json OUT]\n"
        "                         [--min-pass N [--floor-only]] [--no-fork] [--timeout SEC]\n"
        "Runs every ONNX node test case (DIR/*/model.onnx + test_data_set_*/) on Ember's\n"
        "interpreter. Exit status: 0 when no case of a supported operator fails (and, with\n"
        "--min-pass, at least N cases pass), 1 otherwise, 77 when DIR does not exist,\n"
        "2 on bad usage. --floor-only: the status reflects only the --min-pass floor.\n";
}

bool parseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> std::string {
      if (i + 1 >= argc)
        throw std::runtime_error(std::string(what) + " needs a value");
      return argv[++i];
    };
    if (a == "--data")
      o.data = value("--data");
    else if (a == "--filter")
      o.filter = value("--filter");
    else if (a == "--json")
      o.json = value("--json");
    else if (a == "--verbose" || a == "-v")
      o.verbose = true;
    else if (a == "--floor-only")
      o.floorOnly = true;
    else if (a == "--no-fork")
      o.fork = false;
    else if (a == "--min-pass")
      o.minPass = std::stol(value("--min-pass"));
    else if (a == "--timeout")
      o.timeout = static_cast<unsigned>(std::stoul(value("--timeout")));
    else if (a == "--help" || a == "-h") {
      usage(std::cout);
      std::exit(0);
    } else
      throw std::runtime_error("unknown argument '" + a + "'");
  }
  return true;
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
    throw std::runtime_error("cannot write " + path);
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    parseArgs(argc, argv, o);
  } catch (const std::exception& e) {
    std::cerr << "ember-conformance: " << e.what() << "\n";
    usage(std::cerr);
    return 2;
  }
  if (!fs::is_directory(o.data)) {
    std::cout << "ember-conformance: no test data at " << o.data << " (package libonnx-testdata)"
              << ": skipped\n";
    return 77;
  }
  std::regex filter;
  try {
    filter = std::regex(o.filter.empty() ? ".*" : o.filter);
  } catch (const std::regex_error& e) {
    std::cerr << "ember-conformance: bad --filter regex: " << e.what() << "\n";
    return 2;
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
  if (!o.json.empty()) {
    try {
      writeJson(o.json, results, total);
    } catch (const std::exception& e) {
      std::cerr << "ember-conformance: " << e.what() << "\n";
      return 1;
    }
  }
  int status = total.claimedFail && !o.floorOnly ? 1 : 0;
  if (o.minPass >= 0 && total.pass < o.minPass) {
    std::printf("only %d cases pass, the floor is %ld\n", total.pass, o.minPass);
    status = 1;
  }
  return status;
}
