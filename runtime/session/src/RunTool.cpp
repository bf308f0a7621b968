// ember-run's application logic (RunTool.h): models, binaries and packages on devices.
#include "ember/session/RunTool.h"

#include "ember/driver/Driver.h"
#include "ember/driver/Estimate.h"
#include "ember/driver/Package.h"
#include "ember/isa/description.h"
#include "ember/isa/error.h"
#include "ember/platform/HtmlReport.h"
#include "ember/platform/Report.h"
#include "ember/runtime/Run.h"
#include "ember/session/Compare.h"
#include "ember/session/Devices.h"
#include "ember/session/PackageSession.h"
#include "ember/session/PlanReport.h"
#include "ember/session/Profile.h"
#include "ember/session/RunUtil.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ember::session {

namespace {

const char* kFooter =
    R"(Imports an ONNX model, runs it on a device and prints (and optionally writes) every
output, with the wall time of import and run. Given an NPU binary (an ELF file made by
emberc or ember-as), runs it on the cycle-accurate NPU simulator (or, with --device rtl,
on the Verilated RTL; --compare sim,rtl runs both and requires equal outputs, cycles,
instruction timings and counters): inputs are placed in DRAM from the binary's I/O table
(float32 .npy data for an int8 input is quantized with the entry's scale and zero point),
the per-layer cycle/energy report is printed, and outputs are written in the binary's
element type. Given a package (emberc's output for a model the NPU cannot run whole,
docs/package.md), runs its NPU segments on the NPU device and its host segments on their
backend, and prints a table per segment. With --requests N, serves N requests of a
binary, package or model in simulated time, on one NPU or over a system of NPUs (--system:
a pipeline package's stages one per device, a binary replicated), and prints the
throughput, the latency percentiles and each device's utilisation (docs/systems.md).

On int8 paths (--precision int8, sim) float inputs are quantized as QuantizeLinear
does: values beyond the input's range saturate (+Inf to the largest code, -Inf to the
smallest); NaN has no int8 code and is refused.

examples:
  ember-run MODEL.onnx --input NAME=FILE.npy [options]
  ember-run MODEL.onnx --random-input 1 --compare interp,sim --precision int8
  ember-run MODEL.onnx --input-shape input=3x3x224x224 --bind scales=s.npy --random-input 1
  ember-run BIN.elf [--device sim|rtl] [--compare sim,rtl] [options]
  ember-run PACKAGE [--device sim|rtl] [--compare sim,rtl] [options]
  ember-run PACKAGE --system SYS.json --requests 256 --concurrency 16 --random-input 1

An input dimension the model leaves unknown (a dynamic batch) is taken from --input-shape,
else from the shape of the input's --input file (docs/compiler/importer.md, "Input shapes
and bound inputs").

exit status: 0 on success; 1 on bad input (unreadable or malformed model, binary or .npy
file, wrong input name/kind/shape, an --input-shape or --bind the model refuses, an input
dimension nothing decides, unknown device, NaN input on an int8 path, unsupported
operators, an output path that is a folder or an input, outputs that disagree under
--compare); 2 on a bad command line; 3 when the NPU program faulted (the fault is
printed).
)";

} // namespace

std::string runToolHelp() {
  return std::string(kFooter) + deviceHelp();
}

/// The device table as the help's last lines ("  NAME  DESCRIPTION", one per device).
std::string deviceHelp() {
  std::string s = "\ndevices:\n";
  for (const Device& d : devices())
    s += "  " + d.name + std::string(d.name.size() < 8 ? 8 - d.name.size() : 0, ' ') + " " +
         d.description + "\n";
  return s;
}

namespace {

[[noreturn]] void usageError(const std::string& msg) {
  throw UsageError(msg);
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A model input: its name and type.
using InputDecl = std::pair<std::string, Type>;

std::string describeInputs(const std::vector<InputDecl>& ins) {
  std::string s;
  for (const auto& [name, type] : ins)
    s += std::string(s.empty() ? "" : ", ") + name + ": " + type.toString();
  return s.empty() ? "none" : s;
}

/// Reads the given .npy files and completes the inputs (random values for the rest when
/// a seed is given), checking names, kinds and shapes against `declared`. An input that
/// is declared but not in `used` (no output depends on it) is checked and left out.
TensorMap gatherInputs(const RunOptions& o, const std::vector<InputDecl>& declared,
                       const std::vector<InputDecl>& used) {
  std::set<std::string> usedNames;
  for (const auto& [name, type] : used)
    usedNames.insert(name);
  TensorMap inputs;
  std::set<std::string> given;
  for (const auto& [name, file] : o.inputs) {
    const Type* want = nullptr;
    for (const auto& [n, t] : declared)
      if (n == name)
        want = &t;
    if (!want)
      throw Error("--input " + name + "=" + file, "the model has no input named '" + name +
                                                      "' (its inputs: " + describeInputs(declared) +
                                                      ")");
    if (!given.insert(name).second)
      throw Error("--input " + name + "=" + file, "input '" + name + "' is given twice");
    Tensor t = readNpy(file);
    if (t.kind() != want->kind || t.dims() != want->dims)
      throw Error("--input " + name + "=" + file, "the file holds " + t.type().toString() +
                                                      ", the model's input '" + name + "' is " +
                                                      Type(want->kind, want->dims).toString());
    if (!usedNames.count(name)) {
      std::fprintf(stderr,
                   "ember-run: note: --input %s: no output of the model depends on input '%s'; "
                   "it was checked and is not used\n",
                   name.c_str(), name.c_str());
      continue;
    }
    inputs.emplace(name, std::move(t));
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < used.size(); ++i) {
    const auto& [name, type] = used[i];
    if (inputs.count(name))
      continue;
    if (o.randomSeed)
      inputs.emplace(name, randomTensor(type, *o.randomSeed, i));
    else
      missing.push_back(name + ": " + type.toString());
  }
  if (!missing.empty()) {
    std::string msg = "no value for " + std::to_string(missing.size()) + " model input(s):";
    for (const auto& m : missing)
      msg += "\n  " + m;
    msg += "\ngive them with --input NAME=FILE.npy, or use --random-input SEED";
    throw Error(o.model, msg);
  }
  return inputs;
}

/// The inputs of `f`: every placeholder `module` declares may be given (a Shape of an
/// input folds to a constant, Dropout's ratio may go unused), those `f` reads are needed.
TensorMap buildInputs(const RunOptions& o, const Module& module, const Function& f) {
  std::vector<InputDecl> declared, used;
  for (const auto& p : module.placeholders())
    declared.emplace_back(p->name(), p->resultType());
  for (const Node* p : f.inputs())
    used.emplace_back(p->name(), p->resultType());
  return gatherInputs(o, declared, used);
}

std::vector<std::string> inputPaths(const RunOptions& o);
void checkOutputs(const RunOptions& o);

/// Output file paths (none without --out), checked for collisions after sanitising the
/// names, then with the reports: no file the run writes may be an input or be written
/// twice (`--report DIR/y.npy --out DIR` for an output y is refused before any work).
std::map<std::string, std::string> outputPaths(const RunOptions& o,
                                               const std::vector<std::string>& names) {
  std::map<std::string, std::string> paths, owner;
  std::vector<std::string> files{o.reportJson, o.traceJson, o.html};
  for (const std::string& name : o.outDir.empty() ? std::vector<std::string>{} : names) {
    std::string stem = sanitizeOutputName(name);
    auto [it, fresh] = owner.emplace(stem, name);
    if (!fresh)
      throw Error("--out " + o.outDir, "outputs '" + it->second + "' and '" + name +
                                           "' would both be written to " + stem + ".npy");
    paths[name] = (std::filesystem::path(o.outDir) / (stem + ".npy")).string();
    checkOutputFile(paths[name], "--out", true);
    files.push_back(paths[name]);
  }
  checkNotSameFile(files, inputPaths(o));
  return paths;
}

/// The devices to run on: --device, or the --compare list (a single --compare name
/// means --device then that device).
std::vector<const Device*> deviceList(const RunOptions& o) {
  std::vector<const Device*> devs;
  if (o.compare.find(',') != std::string::npos) {
    size_t start = 0;
    while (start <= o.compare.size()) {
      size_t comma = o.compare.find(',', start);
      std::string name =
          o.compare.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (name.empty())
        usageError("--compare expects a comma-separated list of devices, got '" + o.compare + "'");
      devs.push_back(&findDevice(name));
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
  } else {
    devs.push_back(&findDevice(o.device));
    if (!o.compare.empty())
      devs.push_back(&findDevice(o.compare));
  }
  return devs;
}

/// The NPU devices a binary runs on: --device (sim, or rtl when built), or a --compare
/// list of them (e.g. sim,rtl).
std::vector<std::string> binaryDevices(const RunOptions& o) {
  std::vector<std::string> names;
  if (o.compare.empty()) {
    names.push_back(o.deviceGiven ? o.device : "sim");
  } else {
    for (const Device* d : deviceList(o))
      names.push_back(d->name);
  }
  for (const std::string& n : names)
    if (n != "sim" && n != "rtl")
      throw Error(o.model, "an NPU binary runs only on the NPU devices (sim, rtl), not '" + n +
                               "' (a binary has no float graph to run elsewhere)");
#ifndef EMBER_HAVE_RTL
  for (const std::string& n : names)
    if (n == "rtl")
      throw Error("--device rtl", "this build has no RTL (configure with EMBER_WITH_RTL=ON)");
#endif
  return names;
}

void writeHtmlReport(const RunOptions& o, const std::vector<platform::Report>& reports,
                     const std::string& placement = "", const std::string& placementTable = "");

/// The outputs of a run, in the model's order.
using NamedOutputs = std::vector<std::pair<std::string, Tensor>>;

/// Prints every output (its summary, and its --top entries) and, with --out, writes it to
/// its file in `paths`; `written` lists files the runtime already wrote (binaries).
void printOutputs(const RunOptions& o, const NamedOutputs& outs,
                  const std::map<std::string, std::string>& paths, bool alreadyWritten = false) {
  if (!o.outDir.empty() && !alreadyWritten)
    std::filesystem::create_directories(o.outDir);
  for (const auto& [name, t] : outs) {
    if (!o.quiet)
      std::printf("output %s: %s\n", name.c_str(), summarize(t).c_str());
    if (o.top && !o.quiet) {
      std::printf("  top-%zu:", o.top);
      for (const auto& [idx, v] : topK(t, o.top))
        std::printf("  [%lld] %.6g", static_cast<long long>(idx), v);
      std::printf("\n");
    }
    auto path = paths.find(name);
    if (path == paths.end())
      continue;
    if (!alreadyWritten)
      writeNpy(path->second, t);
    if (!o.quiet)
      std::printf("  written to %s\n", path->second.c_str());
  }
}

/// The NPU devices of a binary or package against the first: every output bit for bit,
/// then every NPU job's cycles, instructions and counters. Returns the disagreements.
std::vector<std::string>
compareNpuDevices(const std::vector<std::string>& devs, const std::vector<NamedOutputs>& outputs,
                  const std::vector<std::vector<platform::Report>>& reports) {
  std::vector<std::string> mismatch;
  for (std::size_t d = 1; d < devs.size(); ++d) {
    for (std::size_t k = 0; k < outputs[0].size(); ++k) {
      const auto& [name, a] = outputs[0][k];
      const Tensor& b = outputs[d][k].second;
      const bool same = a.size() == b.size() && maxAbsDiff(a, b) == 0;
      std::printf("  output %-24s %-4s vs %-4s bit-exact: %s\n", name.c_str(), devs[0].c_str(),
                  devs[d].c_str(), same ? "yes" : "NO");
      if (!same)
        mismatch.push_back("output '" + name + "' on " + devs[d]);
    }
    const std::string diff = compareNpuRuns(reports[0], devs[0], reports[d], devs[d]);
    std::printf("  %s\n", timingVerdict(reports[0], devs[0], devs[d], diff).c_str());
    if (!diff.empty())
      mismatch.push_back(diff);
  }
  return mismatch;
}

/// BIN.elf on the simulator (the `sim` device for binaries), the RTL (`rtl`), or both
/// (`--compare sim,rtl`: outputs, cycles, every instruction and counter must be equal).
int runBinary(const RunOptions& o) {
  const std::vector<std::string> devs = binaryDevices(o);
  runtime::RunRequest req;
  req.tool = "ember-run";
  req.binary = o.model;
  req.isa = o.isa;
  req.inputs = o.inputs;
  if (o.randomSeed)
    req.fill_missing = [seed = *o.randomSeed](const isa::IoEntry& e, size_t index) {
      return randomTensor(Type(ElemKind::Float32, Shape(e.shape.begin(), e.shape.end())), seed,
                          index);
    };
  req.out_dir = o.outDir;
  req.report_json = o.reportJson;
  req.trace_json = o.traceJson;
  req.table = false;
  req.options.cycle_budget = o.cycleBudget;
  runtime::checkOutputs(req);
  checkOutputs(o); // --html too: never an input's file, nor --report's or --trace's
  std::vector<runtime::RunResult> results;
  std::vector<double> hosts;
  for (const std::string& dev : devs) {
    const runtime::RunRequest engine = npuEngine(dev);
    req.engine = engine.engine;
    req.platform = engine.platform;
    req.device = dev;
    auto t0 = std::chrono::steady_clock::now();
    results.push_back(runtime::runBinary(req, std::cerr));
    hosts.push_back(secondsSince(t0));
    // Only the first device writes the outputs, the report and the trace.
    req.out_dir.clear();
    req.report_json.clear();
    req.trace_json.clear();
  }
  const runtime::RunResult& r = results.front();
  if (!o.quiet)
    std::fputs(platform::formatTable(r.report).c_str(), stdout);
  std::map<std::string, std::string> written; // the runtime wrote them
  for (const auto& [name, t] : r.outputs)
    if (!o.outDir.empty() && r.status == 0)
      written[name] = (std::filesystem::path(o.outDir) / (npyFileStem(name) + ".npy")).string();
  printOutputs(o, r.outputs, written, true);
  for (std::size_t i = 0; i < results.size(); ++i)
    std::printf("time: %s %.3f s on the host for %llu NPU cycles (%.3f us at %.0f MHz)\n",
                devs[i].c_str(), hosts[i],
                static_cast<unsigned long long>(results[i].report.cycles),
                results[i].report.seconds * 1e6, double(results[i].report.clock_hz) / 1e6);
  // The results move into the comparison's form: a report holds one slice per
  // instruction (27,644 on ResNet-50), too many to copy.
  const int status = r.status;
  std::vector<NamedOutputs> outputs;
  std::vector<std::vector<platform::Report>> reports;
  for (runtime::RunResult& res : results) {
    outputs.push_back(std::move(res.outputs));
    reports.emplace_back().push_back(std::move(res.report));
  }
  const std::vector<std::string> mismatch = compareNpuDevices(devs, outputs, reports);
  if (status == 0)
    writeHtmlReport(o, reports.front());
  throwIfDisagreements(o.compare, mismatch);
  return status;
}

/// Every file the run reads (an output may not overwrite one of them).
std::vector<std::string> inputPaths(const RunOptions& o) {
  std::vector<std::string> in{o.model, isa::IsaDescription::resolvedPath(o.isa)};
  for (const auto& [name, file] : o.inputs)
    in.push_back(file);
  for (const auto& [name, file] : o.modelInputs.bindFiles)
    in.push_back(file);
  if (o.calibrate.rfind("random:", 0) != 0)
    in.push_back(o.calibrate);
  return in;
}

/// Refuses, before any work, output paths that are folders or inputs.
void checkOutputs(const RunOptions& o) {
  checkRunPaths({{o.reportJson, "--report"},
                 {o.traceJson, "--trace"},
                 {o.html, "--html"},
                 {o.outDir, "--out", true}},
                inputPaths(o));
}

/// --html: the NPU runs' reports as one page (nothing when the option is not given).
void writeHtmlReport(const RunOptions& o, const std::vector<platform::Report>& reports,
                     const std::string& placement, const std::string& placementTable) {
  if (o.html.empty())
    return;
  platform::HtmlReportOptions h;
  h.title = platform::htmlReportTitle(o.model);
  h.placement = placement;
  h.placementTable = placementTable;
  writeFileAtomic(o.html, platform::toHtml(reports, h));
  if (!o.quiet)
    std::printf("html report: %s\n", o.html.c_str());
}

/// A package (docs/package.md): NPU segments on the NPU devices (sim, rtl; --compare sim,rtl
/// requires equal outputs and equal timing of every NPU segment), host segments on their
/// backend. Prints the outputs, the segment table and the placement line.
int runPackage(const RunOptions& o) {
  const std::vector<std::string> devs = binaryDevices(o);
  const isa::IsaDescription desc = isa::IsaDescription::loadDefault(o.isa);
  DeviceOptions dopts;
  dopts.cycleBudget = o.cycleBudget;
  dopts.reportJson = o.reportJson;
  dopts.traceJson = o.traceJson;
  std::vector<std::unique_ptr<PackageSession>> sessions;
  for (const std::string& dev : devs) {
    sessions.push_back(std::make_unique<PackageSession>(o.model, desc, dev, dopts));
    dopts.reportJson.clear(); // only the first device writes reports
    dopts.traceJson.clear();
  }
  const partition::Plan& plan = sessions.front()->plan();
  checkOutputs(o);
  std::vector<std::string> outputNames;
  for (const auto& [name, index] : plan.outputs)
    outputNames.push_back(name);
  const std::map<std::string, std::string> paths = outputPaths(o, outputNames);
  TensorMap inputs = gatherInputs(o, plan.inputs, plan.inputs);
  refuseNaN(o.inputs, inputs);
  std::vector<TensorMap> results;
  std::vector<std::vector<platform::Report>> reports;
  std::vector<std::vector<partition::SegmentRun>> runs(devs.size());
  for (std::size_t d = 0; d < devs.size(); ++d) {
    results.push_back(sessions[d]->run(inputs, &runs[d]));
    reports.push_back(sessions[d]->reports());
  }
  std::vector<NamedOutputs> outputs(devs.size());
  for (std::size_t d = 0; d < devs.size(); ++d)
    for (const auto& [name, index] : plan.outputs)
      outputs[d].emplace_back(name, results[d].at(name));
  printOutputs(o, outputs.front(), paths);
  if (!o.quiet)
    std::printf("segments (%s)\n%s%s", devs[0].c_str(),
                partition::formatSegmentRuns(plan, runs[0]).c_str(),
                partition::formatEstimate(runEstimate(plan, desc, runs[0])).c_str());
  std::printf("%s\n", partition::placementSummaryLine(plan).c_str());
  if (!reports.front().empty())
    writeHtmlReport(o, reports.front(), partition::placementSummaryLine(plan),
                    partition::formatPlacementReport(plan));
  throwIfDisagreements(o.compare, compareNpuDevices(devs, outputs, reports));
  return 0;
}

/// Whether a device of the run counts NPU cycles (sim, rtl).
bool runsOnNpu(const RunOptions& o) {
  for (const Device* d : deviceList(o))
    if (d->int8Only)
      return true;
  return false;
}

/// The options only a model run checks, before any work.
void checkModelRunOptions(const RunOptions& o, bool cpuProfile) {
  if ((!o.reportJson.empty() || !o.traceJson.empty()) && o.device != "sim" &&
      o.compare.find("sim") == std::string::npos && !cpuProfile)
    throw Error(o.reportJson.empty() ? "--trace" : "--report",
                "reports come from the NPU simulator (use --device sim, or a binary) or from "
                "the cpu device with --profile");
  if (o.cycleBudget && !runsOnNpu(o))
    throw UsageError("--cycle-budget", "counts NPU cycles: use --device sim or rtl (or a binary "
                                       "or package); '" +
                                           (o.compare.empty() ? o.device : o.compare) +
                                           "' counts none");
  if (!o.html.empty() && o.device != "sim" && o.device != "rtl" &&
      o.compare.find("sim") == std::string::npos && o.compare.find("rtl") == std::string::npos)
    throw Error("--html", "the HTML report shows an NPU run: use --device sim or rtl (or a "
                          "binary or package)");
}

/// Whether the model runs in int8: --precision int8, or a device that runs int8 only.
bool runsInt8(const RunOptions& o, const std::vector<const Device*>& devs) {
  bool int8 = o.precision == "int8";
  for (const Device* d : devs)
    if (d->int8Only && !int8) {
      int8 = true;
      if (!o.quiet)
        std::printf("note: device '%s' runs int8 only: quantizing the model "
                    "(--precision int8)\n",
                    d->name.c_str());
    }
  return int8;
}

/// The model as the devices run it: imported with its bindings, its inputs gathered, and
/// prepared as emberc prepares it (the pass pipeline for a compiling device, the
/// quantizer for int8).
struct PreparedModel {
  std::unique_ptr<Module> module;
  Function* floatFn = nullptr;
  const Function* f = nullptr; ///< What the devices run.
  TensorMap inputs;
  double importSeconds = 0, importCpu = 0, quantizeSeconds = 0;
};

PreparedModel prepareModel(const RunOptions& o, const std::vector<const Device*>& devs, bool int8) {
  PreparedModel m;
  auto t0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  m.module = driver::importModel(o.model, o.modelInputs);
  m.importSeconds = secondsSince(t0);
  m.importCpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  m.floatFn = &driver::modelFunction(*m.module);
  m.inputs = buildInputs(o, *m.module, *m.floatFn);
  if (int8)
    refuseNaN(o.inputs, m.inputs);
  // A compiling device (cpu) runs the default pass pipeline first, as emberc does; the
  // interpreter alone runs the graph as imported (driver::prepareFunction's rule).
  bool compiling = false;
  for (const Device* d : devs)
    compiling = compiling || d->name != "interp";
  driver::QuantizeRequest qr;
  qr.calibrate = o.calibrate;
  qr.calibration = o.calibration;
  auto tq = std::chrono::steady_clock::now();
  m.f = driver::prepareFunction(*m.floatFn, int8, compiling, qr);
  if (int8)
    m.quantizeSeconds = secondsSince(tq);
  return m;
}

/// Runs the model on every device (the warm-up runs are not timed).
void runDevices(const RunOptions& o, const std::vector<const Device*>& devs, const PreparedModel& m,
                DeviceOptions dopts, bool cpuProfile, std::vector<DeviceOutputs>& runs,
                std::vector<DeviceTiming>& timings) {
  for (const Device* d : devs) {
    DeviceTiming timing;
    const int timed = o.iterations ? o.iterations : (runs.empty() ? o.repeat : 1);
    dopts.profile = cpuProfile && runs.empty();
    dopts.warmup = o.warmup;
    TensorMap out = d->run(*m.f, m.inputs, o.warmup + timed, dopts, timing);
    for (auto* v : {&timing.runSeconds, &timing.runCpuSeconds})
      v->erase(v->begin(),
               v->begin() + std::min<std::ptrdiff_t>(o.warmup, std::ptrdiff_t(v->size())));
    if (o.iterations)
      std::printf("%s: median latency: %.3f ms (%d runs after %d warm-up)\n", d->name.c_str(),
                  1e3 * median(timing.runSeconds), timed, o.warmup);
    runs.push_back(DeviceOutputs{d->name, std::move(out), median(timing.runSeconds), timing.npu});
    timings.push_back(std::move(timing));
  }
}

/// What each device reports beside its outputs: the NPU's compile summary and table or
/// segments, the cpu profile (and its files), the placement lines and the HTML page.
void printDeviceReports(const RunOptions& o, bool cpuProfile,
                        const std::vector<DeviceOutputs>& runs,
                        const std::vector<DeviceTiming>& timings) {
  for (size_t i = 0; i < runs.size() && !o.quiet; ++i) {
    if (timings[i].npu) {
      std::fputs(timings[i].compileSummary.c_str(), stdout);
      std::fputs(platform::formatTable(*timings[i].npu).c_str(), stdout);
    }
    if (!timings[i].segmentTable.empty())
      std::printf("%s: segments\n%s", runs[i].device.c_str(), timings[i].segmentTable.c_str());
  }
  if (cpuProfile) {
    const DeviceTiming& timing = timings.front();
    if (!o.quiet)
      std::fputs(formatProfile(timing.profile, *o.profile).c_str(), stdout);
    if (!o.reportJson.empty())
      writeFileAtomic(o.reportJson, profileJson(timing.profile));
    if (!o.traceJson.empty())
      writeFileAtomic(o.traceJson, profileTrace(timing.profile));
  }
  // The placement, one line per NPU device (also with --quiet: it says what ran where).
  for (size_t i = 0; i < runs.size(); ++i)
    if (!timings[i].placement.empty())
      std::printf("%s: %s\n", runs[i].device.c_str(), timings[i].placement.c_str());
  // --html: the first NPU device's run.
  for (size_t i = 0; i < runs.size(); ++i)
    if (!timings[i].npuSegments.empty()) {
      writeHtmlReport(o, timings[i].npuSegments, timings[i].placement, timings[i].placementReport);
      break;
    }
}

/// --compare on a model: every output against the first device (bit for bit in int8,
/// with the cosine against float) and the NPU devices' timing against each other.
void compareModelRuns(const RunOptions& o, const PreparedModel& m, bool int8,
                      const DeviceOptions& dopts, const std::vector<DeviceOutputs>& runs,
                      const std::vector<DeviceTiming>& timings) {
  std::vector<std::string> names;
  for (const auto& out : m.f->outputs())
    names.push_back(out.name);
  std::optional<TensorMap> floatRef;
  if (int8) {
    DeviceTiming ft;
    floatRef = findDevice("interp").run(*m.floatFn, m.inputs, 1, dopts, ft);
  }
  CompareResult cmp = compareRuns(names, runs, int8, floatRef ? &*floatRef : nullptr);
  std::vector<std::string> devices;
  std::vector<std::vector<platform::Report>> reports;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    devices.push_back(runs[i].device);
    reports.push_back(timings[i].npuSegments);
  }
  compareNpuPairs(devices, reports, cmp.table, cmp.mismatch);
  std::fputs(cmp.table.c_str(), stdout);
  throwIfDisagreements(o.compare, cmp.mismatch);
}

/// Wall time, and process CPU time (which a busy shared machine does not inflate).
void printTimes(const PreparedModel& m, bool int8, const Device& device,
                const DeviceTiming& timing) {
  const std::vector<double>& times = timing.runSeconds;
  std::printf("time: import %.3f s (cpu %.3f s), ", m.importSeconds, m.importCpu);
  if (int8)
    std::printf("quantize %.3f s, ", m.quantizeSeconds);
  std::printf("prepare (%s) %.3f s, run %.3f s (cpu %.3f s)", device.name.c_str(),
              timing.prepareSeconds, median(times), median(timing.runCpuSeconds));
  if (times.size() > 1)
    std::printf(", median of %zu, min %.3f s", times.size(),
                *std::min_element(times.begin(), times.end()));
  std::printf("\n");
}

} // namespace

int runTool(const RunOptions& o) {
  // The host devices read it when they are created.
  if (o.threads > 0)
    setenv("EMBER_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  const bool cpuProfile = o.profile && o.device == "cpu";
  if (o.profile && (!cpuProfile || isNpuBinaryFile(o.model) || partition::isPackageFile(o.model)))
    throw Error("--profile", "times the operations of the cpu device: use --device cpu (first "
                             "in --compare) and an ONNX model");
  if (isNpuBinaryFile(o.model) || partition::isPackageFile(o.model))
    driver::refuseInputOptions(o.modelInputs, o.model);
  checkServeOptions(o);
  if (o.serve.requests > 0)
    return serveTool(o);
  if (isNpuBinaryFile(o.model))
    return runBinary(o);
  if (partition::isPackageFile(o.model))
    return runPackage(o);
  checkModelRunOptions(o, cpuProfile);
  const std::vector<const Device*> devs = deviceList(o);
  const bool int8 = runsInt8(o, devs);
  checkOutputs(o);
  const PreparedModel m = prepareModel(o, devs, int8);
  std::vector<std::string> outputNames;
  for (const auto& out : m.f->outputs())
    outputNames.push_back(out.name);
  const std::map<std::string, std::string> paths = outputPaths(o, outputNames);
  DeviceOptions dopts;
  dopts.isa = o.isa;
  dopts.reportJson = o.reportJson;
  dopts.traceJson = o.traceJson;
  dopts.partition = o.partition;
  dopts.cycleBudget = o.cycleBudget;
  std::vector<DeviceOutputs> runs;
  std::vector<DeviceTiming> timings;
  runDevices(o, devs, m, dopts, cpuProfile, runs, timings);
  NamedOutputs outs;
  for (const std::string& name : outputNames)
    outs.emplace_back(name, runs.front().outputs.at(name));
  printOutputs(o, outs, paths);
  printDeviceReports(o, cpuProfile, runs, timings);
  if (runs.size() > 1)
    compareModelRuns(o, m, int8, dopts, runs, timings);
  printTimes(m, int8, *devs.front(), timings.front());
  return 0;
}

} // namespace ember::session
