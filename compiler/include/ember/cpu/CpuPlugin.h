#pragma once
/// \file
/// The cpu backend for programs that do not link LLVM (docs/compiler/cpu-backend.md): the
/// backend built as a module of its own (libember_cpu_plugin.so: libember_cpu with LLVM),
/// loaded the first time a cpu backend is asked for. A program that links the backend
/// itself (a strong reference to createCpuBackend pulls it from libember_cpu) uses that
/// one; ember-run does not, so running an NPU binary never starts LLVM (its shared library
/// alone took a fifth of `ember-run BIN.elf --device sim`).

#include "ember/cpu/CpuBackend.h"

#include <memory>

namespace ember {

/// What the module exports, under the C name kCpuPluginEntry, for the loader of this same
/// build (`layout` guards against a module of another build).
struct CpuPluginApi {
  unsigned long layout;                                       ///< cpuPluginLayout()
  std::unique_ptr<Backend> (*create)(const CpuOptions& opts); ///< createCpuBackend
};

/// The module's entry: `const CpuPluginApi* ember_cpu_plugin_v1()`.
constexpr const char* kCpuPluginEntry = "ember_cpu_plugin_v1";

/// A number both sides compute from the layout of what crosses between them: the options
/// in, the entry table, and the profile and compile figures that tools read back through
/// the backend (a program and a module that disagree on those are refused, not run).
constexpr unsigned long cpuPluginLayout() {
  return sizeof(CpuOptions) * 1000003ul + sizeof(CpuPluginApi) * 1009ul + sizeof(std::string) +
         sizeof(CpuOpTime) * 7919ul + sizeof(CpuCompileStats) * 104729ul;
}

/// The cpu backend with options `opts`: createCpuBackend when this program links it, else
/// the module's, loaded on first use from $EMBER_CPU_PLUGIN, else `../lib/ember/` beside
/// the program, else the build tree. ember::Error naming every place tried and the
/// loader's reason when none loads.
std::unique_ptr<Backend> loadCpuBackend(const CpuOptions& opts);

} // namespace ember
