// emberc's flow (CompileTool.h): a model to an NPU binary, a package or a cpu bundle.
#include "ember/driver/CompileTool.h"

#ifdef EMBER_HAVE_CPU_BACKEND
#include "ember/cpu/Bundle.h"
#endif
#include "ember/driver/Driver.h"
#include "ember/driver/Package.h"
#include "ember/driver/Pipeline.h"
#include "ember/driver/SupportTable.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
#include "ember/isa/system.h"
#include "ember/lir/IR.h"
#include "ember/npu/Compile.h"
#include "ember/passes/Pass.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace ember::driver {

void checkCompileToolOptions(const CompileToolOptions& o) {
  if (o.model.empty() && !o.printPipeline && !o.opTable && o.opTableCheck.empty() &&
      o.opTableUpdate.empty())
    throw UsageError("no model given");
  if (!o.stageCycles.empty() && o.system.empty())
    throw UsageError("--stage-cycles costs the pipeline of --system SYS.json");
  if (!o.system.empty()) {
    if (o.backend == "cpu")
      throw UsageError("--system pipelines a model over NPUs (not --backend cpu)");
    if (!o.isa.empty())
      throw UsageError("--system names every device's description; --isa goes with one NPU");
    if (o.output.empty() && !o.partitionReport)
      throw UsageError("--system needs -o OUT.pkg (the pipeline's package) or "
                       "--partition-report (its stages; docs/systems.md)");
    return;
  }
  if (o.backend == "cpu") {
    if (!o.model.empty() && o.bundleDir.empty())
      throw UsageError("--backend cpu needs --emit-bundle DIR");
    if (!o.output.empty())
      throw UsageError("-o is for NPU binaries; --backend cpu writes --emit-bundle DIR");
    if (!o.dumpLir.empty())
      throw UsageError("--dump-lir writes what the NPU compiled from (not --backend cpu)");
  } else {
    if (!o.bundleDir.empty() || !o.bundleName.empty())
      throw UsageError("--emit-bundle and --bundle-name need --backend cpu");
    if (o.precision == "float")
      throw UsageError("the NPU runs int8 only (--precision float needs --backend cpu)");
    if (!o.model.empty() && o.output.empty())
      throw UsageError("no output given (-o OUT.elf)");
  }
}

namespace {

#ifdef EMBER_HAVE_CPU_BACKEND
/// The bundle's default name: the model file's stem as a C identifier.
std::string defaultBundleName(const std::string& model) {
  std::string stem = model.substr(model.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  std::string out;
  for (char c : stem)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "model_" + out;
  return out;
}
#endif

/// The quantization settings of the command line.
QuantizeRequest quantizeRequest(const CompileToolOptions& o) {
  QuantizeRequest r;
  r.calibrate = o.calibrate;
  r.calibration = o.calibration;
  r.loadProfile = o.loadProfile;
  r.dumpProfile = o.dumpProfile;
  return r;
}

void printQuantizeStats(const CompileToolOptions& o, const quant::QuantizeStats& qs) {
  if (!o.quiet)
    std::printf("%s: %zu int8 nodes, %zu float nodes left on the host boundary, %zu Rescale\n",
                o.model.c_str(), qs.int8Nodes, qs.floatNodes, qs.rescales);
}

int emitCpuBundle(const CompileToolOptions& o, Function& f) {
#ifdef EMBER_HAVE_CPU_BACKEND
  quant::QuantizeStats qs;
  const bool int8 = o.precision == "int8";
  Function* target = prepareFunction(f, int8, /*compiling=*/true, quantizeRequest(o), &qs);
  if (int8)
    printQuantizeStats(o, qs);
  BundleOptions bo;
  bo.name = o.bundleName.empty() ? defaultBundleName(o.model) : o.bundleName;
  const BundleInfo info = emitBundle(*target, o.bundleDir, bo);
  if (!o.quiet)
    std::printf("%s: %s bundle '%s' (%zu operations) in %.2f s\n"
                "  %s  %zu bytes\n  %s  %zu bytes (constants)\n  %s\n"
                "  io %zu bytes, activations %zu bytes, scratch %zu bytes\n",
                o.model.c_str(), o.precision.empty() ? "float" : o.precision.c_str(),
                bo.name.c_str(), info.nodes, info.seconds, info.objectPath.c_str(),
                info.objectBytes, info.weightsPath.c_str(), info.constantBytes,
                info.headerPath.c_str(), info.ioBytes, info.activationBytes, info.scratchBytes);
  return 0;
#else
  (void)f;
  throw Error(o.model, "this emberc was built without the cpu backend (EMBER_WITH_LLVM=OFF)");
#endif
}

/// Refuses, before any work, output paths that are folders, in missing folders, or
/// one of the inputs (`emberc m.onnx -o m.onnx`).
void checkOutputs(const CompileToolOptions& o) {
  std::vector<std::string> inputs{o.model, isa::IsaDescription::resolvedPath(o.isa), o.loadProfile,
                                  o.system, o.stageCycles};
  if (o.calibrate.rfind("random:", 0) != 0)
    inputs.push_back(o.calibrate);
  for (const auto& [name, file] : o.inputs.bindFiles)
    inputs.push_back(file);
  checkRunPaths({{o.output, "-o"},
                 {o.dumpProfile, "--dump-profile"},
                 {o.dumpLir, "--dump-lir"},
                 {o.bundleDir, "--emit-bundle", true}},
                inputs);
}

/// --op-table, --op-table-check, --op-table-update.
int opTable(const CompileToolOptions& o) {
  const std::string table = operatorSupportTable();
  if (o.opTable)
    std::fputs(table.c_str(), stdout);
  if (!o.opTableCheck.empty()) {
    const std::string doc = readFileBytes(o.opTableCheck);
    if (withSupportTable(doc, table, o.opTableCheck) != doc)
      throw Error(o.opTableCheck, "the operator table differs from what this build generates; "
                                  "run emberc --op-table-update " +
                                      o.opTableCheck);
  }
  if (!o.opTableUpdate.empty()) {
    const std::string doc = readFileBytes(o.opTableUpdate);
    writeFileAtomic(o.opTableUpdate, withSupportTable(doc, table, o.opTableUpdate));
  }
  return 0;
}

/// The low-level IR of every NPU segment of `plan`, each headed by its segment's index.
std::string npuLirText(const partition::Plan& plan) {
  std::string out;
  for (size_t i = 0; i < plan.segments.size(); ++i) {
    const partition::Segment& s = plan.segments[i];
    if (!s.npu || !s.npu->lir)
      continue;
    if (!plan.whole)
      out += "; segment " + std::to_string(i) + " (npu)\n";
    out += lir::dump(*s.npu->lir);
  }
  return out;
}

/// --system: the model pipelined over the system's devices (ember/driver/Pipeline.h).
int pipelineTool(const CompileToolOptions& o) {
  const isa::SystemDescription sys = isa::SystemDescription::loadFile(o.system);
  const CompiledModel c =
      compileModel(o.model, sys.devices().front().isa, quantizeRequest(o), o.partition, o.inputs);
  printQuantizeStats(o, c.stats);
  std::optional<partition::MeasuredCycles> measured;
  if (!o.stageCycles.empty())
    measured = partition::readMeasuredCycles(o.stageCycles);
  const partition::PipelinePlan p = partition::pipelineModel(
      *c.quantized, c.plan, sys, o.partition.npu, measured ? &*measured : nullptr);
  if (measured && !o.quiet)
    std::printf("layer cycles: simulated on %s (%s, %.0f cycles), not the compiler's estimates\n",
                measured->isaName.c_str(), o.stageCycles.c_str(), measured->total);
  if (o.partitionReport)
    std::fputs(partition::formatPipelineReport(p).c_str(), stdout);
  if (o.output.empty())
    return 0;
  const partition::Plan plan = partition::pipelineSegments(*c.quantized, p, sys, o.partition.npu);
  partition::writePackage(o.output, plan, sys.devices().front().isa);
  if (!o.quiet)
    std::printf("wrote package %s: %zu NPU stage(s) for system %s (%s)\n", o.output.c_str(),
                plan.npuSegments(), sys.name().c_str(),
                partition::placementSummaryLine(plan).c_str());
  return 0;
}

} // namespace

int compileTool(const CompileToolOptions& o) {
  if (o.opTable || !o.opTableCheck.empty() || !o.opTableUpdate.empty())
    return opTable(o);
  checkOutputs(o);
  if (!o.system.empty())
    return pipelineTool(o);
  if (o.printPipeline) {
    printPipeline(std::cout);
    if (o.model.empty())
      return 0;
  }
  if (o.backend == "cpu") {
#ifndef EMBER_HAVE_CPU_BACKEND
    throw Error("--backend cpu", "this emberc was built without the cpu backend "
                                 "(EMBER_WITH_LLVM=OFF; scripts/setup.sh turns it on)");
#endif
    std::unique_ptr<Module> m = importModel(o.model, o.inputs);
    return emitCpuBundle(o, modelFunction(*m));
  }
  const isa::IsaDescription isa = isa::IsaDescription::loadDefault(o.isa);
  const CompiledModel c = compileModel(o.model, isa, quantizeRequest(o), o.partition, o.inputs);
  printQuantizeStats(o, c.stats);
  const partition::Plan& plan = c.plan;
  if (o.partitionReport)
    std::fputs(partition::formatPlacementReport(plan).c_str(), stdout);
  if (!o.dumpLir.empty())
    writeFileAtomic(o.dumpLir, npuLirText(plan));
  if (plan.whole) {
    const npu::CompileResult& r = *plan.segments.front().npu;
    isa::writeElf(o.output, r.binary, isa);
    if (!o.quiet)
      std::fputs(npu::formatSummary(r.summary).c_str(), stdout);
  } else {
    partition::writePackage(o.output, plan, isa);
    if (!o.quiet)
      std::printf("%s\n", partition::placementSummaryLine(plan).c_str());
  }
  if (!o.quiet)
    std::printf("import + optimise + quantize: %.3f s, partition + compile: %.3f s; wrote %s %s\n",
                c.importSeconds + c.quantizeSeconds, c.partitionSeconds,
                plan.whole ? "NPU binary" : "package", o.output.c_str());
  return 0;
}

} // namespace ember::driver
