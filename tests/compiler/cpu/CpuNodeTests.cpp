// Every ONNX backend node test (package libonnx-testdata) whose nodes the cpu backend
// supports, after the default pipeline, against the interpreter on the same function:
// within 1e-5 * max(1, max |ref|), NaN where the reference has NaN, integers exactly.
#include "CpuTestUtil.h"
#include "OnnxNodeCases.h"

#include "ember/backend/Backend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/passes/Pass.h"
#include "ember/support/Error.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

namespace ember {
namespace {

namespace fs = std::filesystem;
using namespace cputest;
using namespace nodecases;

TEST(CpuNodeTests, AgreeWithTheInterpreterOnEverySupportedCase) {
  if (!fs::exists(dataDir()))
    GTEST_SKIP() << "no ONNX node tests at " << dataDir() << " (package libonnx-testdata)";
  const std::vector<fs::path> cases = listCases();
  auto cpu = createBackend("cpu");
  size_t checked = 0, unsupported = 0;
  std::map<std::string, size_t> missingKinds;
  for (const fs::path& dir : cases) {
    std::unique_ptr<Module> m;
    TensorMap in;
    if (!loadCase(dir, &m, &in))
      continue;
    Function& f = *m->functions().front();
    try {
      runPipeline(f, defaultPipeline());
    } catch (const Error&) {
      continue;
    }
    if (f.numNodes() == 0)
      continue; // folded to constants: nothing for a backend to run
    if (!unsupportedNodes(*cpu, f).empty()) {
      ++unsupported;
      for (const auto& n : f.nodes())
        if (!cpu->supports(*n))
          ++missingKinds[std::string(n->kindName()) + "/" + elemKindName(n->resultType().kind)];
      continue;
    }
    TensorMap ref;
    try {
      ref = createInterpreterBackend()->compile(f)->run(in);
    } catch (const Error&) {
      continue; // a case the interpreter itself rejects
    }
    TensorMap got;
    try {
      got = cpu->compile(f)->run(in);
    } catch (const Error& e) {
      ADD_FAILURE() << dir.filename() << ": " << e.what();
      continue;
    }
    EXPECT_EQ(compare(got, ref, 1e-5), "") << dir.filename();
    ++checked;
  }
  std::cout << "[cpu node tests] " << checked << " cases checked, " << unsupported
            << " with nodes the cpu backend does not support:";
  for (const auto& [kind, count] : missingKinds)
    std::cout << " " << kind << " x" << count;
  std::cout << "\n";
  EXPECT_GT(checked, 150u);
}

} // namespace
} // namespace ember
