// Whole networks of the model zoo on the NPU: imported, optimised, quantized with random
// calibration, compiled for the reference description, simulated, and compared bit for
// bit with the int8 interpreter on the same quantized function; where the cpu backend is
// built, it runs that function too (2 threads with the reference description's test, 1
// with the large one's) and must give the interpreter's outputs bit for bit, so interp,
// cpu and sim agree exactly. Prints cycles, MAC utilisation and compile time. The zoo
// folder is $EMBER_MODELS_DIR, else the build's models/ folder; an absent model is
// skipped.
#include "NpuTestUtil.h"

#include "ember/driver/Driver.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

namespace ember::npu::test {
namespace {

std::string modelPath(const std::string& name) {
  std::string d = EMBER_DEFAULT_MODELS_DIR;
  if (const char* env = std::getenv("EMBER_MODELS_DIR"))
    d = env;
  return d + "/" + name + "/model.onnx";
}

void runZooModel(const char* name, const isa::IsaDescription& isa, int cpuThreads) {
  const std::string path = modelPath(name);
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "no " << path << " (run `ninja models` or set EMBER_MODELS_DIR)";
  // The compile driver every tool uses: import, pipeline, calibration, quantization,
  // partition (the zoo's CNNs run whole on the NPU: one segment, npu::compile's binary).
  driver::QuantizeRequest qr;
  qr.calibrate = "random:2";
  const driver::CompiledModel c = driver::compileModel(path, isa, qr, {});
  ASSERT_TRUE(c.plan.whole) << partition::formatPlacementReport(c.plan);
  const Function* q = c.quantized;
  const CompileResult& r = *c.plan.segments.front().npu;
  const double compileSeconds = c.partitionSeconds;
  auto in = randomInputs(r.binary, 1);
  const auto t1 = std::chrono::steady_clock::now();
  SimOut s = simulate(r.binary, isa, in);
  const double simSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const TensorMap feeds = floatFeeds(*q, in);
  const TensorMap ref = createBackend("interp")->compile(*q)->run(feeds);
  const auto want = outputCodes(*q, ref);
  for (const auto& kv : want)
    EXPECT_EQ(mismatches(s.outputs[kv.first], kv.second), 0u) << kv.first;
#ifdef EMBER_HAVE_CPU
  const auto t2 = std::chrono::steady_clock::now();
  expectCpuBitExact(*q, feeds, ref, cpuThreads, name);
  std::printf("%s on the cpu backend (%d thread(s)): compile and run %.1f s\n", name, cpuThreads,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count());
#else
  (void)cpuThreads;
#endif
  std::printf("%s on %s: %zu layers, %lld instructions, compile %.3f s; simulated %llu cycles "
              "(estimated %.0f, ratio %.3f), MAC utilisation %.1f%%, energy %.1f uJ, "
              "simulation %.1f s\n",
              name, isa.name().c_str(), r.summary.layers.size(), (long long)r.summary.instructions,
              compileSeconds, (unsigned long long)s.report.cycles, r.summary.cycles,
              r.summary.cycles / double(s.report.cycles), 100.0 * s.report.mac_utilization,
              s.report.energy_total_pj * 1e-6, simSeconds);
}

class ZooOnNpu : public ::testing::TestWithParam<const char*> {};
TEST_P(ZooOnNpu, BitExactAgainstInt8Interpreter) {
  runZooModel(GetParam(), refIsa(), 2);
}

/// The same on the 32 x 32 vendor description (different lanes, field widths, SRAMs).
class ZooOnLargeNpu : public ::testing::TestWithParam<const char*> {};
TEST_P(ZooOnLargeNpu, BitExactAgainstInt8Interpreter) {
  runZooModel(GetParam(), largeIsa(), 1);
}
INSTANTIATE_TEST_SUITE_P(Zoo, ZooOnLargeNpu,
                         ::testing::Values("resnet18", "mobilenet_v2", "efficientnet_b0"),
                         [](const auto& p) { return std::string(p.param); });

INSTANTIATE_TEST_SUITE_P(Zoo, ZooOnNpu,
                         ::testing::Values("resnet18", "mobilenet_v2", "resnet50",
                                           "mobilenet_v3_small", "efficientnet_b0", "googlenet",
                                           "squeezenet1_0", "regnet_x_400mf", "densenet121",
                                           "shufflenet_v2_x0_5"),
                         [](const auto& p) { return std::string(p.param); });

} // namespace
} // namespace ember::npu::test
