// The tools' shared command line (tools/cli, ember/cli/Cli.h): exit statuses of
// cli::run, the --version line, and the value checks, in process.
#include "ember/cli/Cli.h"

#include "ember/isa/description.h"
#include "ember/support/Error.h"
#include "ember/support/Version.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace ember::cli {
namespace {

/// A tool "demo" with one positional, one option, and the given body.
struct Demo {
  CLI::App app{"demo: a test tool", "demo"};
  std::string in;
  int count = 1;
  Demo() {
    setup(app, Description::Selectable);
    app.add_option("IN", in, "input")->required();
    app.add_option("--count", count, "how many")->check(wholeNumber(1, 10));
  }
  /// Runs with `args` (after the program name); stdout and stderr captured.
  int run(std::vector<std::string> args, const std::function<int()>& body, std::string* out,
          std::string* err) {
    args.insert(args.begin(), "demo");
    std::vector<char*> argv;
    for (std::string& a : args)
      argv.push_back(a.data());
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int status = cli::run(app, int(argv.size()), argv.data(), body);
    *out = testing::internal::GetCapturedStdout();
    *err = testing::internal::GetCapturedStderr();
    return status;
  }
};

int ok() {
  return kExitOk;
}

TEST(Cli, StatusesOfParseErrorsAndOfWhatTheBodyThrows) {
  std::string out, err;
  EXPECT_EQ(Demo().run({"a"}, ok, &out, &err), 0);
  EXPECT_EQ(Demo().run({"a", "--frobnicate"}, ok, &out, &err), kExitUsage);
  EXPECT_EQ(err, "demo: The following argument was not expected: --frobnicate (see demo --help)\n");
  EXPECT_EQ(Demo().run({}, ok, &out, &err), kExitUsage);
  EXPECT_NE(err.find("IN is required"), std::string::npos) << err;
  EXPECT_EQ(Demo().run({"a", "--count"}, ok, &out, &err), kExitUsage);
  EXPECT_NE(err.find("--count: 1 required"), std::string::npos) << err;
  EXPECT_EQ(Demo().run({"a", "--count", "11"}, ok, &out, &err), kExitUsage);
  EXPECT_NE(err.find("--count: must be at most 10, got 11"), std::string::npos) << err;
  // The body is not run after a parse error.
  bool ran = false;
  EXPECT_EQ(Demo().run(
                {"a", "--count", "x"},
                [&] {
                  ran = true;
                  return 0;
                },
                &out, &err),
            kExitUsage);
  EXPECT_FALSE(ran);

  auto throws = [](auto e) { return [e]() -> int { throw e; }; };
  EXPECT_EQ(Demo().run({"a"}, throws(UsageError("--x", "bad")), &out, &err), kExitUsage);
  EXPECT_EQ(err, "demo: --x: bad (see demo --help)\n");
  EXPECT_EQ(Demo().run({"a"}, throws(Error("f.onnx", "truncated")), &out, &err), kExitBadInput);
  EXPECT_EQ(err, "demo: error: f.onnx: truncated\n");
  EXPECT_EQ(Demo().run({"a"}, throws(NpuFault("b.elf", "fault deadlock")), &out, &err),
            kExitNpuFault);
  EXPECT_EQ(err, "demo: error: b.elf: fault deadlock\n");
  // A status the body returns (the runtime's kExitNpuFault) is the exit status.
  EXPECT_EQ(Demo().run(
                {"a"}, [] { return int(kExitNpuFault); }, &out, &err),
            kExitNpuFault);
}

TEST(Cli, HelpAndVersionExitZeroOnStdout) {
  std::string out, err;
  EXPECT_EQ(Demo().run({"--help"}, ok, &out, &err), 0);
  EXPECT_NE(out.find("Usage: demo [OPTIONS] IN"), std::string::npos) << out;
  EXPECT_NE(out.find("--count"), std::string::npos) << out;
  EXPECT_NE(out.find("--version"), std::string::npos) << out;
  EXPECT_EQ(err, "");
  EXPECT_EQ(Demo().run({"--version"}, ok, &out, &err), 0);
  const isa::IsaDescription d = isa::IsaDescription::loadDefault();
  EXPECT_EQ(out, "demo " + std::string(versionString()) + " (default description " + d.name() +
                     " sha256 " + d.hashHex().substr(0, 16) + "; --isa selects another)\n");
  EXPECT_EQ(err, "");
}

TEST(Cli, VersionLineWithoutIsaAndWithABrokenDefault) {
  const isa::IsaDescription d = isa::IsaDescription::loadDefault();
  EXPECT_EQ(versionLine("t", Description::Default), "t " + std::string(versionString()) +
                                                        " (description " + d.name() + " sha256 " +
                                                        d.hashHex().substr(0, 16) + ")");
  const char* old = std::getenv("EMBER_ISA");
  const std::string saved = old ? old : "";
  setenv("EMBER_ISA", "/nonexistent/desc.json", 1);
  const std::string line = versionLine("t", Description::Selectable);
  if (old)
    setenv("EMBER_ISA", saved.c_str(), 1);
  else
    unsetenv("EMBER_ISA");
  EXPECT_EQ(
      line.rfind("t " + std::string(versionString()) + " (default description: none loaded: ", 0),
      0u)
      << line;
  EXPECT_NE(line.find("/nonexistent/desc.json"), std::string::npos) << line;
}

TEST(Cli, ValueChecks) {
  auto check = [](CLI::Validator v, std::string s) { return v(s); };
  const CLI::Validator n = wholeNumber(1, 100);
  EXPECT_EQ(check(n, "1"), "");
  EXPECT_EQ(check(n, "100"), "");
  EXPECT_EQ(check(n, "0"), "must be at least 1, got 0");
  EXPECT_EQ(check(n, "101"), "must be at most 100, got 101");
  for (const char* bad : {"-3", "", "1.5", "0x10", "+4", " 4"})
    EXPECT_EQ(check(n, bad), "expects a non-negative integer, got '" + std::string(bad) + "'")
        << bad;
  EXPECT_EQ(check(n, "18446744073709551616"), "must be at most 100, got 18446744073709551616");
  EXPECT_EQ(check(wholeNumber(0, UINT64_MAX), "18446744073709551615"), "");
  const CLI::Validator nv = nameEqualsValue("NAME=FILE.npy");
  EXPECT_EQ(check(nv, "x=a.npy"), "");
  EXPECT_EQ(check(nv, "x=a=b"), "");
  for (const char* bad : {"x", "=a.npy", "x=", ""})
    EXPECT_EQ(check(nv, bad), "expects NAME=FILE.npy, got '" + std::string(bad) + "'") << bad;
  EXPECT_EQ(splitNameValue("x=a=b"), (std::pair<std::string, std::string>{"x", "a=b"}));
}

TEST(Cli, RepeatedOptionKeepsTheLastValue) {
  std::string out, err;
  Demo d;
  EXPECT_EQ(d.run({"a", "--count", "2", "--count=3"}, ok, &out, &err), 0) << err;
  EXPECT_EQ(d.count, 3);
}

} // namespace
} // namespace ember::cli
