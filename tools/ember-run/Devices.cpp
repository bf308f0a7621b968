// The device table of ember-run. A device joins by adding one row to devices().
#include "Devices.h"

#include "ember/support/Error.h"

#include <chrono>
#include <ctime>

namespace ember::run {

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// A device backed by one of the compiler's registered backends (interp, later cpu).
Device backendDevice(const char* name, const char* description) {
  return Device{
      name, description,
      [name](const Function& f, const TensorMap& inputs, int repeat, DeviceTiming& timing) {
        auto t0 = std::chrono::steady_clock::now();
        std::unique_ptr<Backend> backend = createBackend(name);
        std::vector<std::string> missing = unsupportedNodes(*backend, f);
        if (!missing.empty()) {
          std::string msg =
              "cannot run " + std::to_string(missing.size()) + " node(s) of the model:";
          for (const auto& m : missing)
            msg += "\n  " + m;
          throw Unsupported(std::string("device '") + name + "'", msg);
        }
        std::unique_ptr<CompiledFunction> compiled = backend->compile(f);
        timing.prepareSeconds = secondsSince(t0);
        TensorMap out;
        for (int i = 0; i < repeat; ++i) {
          auto t1 = std::chrono::steady_clock::now();
          std::clock_t c1 = std::clock();
          out = compiled->run(inputs);
          timing.runSeconds.push_back(secondsSince(t1));
          timing.runCpuSeconds.push_back(static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC);
        }
        return out;
      }};
}

} // namespace

const std::vector<Device>& devices() {
  static const std::vector<Device> table = {
      backendDevice("interp", "the float/int8 reference interpreter on the host"),
      // Later: {"cpu", ...} (LLVM backend), {"sim", ...} (SystemC NPU model),
      // {"rtl", ...} (Verilated RTL): each one row here.
  };
  return table;
}

const Device& findDevice(const std::string& name) {
  for (const Device& d : devices())
    if (name == d.name)
      return d;
  std::string known;
  for (const Device& d : devices())
    known += std::string(known.empty() ? "" : ", ") + d.name;
  throw Error("--device '" + name + "'", "unknown device (this build has: " + known + ")");
}

} // namespace ember::run
