// Every ONNX backend node test (package libonnx-testdata) whose nodes the cpu backend
// supports, after the default pipeline, against the interpreter on the same function:
// within 1e-5 * max(1, max |ref|), NaN where the reference has NaN, integers exactly.
#include "CpuTestUtil.h"
#include "OnnxTensor.h"

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

std::string dataDir() {
  const char* env = std::getenv("EMBER_ONNX_TESTDATA");
  return env ? env : "/usr/share/libonnx-testdata/data/node";
}

/// Imports one case with its first data set's inputs (int64 inputs become constants,
/// as the conformance runner does); false if Ember cannot import it.
bool loadCase(const fs::path& dir, std::unique_ptr<Module>* m, TensorMap* inputs) {
  const fs::path set = dir / "test_data_set_0";
  if (!fs::exists(dir / "model.onnx") || !fs::exists(set))
    return false;
  try {
    std::unique_ptr<Module> probe = importOnnxFile((dir / "model.onnx").string());
    std::vector<std::string> names;
    for (const auto& p : probe->placeholders())
      names.push_back(p->name());
    OnnxImportOptions opts;
    TensorMap in;
    for (size_t i = 0; fs::exists(set / ("input_" + std::to_string(i) + ".pb")); ++i) {
      if (i >= names.size())
        return false;
      Tensor t = readOnnxTensorFile((set / ("input_" + std::to_string(i) + ".pb")).string());
      if (t.kind() == ElemKind::Int64)
        opts.constantInputs.emplace(names[i], std::move(t));
      else
        in.emplace(names[i], std::move(t));
    }
    *m = importOnnxFile((dir / "model.onnx").string(), opts);
    inputs->clear();
    for (auto& [name, t] : in)
      if ((*m)->getPlaceholder(name))
        inputs->emplace(name, std::move(t));
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(CpuNodeTests, AgreeWithTheInterpreterOnEverySupportedCase) {
  if (!fs::exists(dataDir()))
    GTEST_SKIP() << "no ONNX node tests at " << dataDir() << " (package libonnx-testdata)";
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(dataDir()))
    cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
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
