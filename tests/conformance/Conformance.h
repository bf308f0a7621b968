#pragma once
/// \file
/// One ONNX node-test case (a folder with model.onnx and test_data_set_*/): import it
/// with Ember, run it on the interpreter, compare with the expected outputs.

#include <filesystem>
#include <string>
#include <vector>

namespace ember::conformance {

enum class Status { Pass, Fail, Unsupported };

struct CaseResult {
  std::string name;             ///< folder name ("test_conv_with_strides_padding")
  std::string group;            ///< operator the case is counted under
  std::vector<std::string> ops; ///< distinct op types of the model
  Status status = Status::Fail;
  bool claimed = false; ///< every op type has an Ember importer
  std::string reason;   ///< why it failed / is unsupported
};

/// Runs one case in this process (a crash in a kernel takes the process down).
CaseResult runCase(const std::filesystem::path& dir);

/// Runs one case in a child process with a time limit; a crash or timeout is a failure.
CaseResult runCaseIsolated(const std::filesystem::path& dir, unsigned timeoutSeconds);

/// The operator a case is counted under: its single op type, else the op type whose
/// name matches the case name (test_layer_normalization_* -> LayerNormalization), else
/// "(multi-node)".
std::string caseGroup(const std::string& caseName, const std::vector<std::string>& ops);

} // namespace ember::conformance
