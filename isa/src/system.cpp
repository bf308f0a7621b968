// Loading a system of NPUs: JSON -> system schema -> every named description -> the
// checks the schema cannot express (ids, sharing, address windows, one clock).
#include "ember/isa/system.h"

#include "ember/isa/error.h"
#include "ember/isa/semantic.h"
#include "ember/support/AtomicFile.h"
#include "schema_check.h"

#include <filesystem>
#include <map>
#include <sstream>

namespace ember::isa {

namespace detail {
const nlohmann::json& embeddedSystemSchema();
} // namespace detail

struct SystemDescription::Data {
  std::string file, name, description;
  std::vector<SystemDevice> devices;
  std::vector<SystemDram> drams;
};

namespace {

using nlohmann::json;

/// [A-Za-z][A-Za-z0-9_.-]*, as the NPU description's names.
bool validName(const std::string& s) {
  if (s.empty() || !std::isalpha(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-')
      return false;
  return true;
}

std::string sizeText(std::uint64_t bytes) {
  std::ostringstream o;
  if (bytes >= (std::uint64_t(1) << 30) && bytes % (std::uint64_t(1) << 30) == 0)
    o << (bytes >> 30) << " GiB";
  else if (bytes >= (std::uint64_t(1) << 20) && bytes % (std::uint64_t(1) << 20) == 0)
    o << (bytes >> 20) << " MiB";
  else
    o << bytes << " bytes";
  return o.str();
}

/// Builds SystemDescription::Data from a schema-valid document.
class SystemLoader {
public:
  SystemLoader(const json& doc, const std::string& file, const std::string& baseDir,
               SystemDescription::Resolver resolve, SystemDescription::Data& d)
      : doc_(doc), ck_(file), baseDir_(baseDir), resolve_(std::move(resolve)), d_(d) {}

  void run() {
    d_.name = doc_["name"].get<std::string>();
    d_.description = doc_["description"].get<std::string>();
    if (!validName(d_.name))
      ck_.fail("/name", "name must start with a letter and use letters, digits, '.', '_', '-'");
    loadDrams();
    const json& list = doc_["devices"];
    if (list.empty())
      ck_.fail("/devices", "no devices: a system has at least one NPU");
    for (size_t i = 0; i < list.size(); ++i)
      loadDevice(list[i], i);
    for (size_t i = 0; i < d_.drams.size(); ++i)
      if (d_.drams[i].devices.empty())
        ck_.fail("/drams/" + std::to_string(i),
                 "DRAM '" + d_.drams[i].id +
                     "' has no device attached (no /devices/N/dram names it)");
    for (const SystemDram& r : d_.drams)
      if (r.shared())
        for (size_t i : r.devices)
          checkSharedTiming(r, i);
  }

private:
  void loadDrams() {
    const json& list = doc_["drams"];
    for (size_t i = 0; i < list.size(); ++i) {
      const json& j = list[i];
      const std::string p = "/drams/" + std::to_string(i);
      SystemDram r;
      r.id = j["id"].get<std::string>();
      if (!validName(r.id))
        ck_.fail(p + "/id", "id \"" + r.id +
                                "\" must start with a letter and use letters, "
                                "digits, '.', '_', '-'");
      for (const SystemDram& o : d_.drams)
        if (o.id == r.id)
          ck_.fail(p + "/id", "DRAM id '" + r.id + "' is used twice");
      r.size_bytes = j["size_bytes"].get<std::uint64_t>();
      r.bytes_per_cycle = j["bytes_per_cycle"].get<std::uint64_t>();
      r.latency_cycles = j["latency_cycles"].get<std::uint64_t>();
      r.arbitration = j["arbitration"].get<std::string>();
      d_.drams.push_back(std::move(r));
    }
  }

  // A shared DRAM is one channel in the joint simulation (docs/systems.md section 5):
  // each device times its DMAs (rules D1, D2) with its description's DRAM bandwidth and
  // latency, so they must be the DRAM's.
  void checkSharedTiming(const SystemDram& r, size_t i) {
    const SystemDevice& dev = d_.devices[i];
    const HardwareDesc& hw = dev.isa.hw();
    auto refuse = [&](const char* what, const char* key, std::uint64_t mine, std::uint64_t its) {
      ck_.fail("/devices/" + std::to_string(i) + "/dram",
               "device '" + dev.name + "' has DRAM " + what + " " + std::to_string(mine) + " (" +
                   key + ") but the DRAM '" + r.id + "' it shares has " + std::to_string(its) +
                   ": the devices of a shared DRAM time their DMAs with its bandwidth and "
                   "latency (one channel)");
    };
    if (hw.dram.bytes_per_cycle != r.bytes_per_cycle)
      refuse("bytes_per_cycle", "hardware/dram/bytes_per_cycle", hw.dram.bytes_per_cycle,
             r.bytes_per_cycle);
    if (hw.dma.latency_cycles != r.latency_cycles)
      refuse("latency_cycles", "hardware/dma/latency_cycles", hw.dma.latency_cycles,
             r.latency_cycles);
  }

  std::string dramIds() const {
    std::string s;
    for (const SystemDram& r : d_.drams)
      s += (s.empty() ? "" : ", ") + r.id;
    return s.empty() ? "none" : s;
  }

  IsaDescription loadDescription(const std::string& written, const std::string& p) {
    namespace fs = std::filesystem;
    fs::path path(written);
    if (path.is_relative() && !baseDir_.empty())
      path = fs::path(baseDir_) / path;
    const std::string resolved = path.lexically_normal().string();
    try {
      if (resolve_)
        return resolve_(resolved);
      auto it = cache_.find(resolved);
      if (it == cache_.end())
        it = cache_.emplace(resolved, IsaDescription::loadFile(resolved)).first;
      return it->second;
    } catch (const ember::Error& e) {
      ck_.fail(p, "cannot load the NPU description '" + written + "': " + e.what());
    }
  }

  void loadDevice(const json& j, size_t i) {
    const std::string p = "/devices/" + std::to_string(i);
    SystemDevice dev;
    dev.name = j["name"].get<std::string>();
    if (!validName(dev.name))
      ck_.fail(p + "/name", "name \"" + dev.name +
                                "\" must start with a letter and use "
                                "letters, digits, '.', '_', '-'");
    for (const SystemDevice& o : d_.devices)
      if (o.name == dev.name)
        ck_.fail(p + "/name", "device name '" + dev.name + "' is used twice");
    const std::string dram = j["dram"].get<std::string>();
    size_t k = 0;
    while (k < d_.drams.size() && d_.drams[k].id != dram)
      ++k;
    if (k == d_.drams.size())
      ck_.fail(p + "/dram", "no DRAM '" + dram + "' in /drams (ids: " + dramIds() + ")");
    dev.dram = k;
    const std::string written = j["description"].get<std::string>();
    dev.isa = loadDescription(written, p + "/description");
    dev.descriptionPath = dev.isa.file();
    const HardwareDesc& hw = dev.isa.hw();
    if (!d_.devices.empty() && hw.clock_hz != d_.devices.front().isa.hw().clock_hz)
      ck_.fail(p + "/description",
               "'" + written + "' runs at " + std::to_string(hw.clock_hz) + " Hz, device '" +
                   d_.devices.front().name + "' at " +
                   std::to_string(d_.devices.front().isa.hw().clock_hz) +
                   " Hz: the devices of a system share one clock (one simulation)");
    if (d_.drams[k].size_bytes > hw.dram.size_bytes)
      ck_.fail(p + "/dram", "DRAM '" + dram + "' holds " + sizeText(d_.drams[k].size_bytes) +
                                " but '" + written + "' addresses only " +
                                sizeText(hw.dram.size_bytes) + " (hardware/dram/size_bytes)");
    dev.host_link = {hw.host_link.bytes_per_cycle, hw.host_link.latency_cycles};
    if (j.contains("host_link")) {
      dev.host_link.bytes_per_cycle = j["host_link"]["bytes_per_cycle"].get<std::uint64_t>();
      dev.host_link.latency_cycles = j["host_link"]["latency_cycles"].get<std::uint64_t>();
      dev.defaultHostLink = false;
    }
    d_.drams[k].devices.push_back(i);
    d_.devices.push_back(std::move(dev));
  }

  const json& doc_;
  Checker ck_;
  std::string baseDir_;
  SystemDescription::Resolver resolve_;
  std::map<std::string, IsaDescription> cache_;
  SystemDescription::Data& d_;
};

} // namespace

bool SystemDescription::isSystemDocument(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("devices");
}

bool SystemDescription::isSystemFile(const std::string& path) {
  try {
    return isSystemDocument(
        json::parse(readRegularFile(path, IsaDescription::kMaxDescriptionBytes)));
  } catch (const std::exception&) {
    return false;
  }
}

SystemDescription SystemDescription::loadString(std::string_view text, const std::string& label,
                                                const std::string& baseDir, Resolver resolve) {
  auto data = std::make_shared<Data>();
  data->file = label;
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw jsonError(label, "not valid JSON", e);
  }
  try {
    detail::validateSchema(doc, detail::embeddedSystemSchema(), label);
    SystemLoader(doc, label, baseDir, std::move(resolve), *data).run();
  } catch (const json::exception& e) {
    throw jsonError(label, "malformed system", e);
  }
  SystemDescription s;
  s.d_ = std::move(data);
  return s;
}

SystemDescription SystemDescription::loadFile(const std::string& path) {
  std::string text;
  try {
    text = ember::readRegularFile(path, IsaDescription::kMaxDescriptionBytes);
  } catch (const ember::Error& e) {
    throw Error(path, "", "cannot read the system: " + e.reason());
  }
  return loadString(text, path, std::filesystem::path(path).parent_path().string());
}

const std::string& SystemDescription::name() const {
  return d_->name;
}
const std::string& SystemDescription::descriptionText() const {
  return d_->description;
}
const std::string& SystemDescription::file() const {
  return d_->file;
}
const std::vector<SystemDevice>& SystemDescription::devices() const {
  return d_->devices;
}
const std::vector<SystemDram>& SystemDescription::drams() const {
  return d_->drams;
}
const SystemDram& SystemDescription::dramOf(size_t device) const {
  return d_->drams.at(d_->devices.at(device).dram);
}
std::uint64_t SystemDescription::clockHz() const {
  return d_->devices.front().isa.hw().clock_hz;
}

std::string summarizeSystem(const SystemDescription& s) {
  std::ostringstream o;
  o << "system " << s.name() << " (" << s.file() << "): " << s.devices().size() << " device(s), "
    << s.drams().size() << " DRAM(s), clock " << s.clockHz() / 1e6 << " MHz\n";
  for (const SystemDevice& d : s.devices()) {
    const SystemDram& r = s.drams()[d.dram];
    o << "  " << d.name << ": " << d.isa.name() << " (" << d.descriptionPath << "), "
      << d.isa.peakMacsPerCycle() << " MAC/cycle, DRAM " << r.id
      << (r.shared() ? " (shared)" : " (private)") << ", host link " << d.host_link.bytes_per_cycle
      << " B/cycle + " << d.host_link.latency_cycles << " cycles"
      << (d.defaultHostLink ? " (the description's)" : "") << "\n";
  }
  for (const SystemDram& r : s.drams()) {
    o << "  " << r.id << ": " << sizeText(r.size_bytes) << ", " << r.bytes_per_cycle << " B/cycle, "
      << r.latency_cycles << " cycles latency, " << r.arbitration << ", devices";
    for (size_t i : r.devices)
      o << " " << s.devices()[i].name;
    o << "\n";
  }
  return o.str();
}

} // namespace ember::isa
