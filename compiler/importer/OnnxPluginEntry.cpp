// libember_onnx_plugin.so: the ONNX importer as a module (ember/importer/OnnxPlugin.h).
// Only the entry is exported; libember_onnx and the libraries beneath it (the graph core,
// the interpreter that folds constants) are linked into the module with their symbols
// hidden, so the module keeps its own copies and never takes the program's.
#include "ember/importer/OnnxPlugin.h"

namespace {
std::unique_ptr<ember::Module> importFile(const std::string& path,
                                          const ember::OnnxImportOptions& options) {
  return ember::importOnnxFile(path, options);
}
std::unique_ptr<ember::Module> importBytes(const std::string& bytes, const std::string& what,
                                           const ember::OnnxImportOptions& options) {
  return ember::importOnnxBytes(bytes, what, options);
}
} // namespace

extern "C" __attribute__((visibility("default"))) const ember::OnnxPluginApi*
ember_onnx_plugin_v1() {
  static const ember::OnnxPluginApi api{ember::onnxPluginLayout(), &importFile, &importBytes,
                                        &ember::supportedOnnxOps};
  return &api;
}
