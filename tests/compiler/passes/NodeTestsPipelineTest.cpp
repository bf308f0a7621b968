// The default pipeline (once as the interpreter would run it, once with everything
// lowered) on every ONNX backend node test that Ember imports: hundreds of small real
// graphs. The unoptimised interpreter is the reference: results must agree within
// 1e-4 * max(1, max |ref|) (NaN where the reference has NaN, integers exactly), and no
// pass may fail or leave an invalid function.
#include "OnnxNodeCases.h"
#include "PassTestUtil.h"

#include "ember/importer/OnnxImporter.h"
#include "ember/support/Error.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace ember {
namespace {

namespace fs = std::filesystem;
using namespace passtest;
using namespace nodecases;

/// "" when equal within the bound, else a reason.
std::string differ(const Tensor& got, const Tensor& ref) {
  if (got.dims() != ref.dims() || got.kind() != ref.kind())
    return "type " + got.type().toString() + " vs " + ref.type().toString();
  double maxRef = 1;
  for (int64_t i = 0; i < ref.size(); ++i)
    if (std::isfinite(ref.getAsDouble(i)))
      maxRef = std::max(maxRef, std::fabs(ref.getAsDouble(i)));
  const double tol = ref.kind() == ElemKind::Float32 ? 1e-4 * maxRef : 0.0;
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double a = got.getAsDouble(i), b = ref.getAsDouble(i);
    if (std::isnan(b) ? !std::isnan(a) : (std::isinf(b) ? a != b : std::fabs(a - b) > tol))
      return "element " + std::to_string(i) + ": " + std::to_string(a) + " vs " + std::to_string(b);
  }
  return "";
}

TEST(PipelineOnNodeTests, KeepsTheInterpreterResultsOfEveryImportableCase) {
  if (!fs::exists(dataDir()))
    GTEST_SKIP() << "no ONNX node tests at " << dataDir() << " (package libonnx-testdata)";
  const std::vector<fs::path> cases = listCases();
  size_t checked = 0, changed = 0, lowered = 0;
  for (const fs::path& dir : cases) {
    for (bool lowerAll : {false, true}) {
      std::unique_ptr<Module> m;
      TensorMap in;
      if (!loadCase(dir, &m, &in))
        break;
      Function& f = *m->functions().front();
      TensorMap ref;
      try {
        ref = createInterpreterBackend()->compile(f)->run(in);
      } catch (const Error&) {
        break; // a case the interpreter itself rejects
      }
      const size_t nodes = f.numNodes();
      LowerAllBackend everything;
      PassContext ctx;
      if (lowerAll)
        ctx.backend = &everything;
      std::vector<PassStats> stats;
      try {
        stats = runPipeline(f, defaultPipeline(), ctx);
      } catch (const Error& e) {
        ADD_FAILURE() << dir.filename() << (lowerAll ? " (lower all)" : "") << ": " << e.what();
        continue;
      }
      size_t rewrites = 0;
      for (const PassStats& s : stats)
        rewrites += s.changed;
      (lowerAll ? lowered : changed) += rewrites != 0 || f.numNodes() != nodes;
      const TensorMap got = createInterpreterBackend()->compile(f)->run(in);
      for (const auto& [name, r] : ref) {
        ASSERT_TRUE(got.count(name)) << dir.filename() << " output " << name;
        const std::string why = differ(got.at(name), r);
        EXPECT_TRUE(why.empty()) << dir.filename() << (lowerAll ? " (lower all)" : "") << " output "
                                 << name << ": " << why;
      }
      checked += !lowerAll;
    }
  }
  std::cout << "[node tests] " << checked << " cases checked; the default pipeline changed "
            << changed << ", with everything lowered " << lowered << "\n";
  EXPECT_GT(checked, 400u);
}

} // namespace
} // namespace ember
