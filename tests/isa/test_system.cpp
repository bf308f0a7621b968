// Loading and validating systems of NPUs (isa/systems/*.json, docs/systems.md): the two
// shipped files, and every refusal with its JSON pointer.
#include "test_util.h"

#include "ember/isa/system.h"

namespace ember::isa::test {
namespace {

using nlohmann::json;

/// A system document of `n` devices over ../ember-v1.json, each with its own DRAM.
json privateSystem(size_t n) {
  json j = {
      {"name", "t"}, {"description", "test"}, {"drams", json::array()}, {"devices", json::array()}};
  for (size_t i = 0; i < n; ++i) {
    const std::string id = "dram" + std::to_string(i);
    j["drams"].push_back({{"id", id},
                          {"size_bytes", 1 << 30},
                          {"bytes_per_cycle", 32},
                          {"latency_cycles", 100},
                          {"arbitration", "round-robin"}});
    j["devices"].push_back(
        {{"name", "npu" + std::to_string(i)}, {"description", "ember-v1.json"}, {"dram", id}});
  }
  return j;
}

/// Loads `j` with device descriptions from the source tree's isa/ folder.
SystemDescription load(const json& j) {
  return SystemDescription::loadString(j.dump(), "sys.json", sourcePath("isa"));
}

TEST(System, ShippedPrivateDrams) {
  const SystemDescription s =
      SystemDescription::loadFile(sourcePath("isa/systems/ember-v1-x4.json"));
  EXPECT_EQ(s.name(), "ember-v1-x4");
  ASSERT_EQ(s.devices().size(), 4u);
  ASSERT_EQ(s.drams().size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.devices()[i].name, "npu" + std::to_string(i));
    EXPECT_EQ(s.devices()[i].isa.hash(), reference().hash());
    EXPECT_FALSE(s.dramOf(i).shared());
    EXPECT_EQ(s.dramOf(i).devices, std::vector<size_t>{i});
    // The host link defaults to the description's.
    EXPECT_TRUE(s.devices()[i].defaultHostLink);
    EXPECT_EQ(s.devices()[i].host_link.bytes_per_cycle, reference().hw().host_link.bytes_per_cycle);
  }
  EXPECT_EQ(s.clockHz(), reference().hw().clock_hz);
  EXPECT_NE(summarizeSystem(s).find("npu3: ember-v1"), std::string::npos);
}

TEST(System, ShippedSharedDram) {
  const SystemDescription s =
      SystemDescription::loadFile(sourcePath("isa/systems/ember-v1-x4-shared.json"));
  ASSERT_EQ(s.devices().size(), 4u);
  ASSERT_EQ(s.drams().size(), 1u);
  EXPECT_TRUE(s.drams()[0].shared());
  EXPECT_EQ(s.drams()[0].devices, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.drams()[0].arbitration, "round-robin");
  EXPECT_NE(summarizeSystem(s).find("(shared)"), std::string::npos);
}

TEST(System, HostLinkOverrideAndTransferCycles) {
  json j = privateSystem(2);
  j["devices"][1]["host_link"] = {{"bytes_per_cycle", 64}, {"latency_cycles", 10}};
  const SystemDescription s = load(j);
  EXPECT_TRUE(s.devices()[0].defaultHostLink);
  EXPECT_FALSE(s.devices()[1].defaultHostLink);
  EXPECT_EQ(s.devices()[1].host_link.transferCycles(129), 10u + 3u);
  EXPECT_EQ(s.devices()[1].host_link.transferCycles(0), 0u);
}

TEST(System, RefusesZeroDevices) {
  json j = privateSystem(0);
  EXPECT_ISA_ERROR(load(j), "/devices", "no devices");
}

TEST(System, RefusesMissingDescriptionFile) {
  json j = privateSystem(3);
  j["devices"][2]["description"] = "no-such-npu.json";
  EXPECT_ISA_ERROR(load(j), "/devices/2/description",
                   "cannot load the NPU description 'no-such-npu.json'");
}

TEST(System, RefusesUnknownDramId) {
  json j = privateSystem(2);
  j["devices"][1]["dram"] = "hbm";
  EXPECT_ISA_ERROR(load(j), "/devices/1/dram", "no DRAM 'hbm' in /drams (ids: dram0, dram1)");
}

TEST(System, RefusesUnusedDramAndDuplicates) {
  json j = privateSystem(2);
  j["devices"][1]["dram"] = "dram0"; // dram1 now has nobody
  EXPECT_ISA_ERROR(load(j), "/drams/1", "DRAM 'dram1' has no device attached");
  j = privateSystem(2);
  j["devices"][1]["name"] = "npu0";
  EXPECT_ISA_ERROR(load(j), "/devices/1/name", "device name 'npu0' is used twice");
  j = privateSystem(2);
  j["drams"][1]["id"] = "dram0";
  EXPECT_ISA_ERROR(load(j), "/drams/1/id", "DRAM id 'dram0' is used twice");
}

TEST(System, RefusesDramBeyondTheDevicesWindow) {
  json j = privateSystem(1);
  j["drams"][0]["size_bytes"] = uint64_t(8) << 30; // ember-v1 addresses 4 GiB
  EXPECT_ISA_ERROR(load(j), "/devices/0/dram",
                   "holds 8 GiB but 'ember-v1.json' addresses only 4 GiB");
}

TEST(System, RefusesASharedDramOfAnotherBandwidthOrLatencyThanItsDevices) {
  json j = privateSystem(2);
  j["devices"][1]["dram"] = "dram0";
  j["drams"].erase(1);
  EXPECT_NO_THROW(load(j)); // ember-v1: 32 B/cycle, 100 cycles, as dram0
  j["drams"][0]["bytes_per_cycle"] = 64;
  EXPECT_ISA_ERROR(load(j), "/devices/0/dram",
                   "device 'npu0' has DRAM bytes_per_cycle 32 (hardware/dram/bytes_per_cycle) "
                   "but the DRAM 'dram0' it shares has 64");
  j["drams"][0]["bytes_per_cycle"] = 32;
  j["drams"][0]["latency_cycles"] = 90;
  EXPECT_ISA_ERROR(load(j), "/devices/0/dram", "latency_cycles 100 (hardware/dma/latency_cycles)");
  j = privateSystem(1); // a private DRAM is not simulated jointly: not checked
  j["drams"][0]["bytes_per_cycle"] = 64;
  EXPECT_NO_THROW(load(j));
}

TEST(System, RefusesSchemaViolations) {
  json j = privateSystem(1);
  j["devices"][0].erase("dram");
  EXPECT_ISA_ERROR(load(j), "/devices/0", "dram");
  j = privateSystem(1);
  j["drams"][0]["arbitration"] = "lottery";
  EXPECT_ISA_ERROR(load(j), "/drams/0/arbitration", "lottery");
  EXPECT_THROW(SystemDescription::loadString("{", "sys.json", ""), Error);
}

TEST(System, RefusesDevicesOfDifferentClocks) {
  json fast = referenceJson();
  fast["hardware"]["clock_hz"] = 2000000000;
  json j = privateSystem(2);
  j["devices"][1]["description"] = "fast.json";
  auto resolve = [&](const std::string& path) {
    if (path.find("fast.json") != std::string::npos)
      return IsaDescription::loadString(fast.dump(), path);
    return reference();
  };
  EXPECT_ISA_ERROR(SystemDescription::loadString(j.dump(), "sys.json", "", resolve),
                   "/devices/1/description", "share one clock");
}

TEST(System, UnequalDevicesLoad) {
  json j = privateSystem(2);
  j["devices"][1]["description"] = "examples/ember-v1-large.json";
  const SystemDescription s = load(j);
  EXPECT_EQ(s.devices()[1].isa.peakMacsPerCycle(), 1024u);
  EXPECT_EQ(s.devices()[0].isa.peakMacsPerCycle(), 256u);
}

TEST(System, DescriptionDocumentIsNotASystem) {
  EXPECT_FALSE(SystemDescription::isSystemDocument(referenceJson()));
  EXPECT_TRUE(SystemDescription::isSystemDocument(privateSystem(1)));
}

} // namespace
} // namespace ember::isa::test
