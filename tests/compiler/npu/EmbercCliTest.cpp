// The emberc command line: help, argument and input errors (exit status and message),
// compiling small ONNX CNNs written by make_tiny_models.py, profile dump/reload giving the
// same binary, the large description, the list of unsupported nodes; and the binary it
// writes simulated bit for bit against the int8 interpreter on the same quantized graph.
#include "NpuTestUtil.h"

#include "ember/importer/OnnxImporter.h"
#include "ember/passes/Pass.h"
#include "ember/quantization/Profile.h"
#include "ember/quantization/Quantize.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ember::npu::test {
namespace {

namespace fs = std::filesystem;

/// A folder of this test's own (ctest runs tests in parallel) with the generated models.
const std::string& dir() {
  static const std::string d = [] {
    const std::string out = std::string(EMBER_BINARY_DIR) + "/npu_cli/" +
                            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::create_directories(out);
    const std::string cmd = std::string(EMBER_PYTHON) + " " + EMBER_SOURCE_DIR +
                            "/tests/compiler/npu/make_tiny_models.py --out " + out;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return out;
  }();
  return d;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CliRun {
  int status = -1;
  std::string out, err;
};

CliRun emberc(const std::string& args) {
  const std::string o = dir() + "/stdout.txt", e = dir() + "/stderr.txt";
  const std::string cmd = std::string(EMBERC_PATH) + " " + args + " > " + o + " 2> " + e;
  CliRun r;
  const int rc = std::system(cmd.c_str());
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(o);
  r.err = slurp(e);
  return r;
}

bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

TEST(Emberc, HelpDescribesEveryOption) {
  CliRun r = emberc("--help");
  EXPECT_EQ(r.status, 0);
  for (const char* o : {"Usage: emberc", "--isa", "--calibrate", "--calibration", "--dump-profile",
                        "--load-profile", "--print-pipeline", "--fallback", "--host-gmacs",
                        "exit status", "--version"})
    EXPECT_TRUE(has(r.out, o)) << o;
}

TEST(Emberc, SystemOptionsGoTogether) {
  const std::string sys =
      std::string(" --system ") + EMBER_SOURCE_DIR + "/isa/systems/ember-v1-x4.json";
  CliRun r = emberc("m.onnx" + sys);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--system needs -o OUT.pkg (the pipeline's package) or "
                         "--partition-report"))
      << r.err;
  r = emberc("m.onnx --backend cpu -o m.pkg" + sys);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--system pipelines a model over NPUs (not --backend cpu)")) << r.err;
  r = emberc("m.onnx --partition-report --isa x.json" + sys);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--system names every device's description")) << r.err;
  EXPECT_TRUE(has(emberc("--help").out, "--system")) << "--help lists --system";
}

TEST(Emberc, BadArgumentsExitTwo) {
  CliRun r = emberc("");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "no model given")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "-o OUT.elf")) << r.err;
  r = emberc("--frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "not expected: --frobnicate")) << r.err;
  EXPECT_TRUE(has(r.err, "(see emberc --help)")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx -o x.elf --calibrate");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--calibrate: 1 required SPEC missing")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx -o x.elf --load-profile p.json --dump-profile q.json");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--dump-profile excludes --load-profile")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx -o x.elf --min-region -1");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--min-region: expects a non-negative integer, got '-1'")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx -o x.elf --host-gmacs 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--host-gmacs: expects a positive number, got '0'")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx -o x.elf --fallback gpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(r.err, "--fallback: expects cpu, interp or none, got 'gpu'")) << r.err;
}

TEST(Emberc, BadInputsNameTheCulprit) {
  CliRun r = emberc(dir() + "/no_such.onnx -o " + dir() + "/x.elf");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "no_such.onnx")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx -o " + dir() + "/x.elf --calibration median");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "median")) << r.err;
  r = emberc(dir() + "/tiny_cnn.onnx -o " + dir() + "/x.elf --isa " + dir() + "/calib.npy");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "calib.npy")) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/x.elf"));
}

TEST(Emberc, UnsupportedNodesAreAllListed) {
  // --fallback none: refused as before partitioning, every such node listed.
  fs::remove(dir() + "/softmax.elf");
  CliRun r = emberc(dir() + "/tiny_softmax.onnx -o " + dir() + "/softmax.elf --fallback none");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "Softmax")) << r.err;
  EXPECT_TRUE(has(r.err, "cannot run on the NPU (--fallback none)")) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/softmax.elf"));
  // By default the Softmax runs on the host: a package, and the report says why.
  r = emberc(dir() + "/tiny_softmax.onnx -o " + dir() + "/softmax.pkg --partition-report");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "Softmax")) << r.out;
  EXPECT_TRUE(has(r.out, "not the NCHWc channels")) << r.out;
  EXPECT_TRUE(has(r.out, "placement: ")) << r.out;
  EXPECT_TRUE(has(r.out, "wrote package")) << r.out;
  EXPECT_TRUE(fs::exists(dir() + "/softmax.pkg"));
}

TEST(Emberc, PrintPipelineAlone) {
  CliRun r = emberc("--print-pipeline");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(has(r.out, "fold-batchnorm")) << r.out;
}

TEST(Emberc, DumpLirWritesTheLowLevelIrTheNpuCompiledFrom) {
  const std::string elf = dir() + "/lir.elf", ir = dir() + "/tiny_cnn.lir";
  std::remove(ir.c_str());
  CliRun r = emberc(dir() + "/tiny_cnn.onnx -o " + elf + " --calibrate random:2 --dump-lir " + ir);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = slurp(ir);
  // The summary's layers are the IR's compute instructions (Conv layers here), with the
  // allocations the DRAM plan placed.
  EXPECT_TRUE(has(text, "lir function")) << text;
  EXPECT_TRUE(has(text, "= Conv @out")) << text;
  EXPECT_TRUE(has(text, "allocactivation")) << text;
  EXPECT_EQ(
      emberc(dir() + "/tiny_cnn.onnx --backend cpu --emit-bundle " + dir() + "/b --dump-lir " + ir)
          .status,
      2);
}

TEST(Emberc, LargeDescription) {
  const std::string elf = dir() + "/large.elf";
  CliRun r = emberc(dir() + "/tiny_cnn.onnx -o " + elf + " --calibrate random:2 --isa " +
                    isaPath("isa/examples/ember-v1-large.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "ember-v1-large")) << r.out;
  EXPECT_NO_THROW(isa::readElf(elf, largeIsa()));
}

TEST(Emberc, ProfileRoundTripAndBitExactSimulation) {
  const std::string a = dir() + "/a.elf", b = dir() + "/b.elf", p = dir() + "/profile.json";
  CliRun r = emberc(dir() + "/tiny_cnn.onnx -o " + a + " --calibrate " + dir() +
                    "/calib.npy --calibration percentile --dump-profile " + p);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* want : {"estimated cycles", "SRAM peak use", "binary", "compile time", "Conv"})
    EXPECT_TRUE(has(r.out, want)) << want << " in\n" << r.out;
  r = emberc(dir() + "/tiny_cnn.onnx -o " + b + " --calibration percentile --load-profile " + p);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(a), slurp(b));

  // The same quantized graph in process; the binary emberc wrote against its interpreter.
  std::unique_ptr<Module> m = importOnnxFile(dir() + "/tiny_cnn.onnx");
  Function* f = m->getFunction("main");
  runPipeline(*f, defaultPipeline());
  quant::QuantizeOptions qo;
  qo.method = quant::CalibrationMethod::Percentile;
  Function* q = quant::quantize(*f, quant::Profile::load(p), qo);
  isa::Binary bin = isa::readElf(b, refIsa());
  auto in = randomInputs(bin, 99);
  SimOut s = simulate(bin, refIsa(), in);
  auto want = interpret(*q, in);
  ASSERT_EQ(want.size(), 1u);
  EXPECT_EQ(mismatches(s.outputs["logits"], want["logits"]), 0u);
}

TEST(Emberc, SumOverHeightAndWidthRunsWholeOnTheNpu) {
  // ReduceSum over axes {2, 3} (spatial-mean-to-pool: GlobalAveragePool times H * W) runs
  // on the NPU with --fallback none, bit for bit with the int8 interpreter.
  const std::string elf = dir() + "/sum.elf", p = dir() + "/sum_profile.json";
  CliRun r = emberc(dir() + "/tiny_reducesum.onnx -o " + elf + " --fallback none --calibrate " +
                    dir() + "/calib.npy --dump-profile " + p);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "GlobalAveragePool")) << r.out;
  EXPECT_FALSE(has(r.out, "ReduceSum")) << r.out;
  std::unique_ptr<Module> m = importOnnxFile(dir() + "/tiny_reducesum.onnx");
  Function* f = m->getFunction("main");
  runPipeline(*f, defaultPipeline());
  Function* q = quant::quantize(*f, quant::Profile::load(p), quant::QuantizeOptions{});
  isa::Binary bin = isa::readElf(elf, refIsa());
  for (uint32_t seed : {5u, 6u}) {
    auto in = randomInputs(bin, seed);
    SimOut s = simulate(bin, refIsa(), in);
    auto want = interpret(*q, in);
    EXPECT_EQ(mismatches(s.outputs["logits"], want["logits"]), 0u) << "seed " << seed;
  }
}

TEST(Emberc, InputReturnedUnchangedCompilesToACopy) {
  // y = Identity(x): once an internal error (vector::_M_range_check); now a row copy
  // whose output bytes are the input's.
  const std::string elf = dir() + "/identity.elf";
  CliRun r = emberc(dir() + "/identity.onnx -o " + elf + " -q");
  ASSERT_EQ(r.status, 0) << r.err;
  isa::Binary bin = isa::readElf(elf, refIsa());
  auto in = randomInputs(bin, 7);
  SimOut s = simulate(bin, refIsa(), in);
  EXPECT_EQ(mismatches(s.outputs["y"], in["x"]), 0u);
}

TEST(Emberc, OutputsTheNpuCannotProduceAreCleanErrors) {
  // The input returned under its own name: the binary's I/O table cannot hold it twice.
  CliRun r = emberc(dir() + "/passthrough.onnx -o " + dir() + "/p.elf -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "passthrough.onnx: npu backend: graph output 'x' has the name of a "
                         "graph input"))
      << r.err;
  EXPECT_FALSE(has(r.err, "internal error")) << r.err;
  r = emberc(dir() + "/const_out.onnx -o " + dir() + "/c.elf -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "const_out.onnx: npu backend: graph output 'c' is Constant 'c'")) << r.err;
  EXPECT_FALSE(fs::exists(dir() + "/p.elf") || fs::exists(dir() + "/c.elf"));
}

TEST(Emberc, MessagesNameTheModelAndTheNode) {
  // Was "unsupported: function 'main_int8': ...": no file, an internal function name.
  CliRun r = emberc(dir() + "/bigpad.onnx -o " + dir() + "/b.elf -q --fallback none");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "bigpad.onnx: npu backend: 1 node(s) of the quantized model")) << r.err;
  EXPECT_TRUE(has(r.err, "Conv 'conv_bigpad")) << r.err;
  // Partitioned, the placement report names the node and the reason.
  r = emberc(dir() + "/bigpad.onnx -o " + dir() + "/b.pkg -q --partition-report");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "conv_bigpad")) << r.out;
  EXPECT_TRUE(has(r.out, "pad")) << r.out;
  // An index out of range met while folding at import names file and node once.
  r = emberc(dir() + "/gather_oob.onnx -o " + dir() + "/g.elf -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "gather_oob.onnx: node 'gather_oob' (Gather): an index value 100 is "
                         "out of range"))
      << r.err;
}

} // namespace
} // namespace ember::npu::test
