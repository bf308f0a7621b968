// The device table of ember-run: every executing compiler backend, plus the NPU
// simulator. A device joins by adding one row to devices().
#include "Devices.h"

#include "ember/runtime/Run.h"

#include "ember/isa/description.h"
#ifdef EMBER_HAVE_RTL
#include "ember/rtl/RtlPlatform.h"
#include "ember/rtl/RtlSim.h"
#endif
#include "ember/npu/Compile.h"
#include "ember/support/Error.h"

#include <chrono>
#include <ctime>
#include <iostream>

namespace ember::run {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void throwUnsupported(const std::string& device, const std::vector<std::string>& m) {
  std::string msg = "cannot run " + std::to_string(m.size()) + " node(s) of the model:";
  for (const auto& s : m)
    msg += "\n  " + s;
  throw Unsupported("device '" + device + "'", msg);
}

/// A device backed by one of the compiler's registered backends (interp, cpu).
Device backendDevice(const std::string& name, const std::string& description) {
  return Device{name, description, false,
                [name](const Function& f, const TensorMap& inputs, int repeat, const DeviceOptions&,
                       DeviceTiming& timing) {
                  auto t0 = std::chrono::steady_clock::now();
                  std::unique_ptr<Backend> backend = createBackend(name);
                  std::vector<std::string> missing = unsupportedNodes(*backend, f);
                  if (!missing.empty())
                    throwUnsupported(name, missing);
                  std::unique_ptr<CompiledFunction> compiled = backend->compile(f);
                  timing.prepareSeconds = secondsSince(t0);
                  TensorMap out;
                  for (int i = 0; i < repeat; ++i) {
                    auto t1 = std::chrono::steady_clock::now();
                    std::clock_t c1 = std::clock();
                    out = compiled->run(inputs);
                    timing.runSeconds.push_back(secondsSince(t1));
                    timing.runCpuSeconds.push_back(static_cast<double>(std::clock() - c1) /
                                                   CLOCKS_PER_SEC);
                  }
                  return out;
                }};
}

/// Dequantizes an int8/int32 output of the NPU as a DequantizeLinear node does, in the
/// function output's shape `dims` (the I/O table may hold it as [N, C, 1, 1]).
Tensor dequantize(const isa::IoEntry& e, const Tensor& q, const Shape& dims) {
  if (numElements(dims) != q.size())
    throw Error("device 'sim'", "output '" + e.name + "' has " + std::to_string(q.size()) +
                                    " elements in the binary, the model's has " +
                                    std::to_string(numElements(dims)));
  Tensor out(ElemKind::Float32, dims);
  const float scale = static_cast<float>(e.scale);
  for (int64_t i = 0; i < q.size(); ++i)
    out.data<float>()[i] =
        static_cast<float>(static_cast<int64_t>(q.getAsDouble(i)) - e.zero_point) * scale;
  return out;
}

/// The NPU: compile the quantized function for the description, run the binary on the
/// SystemC model (`engine` empty, device `sim`) or on the Verilated RTL (device `rtl`).
TensorMap runOnNpu(const char* device, const runtime::RunRequest& engine, const Function& f,
                   const TensorMap& inputs, int repeat, const DeviceOptions& opts,
                   DeviceTiming& timing) {
  auto t0 = std::chrono::steady_clock::now();
  isa::IsaDescription desc = isa::IsaDescription::loadDefault(opts.isa);
  std::vector<std::string> missing = npu::unsupportedNodes(f, desc);
  if (!missing.empty())
    throwUnsupported(device, missing);
  npu::CompileResult compiled = npu::compile(f, desc);
  timing.prepareSeconds = secondsSince(t0);
  timing.compileSummary = npu::formatSummary(compiled.summary);
  runtime::RunRequest req;
  req.engine = engine.engine;
  req.platform = engine.platform;
  req.binary = "<" + f.name() + " compiled for " + desc.name() + ">";
  req.input_tensors = inputs;
  req.report_json = opts.reportJson;
  req.trace_json = opts.traceJson;
  req.table = false;
  TensorMap out;
  for (int i = 0; i < repeat; ++i) {
    auto t1 = std::chrono::steady_clock::now();
    std::clock_t c1 = std::clock();
    runtime::RunResult r = runtime::runLoadedBinary(compiled.binary, desc, req, std::cerr);
    timing.runSeconds.push_back(secondsSince(t1));
    timing.runCpuSeconds.push_back(static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC);
    if (r.status != 0)
      throw Error(std::string("device '") + device + "'",
                  "the NPU program faulted: " + r.report.fault->message());
    out.clear();
    for (const auto& [name, t] : r.outputs)
      for (const auto& e : r.io)
        for (const auto& fo : f.outputs())
          if (e.name == name && e.dir == isa::IoDir::Output && fo.name == name)
            out.emplace(name, dequantize(e, t, fo.value.dims()));
    timing.npu = std::move(r.report);
  }
  return out;
}

TensorMap runOnSim(const Function& f, const TensorMap& inputs, int repeat,
                   const DeviceOptions& opts, DeviceTiming& timing) {
  return runOnNpu("sim", runtime::RunRequest{}, f, inputs, repeat, opts, timing);
}

#ifdef EMBER_HAVE_RTL
TensorMap runOnRtl(const Function& f, const TensorMap& inputs, int repeat,
                   const DeviceOptions& opts, DeviceTiming& timing) {
  runtime::RunRequest e;
  e.engine = rtlEngine();
  e.platform = rtlPlatform();
  return runOnNpu("rtl", e, f, inputs, repeat, opts, timing);
}
#endif

std::vector<Device> buildTable() {
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

#ifdef EMBER_HAVE_RTL
sim::PlatformFactory rtlPlatform() {
  return rtl::RtlPlatform::factory();
}

std::function<sim::Result(const isa::IsaDescription&, const sim::Job&, const sim::Options&)>
rtlEngine() {
  return [](const isa::IsaDescription& d, const sim::Job& job, const sim::Options& o) {
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

} // namespace ember::run
