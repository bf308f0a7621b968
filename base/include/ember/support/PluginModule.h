#pragma once
/// \file
/// Loading a part of Ember built as a module of its own (a shared object opened with
/// dlopen on first use): the cpu backend (ember/cpu/CpuPlugin.h) and the ONNX importer
/// (ember/importer/OnnxPlugin.h). A tool that only runs NPU binaries then starts without
/// the large libraries those parts need (LLVM; protobuf and onnx), which the dynamic
/// loader would otherwise map and relocate at every start.
///
/// A module exports one C function, its entry, returning a pointer to a table whose first
/// member is an `unsigned long` layout number that the module and the program compute
/// alike from what crosses between them; a module of another build has another number
/// and is refused rather than called.

#include <string>
#include <vector>

namespace ember {

/// Where a module may be and what it exports.
struct PluginModuleSpec {
  const char* file;      ///< Its file name, e.g. "libember_onnx_plugin.so".
  const char* envVar;    ///< The variable that names its path and overrides the rest.
  const char* entry;     ///< The C name of its entry: `const T* entry()`.
  const char* buildPath; ///< Its path in the build tree, or null.
  unsigned long layout;  ///< The layout number the entry's table must start with.
};

/// Where the module may be, in the order tried: $envVar alone when set and not empty;
/// else `../lib/ember/FILE` beside the running program (an installed tool in P/bin), then
/// the build tree's path.
std::vector<std::string> pluginModuleCandidates(const PluginModuleSpec& spec);

/// The outcome of loadPluginModule.
struct LoadedPluginModule {
  const void* api = nullptr; ///< The entry's table; null when no candidate loaded.
  std::string error;         ///< Each candidate tried and why it was refused ("\n  PATH: why").
};

/// Opens the first candidate that loads, has the entry and the layout: its table, loaded
/// for the life of the process. Never throws for a missing or bad module: `error` then
/// names every file tried with the loader's reason (no such file, not a shared object, no
/// entry, built by another build of Ember).
LoadedPluginModule loadPluginModule(const PluginModuleSpec& spec);

/// The module's entry table for a caller that cannot go on without it: loaded by
/// loadPluginModule on the first call for `spec.file` and kept for the life of the
/// process, so later calls (from any thread) cost a lookup and see the same table or the
/// same failure. A module that does not load throws ember::Error where `what` (e.g. "the
/// cpu backend") names the part, listing every file tried and why, and naming
/// `spec.envVar` as the way to point at the module.
const void* requirePluginModule(const PluginModuleSpec& spec, const char* what);

} // namespace ember
