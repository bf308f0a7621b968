#pragma once
/// \file
/// The devices `ember-run` can run a model on, as a table: a device is a name, a
/// one-line description and a function that runs an imported function on inputs.
/// Later devices (cpu, sim, rtl) join by adding one row in Devices.cpp; `--compare`
/// works for any pair of rows.

#include "ember/backend/Backend.h"

#include <functional>
#include <string>
#include <vector>

namespace ember::run {

/// Timing of one device run (seconds), filled by the device.
struct DeviceTiming {
  double prepareSeconds = 0;         ///< compile / load / lower for the device
  std::vector<double> runSeconds;    ///< wall time, one entry per repetition
  std::vector<double> runCpuSeconds; ///< process CPU time, one entry per repetition
};

/// One row of the device table.
struct Device {
  const char* name;
  const char* description;
  /// Prepares `f` for the device, runs it `repeat` (>= 1) times on `inputs` and returns
  /// the outputs of the last run. Throws ember::Error for anything the user can fix.
  std::function<TensorMap(const Function& f, const TensorMap& inputs, int repeat,
                          DeviceTiming& timing)>
      run;
};

/// Every device of this build, in the order `--help` lists them.
const std::vector<Device>& devices();

/// The device called `name`; throws ember::Error listing the known names.
const Device& findDevice(const std::string& name);

} // namespace ember::run
