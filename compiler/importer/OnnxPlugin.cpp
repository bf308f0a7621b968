// The loader of the ONNX importer's module (ember/importer/OnnxPlugin.h).
#include "ember/importer/OnnxPlugin.h"

#include "ember/support/PluginModule.h"

#include <string>

namespace ember {

#ifndef EMBER_ONNX_IMPORTER_LINKED
// Null unless the program links the importer itself: weak references pull nothing from
// libember_onnx, so a program that only imports through here links no protobuf or onnx.
// (Sanitizer builds define EMBER_ONNX_IMPORTER_LINKED: the references are strong there and
// every program links the importer in, see compiler/CMakeLists.txt.)
__attribute__((weak)) std::unique_ptr<Module> importOnnxFile(const std::string& path,
                                                             const OnnxImportOptions& options);
__attribute__((weak)) std::unique_ptr<Module> importOnnxBytes(const std::string& bytes,
                                                              const std::string& what,
                                                              const OnnxImportOptions& options);
__attribute__((weak)) std::vector<std::string> supportedOnnxOps();
#endif

namespace {

constexpr const char* kModule = "libember_onnx_plugin.so";

/// The importer linked into this program, or null.
const OnnxPluginApi* linkedImporter() {
#ifdef EMBER_ONNX_IMPORTER_LINKED
  static const OnnxPluginApi api{onnxPluginLayout(), &importOnnxFile, &importOnnxBytes,
                                 &supportedOnnxOps};
  return &api;
#else
  using File = std::unique_ptr<Module> (*)(const std::string&, const OnnxImportOptions&);
  using Bytes =
      std::unique_ptr<Module> (*)(const std::string&, const std::string&, const OnnxImportOptions&);
  using Ops = std::vector<std::string> (*)();
  const File file = &importOnnxFile; // each null unless linked in
  const Bytes bytes = &importOnnxBytes;
  const Ops ops = &supportedOnnxOps;
  if (!file || !bytes || !ops)
    return nullptr;
  static const OnnxPluginApi api{onnxPluginLayout(), file, bytes, ops};
  return &api;
#endif
}

} // namespace

const OnnxPluginApi& loadOnnxImporter() {
  if (const OnnxPluginApi* linked = linkedImporter())
    return *linked;
#ifdef EMBER_ONNX_PLUGIN_BUILD_PATH
  const char* build = EMBER_ONNX_PLUGIN_BUILD_PATH;
#else
  const char* build = nullptr;
#endif
  const void* api = requirePluginModule(
      {kModule, "EMBER_ONNX_PLUGIN", kOnnxPluginEntry, build, onnxPluginLayout()},
      "the ONNX importer");
  return *static_cast<const OnnxPluginApi*>(api);
}

} // namespace ember
