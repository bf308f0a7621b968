// The ONNX backend node tests (package libonnx-testdata) as Ember test inputs: where they
// are, which cases exist, and one case imported with its first data set. Shared by every
// test that runs "all importable node tests" through a part of the compiler (the pass
// pipeline, the low-level IR, the CPU backend), so they agree on what a case is.
#pragma once

#include "OnnxTensor.h"

#include "ember/backend/Backend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ember::nodecases {

/// The node-test folder: $EMBER_ONNX_TESTDATA, else Debian's libonnx-testdata.
inline std::string dataDir() {
  const char* env = std::getenv("EMBER_ONNX_TESTDATA");
  return env ? env : "/usr/share/libonnx-testdata/data/node";
}

/// Every case folder, sorted by name (empty if the folder is absent).
inline std::vector<std::filesystem::path> listCases() {
  std::vector<std::filesystem::path> cases;
  if (!std::filesystem::exists(dataDir()))
    return cases;
  for (const auto& e : std::filesystem::directory_iterator(dataDir()))
    cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  return cases;
}

/// Imports one case with its first data set's inputs (int64 inputs become constants, as
/// the conformance runner does); false if Ember cannot import it.
inline bool loadCase(const std::filesystem::path& dir, std::unique_ptr<Module>* m,
                     TensorMap* inputs) {
  namespace fs = std::filesystem;
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
    return false; // unsupported operator, element type, ...
  }
}

} // namespace ember::nodecases
