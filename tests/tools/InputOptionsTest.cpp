// --input-shape and --bind (tools/cli, ember/cli/InputOptions.h): the values they accept,
// the messages of those they refuse, and the exit status, in process.
#include "ember/cli/InputOptions.h"
#include "ember/cli/Cli.h"

#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ember::cli {
namespace {

/// A tool "demo" that takes a model and the input options.
struct Demo {
  CLI::App app{"demo: a test tool", "demo"};
  std::string model;
  driver::InputBindings inputs;
  explicit Demo(InputOptionSet set = InputOptionSet::ShapesAndBinds) {
    setup(app, Description::Default);
    app.add_option("MODEL", model, "model")->required();
    addInputOptions(app, inputs, set);
  }
  /// Runs with `args` (after the program name); stderr captured.
  int run(std::vector<std::string> args, std::string* err) {
    args.insert(args.begin(), "demo");
    std::vector<char*> argv;
    for (std::string& a : args)
      argv.push_back(a.data());
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int status = cli::run(app, int(argv.size()), argv.data(), [] { return 0; });
    (void)testing::internal::GetCapturedStdout();
    *err = testing::internal::GetCapturedStderr();
    return status;
  }
};

std::string refusal(const std::string& arg) {
  try {
    parseInputShape(arg);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(InputOptions, ParsesShapes) {
  EXPECT_EQ(parseInputShape("input=1x3x224x224"),
            (std::pair<std::string, Shape>{"input", {1, 3, 224, 224}}));
  EXPECT_EQ(parseInputShape("x=5"), (std::pair<std::string, Shape>{"x", {5}}));
  // The name is everything before the first '='.
  EXPECT_EQ(parseInputShape("a:0=2x2"), (std::pair<std::string, Shape>{"a:0", {2, 2}}));
  EXPECT_EQ(parseInputShape("x=2147483648"), (std::pair<std::string, Shape>{"x", {2147483648}}));
}

TEST(InputOptions, RefusesBadShapesNamingTheInputAndTheReason) {
  EXPECT_EQ(refusal("1x3x224x224"),
            "--input-shape 1x3x224x224: expects NAME=DxDx... (e.g. input=1x3x224x224), got "
            "'1x3x224x224'");
  EXPECT_EQ(refusal("=1x3"), "--input-shape =1x3: expects NAME=DxDx... (e.g. "
                             "input=1x3x224x224), got '=1x3'");
  EXPECT_EQ(refusal("x="), "--input-shape x=: no shape given for input 'x' (expects "
                           "NAME=DxDx..., e.g. x=1x3x224x224)");
  EXPECT_EQ(refusal("x=1xAx3"), "--input-shape x=1xAx3: dimension 1 of input 'x' is 'A', not "
                                "a whole number (expects DxDx..., e.g. 1x3x224x224)");
  EXPECT_EQ(refusal("x=1x-3"), "--input-shape x=1x-3: dimension 1 of input 'x' is '-3', not a "
                               "whole number (expects DxDx..., e.g. 1x3x224x224)");
  EXPECT_EQ(refusal("x=1xx3"), "--input-shape x=1xx3: dimension 1 of input 'x' is '', not a "
                               "whole number (expects DxDx..., e.g. 1x3x224x224)");
  EXPECT_EQ(refusal("x=2x0"),
            "--input-shape x=2x0: dimension 1 of input 'x' is 0; every dimension must be at "
            "least 1");
  EXPECT_EQ(refusal("x=a=b"), "--input-shape x=a=b: dimension 0 of input 'x' is 'a=b', not a "
                              "whole number (expects DxDx..., e.g. 1x3x224x224)");
  EXPECT_EQ(refusal("x=2147483649"), "--input-shape x=2147483649: dimension 0 of input 'x' is "
                                     "2147483649, more than 2147483648");
  EXPECT_EQ(refusal("x=99999999999999999999"),
            "--input-shape x=99999999999999999999: dimension 0 of input 'x' is "
            "99999999999999999999, more than 2147483648");
}

TEST(InputOptions, FillTheBindingsAndRefuseRepeatedNames) {
  std::string err;
  Demo d;
  EXPECT_EQ(
      d.run({"m.onnx", "--input-shape", "x=3x4", "--input-shape=y=1", "--bind", "s=s.npy"}, &err),
      0)
      << err;
  EXPECT_EQ(d.inputs.shapes, (std::map<std::string, Shape>{{"x", {3, 4}}, {"y", {1}}}));
  EXPECT_EQ(d.inputs.bindFiles, (std::map<std::string, std::string>{{"s", "s.npy"}}));

  EXPECT_EQ(Demo().run({"m.onnx", "--input-shape", "x=0x4"}, &err), kExitUsage);
  EXPECT_EQ(err, "demo: --input-shape: x=0x4: dimension 0 of input 'x' is 0; every dimension "
                 "must be at least 1 (see demo --help)\n");
  EXPECT_EQ(Demo().run({"m.onnx", "--input-shape", "x=1", "--input-shape", "x=2"}, &err),
            kExitUsage);
  EXPECT_NE(err.find("input 'x' is given a shape twice"), std::string::npos) << err;
  EXPECT_EQ(Demo().run({"m.onnx", "--bind", "s"}, &err), kExitUsage);
  EXPECT_NE(err.find("--bind: expects NAME=FILE.npy, got 's'"), std::string::npos) << err;
  EXPECT_EQ(Demo().run({"m.onnx", "--bind", "s=a.npy", "--bind", "s=b.npy"}, &err), kExitUsage);
  EXPECT_NE(err.find("input 's' is bound twice"), std::string::npos) << err;
  // ember-dse takes shapes only.
  EXPECT_EQ(Demo(InputOptionSet::Shapes).run({"m.onnx", "--bind", "s=a.npy"}, &err), kExitUsage);
  EXPECT_NE(err.find("--bind"), std::string::npos) << err;
}

TEST(InputOptions, AreRefusedForCompiledFiles) {
  driver::InputBindings b;
  EXPECT_NO_THROW(driver::refuseInputOptions(b, "m.elf"));
  b.shapes["x"] = {1};
  try {
    driver::refuseInputOptions(b, "m.elf");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--input-shape: m.elf was compiled for fixed input shapes; "
                                     "the option is for ONNX models");
  }
}

} // namespace
} // namespace ember::cli
