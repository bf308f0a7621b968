// A system of NPUs (isa/systems/*.json): devices that name NPU descriptions, their DRAMs
// (private or shared) and their host links. Loaded and validated like a description.
#pragma once

#include "ember/isa/description.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ember::isa {

/// A link between the host and one device: B bytes take latency_cycles +
/// ceil(B / bytes_per_cycle) cycles (the description's hardware.host_link by default).
struct LinkDesc {
  std::uint64_t bytes_per_cycle = 1, latency_cycles = 0;
  /// Cycles one transfer of `bytes` takes (0 bytes: no transfer, 0 cycles).
  std::uint64_t transferCycles(std::uint64_t bytes) const {
    return bytes == 0 ? 0 : latency_cycles + (bytes + bytes_per_cycle - 1) / bytes_per_cycle;
  }
};

/// One DRAM of a system (/drams/N).
struct SystemDram {
  std::string id;
  std::uint64_t size_bytes = 0, bytes_per_cycle = 0, latency_cycles = 0;
  std::string arbitration;     ///< "round-robin" or "fixed-priority".
  std::vector<size_t> devices; ///< Indices of the devices attached to it, in order.
  bool shared() const { return devices.size() > 1; }
};

/// One NPU instance of a system (/devices/N).
struct SystemDevice {
  std::string name;
  std::string descriptionPath; ///< As resolved (relative paths against the system's folder).
  IsaDescription isa;
  size_t dram = 0; ///< Index into SystemDescription::drams().
  LinkDesc host_link;
  bool defaultHostLink = true; ///< host_link came from the description.
};

/// A loaded and validated system. Cheap to copy (shared, immutable).
class SystemDescription {
public:
  /// Loads a description a device names (the path as written in the file and the path
  /// resolved against the system's folder). Tests and fuzzers pass their own.
  using Resolver = std::function<IsaDescription(const std::string& resolvedPath)>;

  /// Loads and validates `path`. Throws `Error` naming the file, JSON pointer and reason.
  static SystemDescription loadFile(const std::string& path);
  /// Loads JSON text; `label` names it in errors and relative description paths are
  /// resolved against `baseDir` and loaded with `resolve` (default: loadFile, each file
  /// once).
  static SystemDescription loadString(std::string_view text, const std::string& label,
                                      const std::string& baseDir, Resolver resolve = {});
  /// Whether a parsed JSON document is a system (an object with "devices") rather than an
  /// NPU description: `ember-isa check` tells them apart so.
  static bool isSystemDocument(const nlohmann::json& doc);
  /// Whether the file `path` holds a system: a readable JSON object with "devices".
  /// Anything else (unreadable, not JSON) is false, left to the description loader, whose
  /// errors name the file.
  static bool isSystemFile(const std::string& path);

  const std::string& name() const;
  const std::string& descriptionText() const;
  const std::string& file() const;
  const std::vector<SystemDevice>& devices() const;
  const std::vector<SystemDram>& drams() const;
  /// The DRAM device `device` is attached to.
  const SystemDram& dramOf(size_t device) const;
  /// The clock every device shares (Hz).
  std::uint64_t clockHz() const;

  struct Data;

private:
  std::shared_ptr<const Data> d_;
};

/// A readable summary of a system (`ember-isa check sys.json`): each device with its
/// description, peak MAC/cycle, DRAM and host link; each DRAM, private or shared.
std::string summarizeSystem(const SystemDescription& s);

} // namespace ember::isa
