// NaN and ±Inf through the float kernels of every backend (interpreter; cpu with one and
// two threads), on the imported graph and after the optimisation pipeline (which fuses
// Relu/Clip into Conv, Add and MatMul). The expected outputs are PyTorch's, written by
// gen_float_specials.py; the rules are in docs/numerics.md ("NaN and infinities").
#include "ember/backend/Backend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/passes/Pass.h"
#include "ember/support/Npy.h"
#ifdef EMBER_HAVE_CPU
#include "ember/cpu/CpuBackend.h"
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace ember;

namespace {

std::string path(const std::string& name, const char* suffix) {
  return std::string(FLOAT_SPECIALS_DIR) + "/" + name + suffix;
}

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  std::ifstream in(std::string(FLOAT_SPECIALS_DIR) + "/cases.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      names.push_back(line);
  return names;
}

/// "" when `got` equals `want`: NaN where want is NaN, the same infinity where it is
/// infinite, finite values within 1e-5 relative (1e-6 absolute), else the first difference.
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.dims() != want.dims())
    return "shape " + shapeToString(got.dims()) + " vs " + shapeToString(want.dims());
  for (int64_t i = 0; i < want.size(); ++i) {
    const double g = got.getAsDouble(i), w = want.getAsDouble(i);
    const bool ok = std::isnan(w)   ? std::isnan(g)
                    : std::isinf(w) ? g == w
                                    : std::fabs(g - w) <= 1e-6 + 1e-5 * std::fabs(w);
    if (!ok)
      return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", PyTorch " +
             std::to_string(w);
  }
  return "";
}

struct Runner {
  const char* name;
  std::function<std::unique_ptr<Backend>()> make;
};

std::vector<Runner> runners() {
  std::vector<Runner> r = {{"interp", [] { return createBackend("interp"); }}};
#ifdef EMBER_HAVE_CPU
  r.push_back({"cpu-1-thread", [] { return createCpuBackend(CpuOptions{1}); }});
  r.push_back({"cpu-2-threads", [] { return createCpuBackend(CpuOptions{2}); }});
#endif
  return r;
}

} // namespace

TEST(FloatSpecials, EveryBackendMatchesPyTorch) {
  const std::vector<std::string> names = caseNames();
  ASSERT_GT(names.size(), 20u) << "no cases in " << FLOAT_SPECIALS_DIR;
  for (const std::string& name : names) {
    const Tensor x = readNpy(path(name, ".input.npy"));
    const Tensor want = readNpy(path(name, ".expected.npy"));
    for (bool optimise : {false, true}) {
      auto m = importOnnxFile(path(name, ".onnx"));
      Function& f = *m->functions().at(0);
      if (optimise)
        runPipeline(f, defaultPipeline());
      for (const Runner& r : runners()) {
        std::unique_ptr<Backend> backend = r.make();
        if (!unsupportedNodes(*backend, f).empty())
          continue; // e.g. Selu on the cpu backend: not this test's subject
        TensorMap out = backend->compile(f)->run({{"x", x}});
        EXPECT_EQ(compare(out.at("y"), want), "")
            << name << " on " << r.name << (optimise ? " after the pipeline" : "");
      }
    }
  }
}
