// The device table of ember-run: every executing compiler backend, plus the NPU
// simulator. A device joins by adding one row to devices().
#include "ember/session/Devices.h"
#include "ember/session/PlanReport.h"

#include "ember/runtime/Run.h"

#include "ember/isa/description.h"
#ifdef EMBER_HAVE_RTL
#include "ember/rtl/RtlPlatform.h"
#include "ember/rtl/RtlSim.h"
#endif
#ifdef EMBER_HAVE_CPU_BACKEND
#include "ember/cpu/CpuPlugin.h"
#endif
#include "ember/driver/Execute.h"
#include "ember/npu/Compile.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>

namespace ember::session {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The backend `name`: from the registry, or for a profiled cpu run the cpu backend with
/// CpuOptions::profile.
std::unique_ptr<Backend> deviceBackend(const std::string& name, const DeviceOptions& opts) {
#ifdef EMBER_HAVE_CPU_BACKEND
  if (name == "cpu" && opts.profile) {
    CpuOptions o;
    o.profile = true;
    return loadCpuBackend(o);
  }
#endif
  if (opts.profile && name != "cpu")
    throw Error("device '" + name + "'", "--profile times the operations of the cpu device only");
  return createBackend(name);
}

/// Adds the last run's operation times of a profiled cpu function to `timing.profile`.
void addProfile(const CompiledFunction& compiled, DeviceTiming& timing) {
#ifdef EMBER_HAVE_CPU_BACKEND
  const auto* cpu = dynamic_cast<const CpuCompiledFunction*>(&compiled);
  if (!cpu)
    return;
  const std::vector<CpuOpTime>& ops = cpu->profile();
  if (timing.profile.empty())
    for (const CpuOpTime& op : ops)
      timing.profile.push_back(OpTime{op.name, op.kind, 0});
  for (size_t i = 0; i < ops.size() && i < timing.profile.size(); ++i)
    timing.profile[i].seconds += ops[i].seconds;
#else
  (void)compiled;
  (void)timing;
#endif
}

/// A device backed by one of the compiler's registered backends (interp, cpu).
Device backendDevice(const std::string& name, const std::string& description) {
  return Device{name, description, false,
                [name](const Function& f, const TensorMap& inputs, int repeat,
                       const DeviceOptions& opts, DeviceTiming& timing) {
                  auto t0 = std::chrono::steady_clock::now();
                  std::unique_ptr<Backend> backend = deviceBackend(name, opts);
                  requireSupported(*backend, f, "device '" + name + "'");
                  std::unique_ptr<CompiledFunction> compiled = backend->compile(f);
                  timing.prepareSeconds = secondsSince(t0);
                  // The profile averages the runs after the warm-up ones (at least the last).
                  const int firstProfiled = std::min(opts.warmup, repeat - 1);
                  TensorMap out;
                  for (int i = 0; i < repeat; ++i) {
                    auto t1 = std::chrono::steady_clock::now();
                    std::clock_t c1 = std::clock();
                    out = compiled->run(inputs);
                    timing.runSeconds.push_back(secondsSince(t1));
                    timing.runCpuSeconds.push_back(static_cast<double>(std::clock() - c1) /
                                                   CLOCKS_PER_SEC);
                    if (opts.profile && i >= firstProfiled)
                      addProfile(*compiled, timing);
                  }
                  for (OpTime& op : timing.profile)
                    op.seconds /= repeat - firstProfiled;
                  return out;
                }};
}

} // namespace

partition::NpuRunner npuSegmentRunner(const std::string& device, const runtime::RunRequest& engine,
                                      const isa::IsaDescription& desc, const DeviceOptions& opts,
                                      const std::string& label, bool whole,
                                      std::vector<platform::Report>& reports) {
  return [=, &desc, &reports](const partition::Segment& s, const TensorMap& in,
                              partition::SegmentRun& run) {
    const size_t index = reports.size();
    const isa::IsaDescription& d = s.isa ? *s.isa : desc;
    runtime::RunRequest req;
    req.engine = engine.engine;
    req.platform = engine.platform;
    req.progress = engine.progress;
    req.tool = engine.tool;
    req.device = engine.device;
    req.options.cycle_budget = opts.cycleBudget;
    req.binary =
        label + (whole ? "" : " NPU segment " + std::to_string(index)) + " (" + d.name() + ")";
    req.input_tensors = in;
    // A partitioned plan's segments go into one report (PlanReport.h), written by the caller.
    req.report_json = whole ? opts.reportJson : "";
    req.trace_json = whole ? opts.traceJson : "";
    req.table = false;
    runtime::RunResult r = runtime::runLoadedBinary(s.npu->binary, d, req, std::cerr);
    if (r.status != 0)
      throw NpuFault("device '" + device + "'", "the NPU program faulted" +
                                                    (whole ? "" : " in " + req.binary) + ": " +
                                                    r.report.fault->message());
    run.npuCycles = r.report.cycles;
    run.npuSeconds = r.report.seconds;
    run.npuEnergyJoules = r.report.energy_total_pj * 1e-12;
    TensorMap out;
    for (auto& [name, t] : r.outputs)
      out.emplace(name, std::move(t));
    reports.push_back(std::move(r.report));
    return out;
  };
}

namespace {

/// The NPU: partition the quantized function for the description (the whole function
/// when the NPU runs all of it), run the NPU segments' binaries on the SystemC model
/// (`engine` empty, device `sim`) or on the Verilated RTL (device `rtl`) through the
/// runtime, and the other segments on the fallback backend.
TensorMap runOnNpu(const char* device, const runtime::RunRequest& engine, const Function& f,
                   const TensorMap& inputs, int repeat, const DeviceOptions& opts,
                   DeviceTiming& timing) {
  auto t0 = std::chrono::steady_clock::now();
  isa::IsaDescription desc = isa::IsaDescription::loadDefault(opts.isa);
  partition::Plan plan;
  try {
    plan = partition::partition(f, desc, opts.partition);
  } catch (const Unsupported& e) {
    throw Unsupported(std::string("device '") + device + "'", e.what());
  }
  std::vector<platform::Report> reports;
  partition::NpuRunner runner =
      npuSegmentRunner(device, engine, desc, opts, "<" + f.name() + ">", plan.whole, reports);
  partition::PlanExecutor executor(plan, runner);
  timing.prepareSeconds = secondsSince(t0);
  timing.compileSummary = plan.whole ? npu::formatSummary(plan.segments[0].npu->summary) : "";
  timing.placement = partition::placementSummaryLine(plan);
  timing.placementReport = partition::formatPlacementReport(plan);
  TensorMap out;
  std::vector<partition::SegmentRun> runs;
  for (int i = 0; i < repeat; ++i) {
    reports.clear();
    auto t1 = std::chrono::steady_clock::now();
    std::clock_t c1 = std::clock();
    out = executor.run(inputs, &runs);
    timing.runSeconds.push_back(secondsSince(t1));
    timing.runCpuSeconds.push_back(static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC);
  }
  if (plan.whole) {
    timing.npu = reports.front();
  } else {
    timing.segmentTable = partition::formatSegmentRuns(plan, runs) +
                          partition::formatEstimate(runEstimate(plan, desc, runs));
    writePlanReports(opts, plan, desc, runs, reports);
  }
  timing.npuSegments = std::move(reports);
  return out;
}

TensorMap runOnSim(const Function& f, const TensorMap& inputs, int repeat,
                   const DeviceOptions& opts, DeviceTiming& timing) {
  return runOnNpu("sim", npuEngine("sim"), f, inputs, repeat, opts, timing);
}

#ifdef EMBER_HAVE_RTL
TensorMap runOnRtl(const Function& f, const TensorMap& inputs, int repeat,
                   const DeviceOptions& opts, DeviceTiming& timing) {
  return runOnNpu("rtl", npuEngine("rtl"), f, inputs, repeat, opts, timing);
}
#endif

std::vector<Device> buildTable() {
  registerNpuBackend();
  std::vector<Device> table;
  for (const std::string& name : backendNames()) {
    if (name == "interp")
      table.push_back(backendDevice(name, "the float/int8 reference interpreter on the host"));
    else if (name == "cpu")
      table.push_back(backendDevice(name, "LLVM-compiled code for the host CPU"));
  }
  table.push_back(Device{"sim",
                         "the Ember NPU: compile for the description (--isa), run on the "
                         "cycle-accurate simulator (int8 only)",
                         true, runOnSim});
#ifdef EMBER_HAVE_RTL
  table.push_back(Device{"rtl",
                         "the Ember NPU's Verilated RTL: compile as for sim, run the binary on "
                         "the RTL (int8 only; the shipped descriptions)",
                         true, runOnRtl});
#endif
  return table;
}

} // namespace

runtime::RunRequest npuEngine(const std::string& device) {
  runtime::RunRequest engine;
  engine.device = device;
  if (device == "sim")
    return engine;
#ifdef EMBER_HAVE_RTL
  if (device == "rtl") {
    engine.engine = rtlEngine();
    engine.platform = rtlPlatform();
    return engine;
  }
#endif
  throw UsageError("device '" + device + "'", "NPU programs run on sim"
#ifdef EMBER_HAVE_RTL
                                              " or rtl"
#endif
  );
}

bool isNpuBinaryFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  unsigned char m[4] = {0, 0, 0, 0};
  const size_t n = std::fread(m, 1, 4, f);
  std::fclose(f);
  return n == 4 && m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F';
}

void registerNpuBackend() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (isBackendRegistered("npu"))
      return;
    registerBackend("npu", [] {
      auto desc = std::make_shared<isa::IsaDescription>(isa::IsaDescription::loadDefault());
      auto reports = std::make_shared<std::vector<platform::Report>>();
      partition::NpuRunner inner = npuSegmentRunner("npu", runtime::RunRequest{}, *desc,
                                                    DeviceOptions{}, "<npu>", true, *reports);
      // The runner refers to the description and the report list: keep them alive with it,
      // and keep only the last run's report.
      partition::NpuRunner runner = [desc, reports, inner](const partition::Segment& s,
                                                           const TensorMap& in,
                                                           partition::SegmentRun& run) {
        reports->clear();
        return inner(s, in, run);
      };
      return partition::createNpuBackend(*desc, runner);
    });
  });
}

#ifdef EMBER_HAVE_RTL
platform::PlatformFactory rtlPlatform() {
  return rtl::RtlPlatform::factory();
}

std::function<platform::Result(const isa::IsaDescription&, const platform::Job&,
                               const platform::Options&)>
rtlEngine() {
  return [](const isa::IsaDescription& d, const platform::Job& job, const platform::Options& o) {
    rtl::RtlSimulator r(d);
    rtl::RtlRun run = r.run(job, o);
    if (run.overrun || run.bus_conflict)
      throw Error("device 'rtl'", std::string("the RTL broke its own invariants (") +
                                      (run.overrun ? "a datapath overran its instruction" : "") +
                                      (run.overrun && run.bus_conflict ? ", " : "") +
                                      (run.bus_conflict ? "both DMAs drove the DRAM port" : "") +
                                      "): a bug of rtl/, please report it");
    return std::move(run.result);
  };
}
#endif

const std::vector<Device>& devices() {
  static const std::vector<Device> table = buildTable();
  return table;
}

const Device& findDevice(const std::string& name) {
  for (const Device& d : devices())
    if (name == d.name)
      return d;
  std::string known;
  for (const Device& d : devices())
    known += (known.empty() ? "" : ", ") + d.name;
  throw Error("--device '" + name + "'", "unknown device (this build has: " + known + ")");
}

} // namespace ember::session
