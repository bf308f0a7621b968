// emberc: compile an ONNX model for the Ember NPU, or into an AOT bundle for the host
// CPU. A thin main over the libraries: import (ember_onnx), the default pass pipeline
// (ember_passes), calibration and quantization (ember_quant), the NPU backend
// (ember_npu) and the ELF writer (ember_isa), or the cpu backend's bundles (ember_cpu).
#ifdef EMBER_HAVE_CPU_BACKEND
#include "ember/cpu/Bundle.h"
#endif
#include "ember/cli/Cli.h"
#include "ember/cli/InputOptions.h"
#include "ember/cli/PartitionOptions.h"
#include "ember/driver/Driver.h"
#include "ember/driver/Package.h"
#include "ember/driver/SupportTable.h"
#include "ember/isa/binary.h"
#include "ember/isa/error.h"
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
#include <string>
#include <vector>

using namespace ember;

namespace {

const char* kDescription =
    "emberc: compiles an ONNX model for the Ember NPU, or into a bundle for this host's CPU.";

const char* kFooter =
    R"(Imports the model, runs the default optimisation pipeline, calibrates and quantizes it to
int8 (docs/numerics.md), places every node on the NPU or, where the NPU cannot run it, on
the host (--fallback; docs/compiler/partitioning.md), lowers every NPU layer to NPU
instructions (tiling chosen by a cost model read from the ISA description) and writes the
output atomically:
  - the NPU binary (ELF: instructions, constants, I/O table, memory map, debug map) when
    the NPU runs the whole model; it prints the compile summary (layers, tiles,
    instructions, SRAM use, estimated cycles, binary size, compile time);
  - otherwise a package (docs/package.md): every NPU segment's binary, every host
    segment, and a manifest of how they connect; it prints the placement summary.
Run either with `ember-run OUT --device sim`; list a package with `ember-objdump OUT`.

With --backend cpu, compiles the model ahead of time for this host's CPU (LLVM) into a
bundle: DIR/NAME.o (relocatable object), DIR/NAME.h (C header: entry point NAME_run,
region sizes, input/output offsets) and DIR/NAME.weights (the constant region). Link
NAME.o and libm into a C program (see examples/bundle). Float32 unless --precision int8.

examples:
  emberc MODEL.onnx -o OUT.elf [options]
  emberc MODEL.onnx -o OUT.pkg --partition-report
  emberc MODEL.onnx -o OUT.elf --input-shape input=1x3x224x224   (a dynamic batch)
  emberc MODEL.onnx --backend cpu --emit-bundle DIR [--bundle-name NAME] [options]

exit status: 0 on success; 1 on bad input (unreadable or malformed model, bad calibration
data, an --input-shape or --bind the model refuses (a name it lacks, another rank or
element type, a dimension it fixes otherwise), an input dimension nothing decides, with
--fallback none operators the NPU cannot run: all of them are listed; an
output path that is a folder or one of the inputs; --op-table-check: a table that
differs); 2 on a bad command line.)";

struct Options {
  std::string model, output, isa;
  std::string backend = "npu", bundleDir, bundleName, precision;
  std::string calibrate = "random:8", calibration = "minmax";
  std::string dumpProfile, loadProfile, dumpLir;
  partition::PartitionOptions partition;
  driver::InputBindings inputs; ///< --input-shape, --bind
  std::string opTableCheck, opTableUpdate;
  bool printPipeline = false, partitionReport = false, opTable = false, quiet = false;
};

/// Declares emberc's command line on `app`; parsing fills `o`.
void declareOptions(CLI::App& app, Options& o) {
  app.add_option("MODEL", o.model, "the ONNX model to compile")->type_name("");
  app.add_option("-o,--output", o.output,
                 "the binary or package to write (required unless --print-pipeline\n"
                 "or an --op-table option alone)")
      ->type_name("OUT")
      ->check(cli::pathValue());
  app.add_option("--backend", o.backend, "the target (default npu)")
      ->type_name("TARGET")
      ->check(CLI::IsMember({"npu", "cpu"}));
  app.add_option("--emit-bundle", o.bundleDir,
                 "cpu: the folder the bundle is written to (required for cpu)")
      ->type_name("DIR")
      ->check(cli::pathValue());
  app.add_option("--bundle-name", o.bundleName,
                 "cpu: the bundle's C name (default: the model file's stem)")
      ->type_name("NAME");
  app.add_option("--precision", o.precision,
                 "cpu: compile the float model or the quantized one (default\n"
                 "float; the NPU is always int8)")
      ->type_name("P")
      ->check(CLI::IsMember({"float", "int8"}));
  app.add_option("--isa", o.isa,
                 "the NPU description (default: $EMBER_ISA, else the installed\n"
                 "or source tree's isa/ember-v1.json)")
      ->type_name("FILE.json");
  app.add_option("--calibrate", o.calibrate,
                 "calibration inputs: FILE.npy, a folder of .npy files, or\n"
                 "random:N (default random:8)")
      ->type_name("SPEC");
  app.add_option("--calibration", o.calibration,
                 "how ranges are chosen: minmax (default), percentile or kl")
      ->type_name("METHOD");
  CLI::Option* dump = app.add_option("--dump-profile", o.dumpProfile,
                                     "write the calibration profile (to reuse with --load-profile)")
                          ->type_name("P.json");
  app.add_option("--load-profile", o.loadProfile,
                 "quantize with this profile instead of calibrating")
      ->type_name("P.json")
      ->excludes(dump);
  app.add_flag("--partition-report", o.partitionReport,
               "print the placement of every node (backend, reason), the\n"
               "coverage (% of nodes and of MACs on the NPU) and the segments");
  app.add_option("--dump-lir", o.dumpLir,
                 "write the low-level IR the NPU compiled from (each NPU\n"
                 "segment's: a layer per compute instruction, in order)")
      ->type_name("FILE");
  app.add_flag("--print-pipeline", o.printPipeline, "print the default pass pipeline");
  app.add_flag("--op-table", o.opTable,
               "print what every part of Ember has for each node kind (the\n"
               "table of docs/compiler/operators.md)");
  app.add_option("--op-table-check", o.opTableCheck,
                 "exit 1 unless DOC holds that table between its markers")
      ->type_name("DOC");
  app.add_option("--op-table-update", o.opTableUpdate,
                 "write the table into DOC between its markers")
      ->type_name("DOC");
  app.add_flag("-q,--quiet", o.quiet, "print only errors");
  cli::addPartitionOptions(app, o.partition);
  cli::addInputOptions(app, o.inputs, cli::InputOptionSet::ShapesAndBinds);
}

/// What CLI11 cannot say about emberc's options: which ones go together.
void checkOptions(const Options& o) {
  if (o.model.empty() && !o.printPipeline && !o.opTable && o.opTableCheck.empty() &&
      o.opTableUpdate.empty())
    throw UsageError("no model given");
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
driver::QuantizeRequest quantizeRequest(const Options& o) {
  driver::QuantizeRequest r;
  r.calibrate = o.calibrate;
  r.calibration = o.calibration;
  r.loadProfile = o.loadProfile;
  r.dumpProfile = o.dumpProfile;
  return r;
}

void printQuantizeStats(const Options& o, const quant::QuantizeStats& qs) {
  if (!o.quiet)
    std::printf("%s: %zu int8 nodes, %zu float nodes left on the host boundary, %zu Rescale\n",
                o.model.c_str(), qs.int8Nodes, qs.floatNodes, qs.rescales);
}

int emitCpuBundle(const Options& o, Function& f) {
#ifdef EMBER_HAVE_CPU_BACKEND
  quant::QuantizeStats qs;
  const bool int8 = o.precision == "int8";
  Function* target = driver::prepareFunction(f, int8, /*compiling=*/true, quantizeRequest(o), &qs);
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
void checkOutputs(const Options& o) {
  std::vector<std::string> inputs{o.model, o.isa, o.loadProfile};
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
int opTable(const Options& o) {
  const std::string table = driver::operatorSupportTable();
  if (o.opTable)
    std::fputs(table.c_str(), stdout);
  if (!o.opTableCheck.empty()) {
    const std::string doc = readFileBytes(o.opTableCheck);
    if (driver::withSupportTable(doc, table, o.opTableCheck) != doc)
      throw Error(o.opTableCheck, "the operator table differs from what this build generates; "
                                  "run emberc --op-table-update " +
                                      o.opTableCheck);
  }
  if (!o.opTableUpdate.empty()) {
    const std::string doc = readFileBytes(o.opTableUpdate);
    writeFileAtomic(o.opTableUpdate, driver::withSupportTable(doc, table, o.opTableUpdate));
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

int runTool(const Options& o) {
  if (o.opTable || !o.opTableCheck.empty() || !o.opTableUpdate.empty())
    return opTable(o);
  checkOutputs(o);
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
    std::unique_ptr<Module> m = driver::importModel(o.model, o.inputs);
    return emitCpuBundle(o, driver::modelFunction(*m));
  }
  const isa::IsaDescription isa = isa::IsaDescription::loadDefault(o.isa);
  const driver::CompiledModel c =
      driver::compileModel(o.model, isa, quantizeRequest(o), o.partition, o.inputs);
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

} // namespace

int main(int argc, char** argv) {
  CLI::App app(kDescription, "emberc");
  cli::setup(app, cli::Description::Selectable);
  Options o;
  declareOptions(app, o);
  app.footer(kFooter);
  return cli::run(app, argc, argv, [&] {
    checkOptions(o);
    return runTool(o);
  });
}
