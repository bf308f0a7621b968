#pragma once
/// \file
/// The ONNX importer for programs that do not link protobuf and onnx
/// (docs/compiler/importer.md, "The importer as a module"): the importer built as a module
/// of its own (libember_onnx_plugin.so: libember_onnx with the libraries beneath it),
/// loaded the first time a model is imported. A program that links the importer itself (a
/// strong reference to importOnnxFile pulls it from libember_onnx) uses that one;
/// ember-run does not, so running an NPU binary or a package never maps libonnx,
/// libonnx_proto and libprotobuf (bound at load, they cost every start some 4-5 ms).

#include "ember/importer/OnnxImporter.h"

namespace ember {

/// What the module exports, under the C name kOnnxPluginEntry, for the loader of this same
/// build (`layout` guards against a module of another build).
struct OnnxPluginApi {
  unsigned long layout; ///< onnxPluginLayout(); first, as PluginModule.h requires
  /// importOnnxFile.
  std::unique_ptr<Module> (*importFile)(const std::string& path, const OnnxImportOptions& options);
  /// importOnnxBytes.
  std::unique_ptr<Module> (*importBytes)(const std::string& bytes, const std::string& what,
                                         const OnnxImportOptions& options);
  /// supportedOnnxOps.
  std::vector<std::string> (*supportedOps)();
};

/// The module's entry: `const OnnxPluginApi* ember_onnx_plugin_v1()`.
constexpr const char* kOnnxPluginEntry = "ember_onnx_plugin_v1";

/// A number both sides compute from the layout of what crosses between them.
constexpr unsigned long onnxPluginLayout() {
  return sizeof(OnnxImportOptions) * 1000003ul + sizeof(OnnxPluginApi) * 1009ul +
         sizeof(Module) * 101ul + sizeof(Tensor) * 11ul + sizeof(std::string);
}

/// The ONNX importer: importOnnxFile and its siblings when this program links them, else
/// the module's, loaded on first use from $EMBER_ONNX_PLUGIN, else `../lib/ember/` beside
/// the program, else the build tree. ember::Error naming every place tried and the
/// loader's reason when none loads; later calls give the same error without trying again.
const OnnxPluginApi& loadOnnxImporter();

} // namespace ember
