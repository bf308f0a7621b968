// Where the tests find the model zoo (the models `ninja models` exports with
// tests/models/gen_models.py), shared by every test that runs zoo models.
#pragma once

#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <string>

namespace ember::zoo {

/// The zoo folder: $EMBER_MODELS_DIR when set (a zoo exported elsewhere), else the
/// build's models/ folder, which `ninja models` fills.
inline std::string modelsDir() {
  if (const char* env = std::getenv("EMBER_MODELS_DIR"))
    return env;
  return EMBER_BINARY_DIR "/models";
}

/// The folder of the zoo model `name`.
inline std::string modelDir(const std::string& name) {
  return modelsDir() + "/" + name;
}

/// Whether every one of `files` exists in `dir`: a model that was not exported is
/// skipped by its tests, not failed, so that a partial zoo still runs the rest.
inline bool hasFiles(const std::string& dir, std::initializer_list<const char*> files) {
  for (const char* f : files)
    if (!std::ifstream(dir + "/" + f).good())
      return false;
  return true;
}

} // namespace ember::zoo

/// Skips the current test unless `dir` holds every named file (in a TEST body).
#define EMBER_SKIP_UNLESS_ZOO_FILES(dir, ...)                                                      \
  if (!::ember::zoo::hasFiles(dir, {__VA_ARGS__}))                                                 \
  GTEST_SKIP() << "no " << (dir) << "/model.onnx (run `ninja models` or set EMBER_MODELS_DIR)"
