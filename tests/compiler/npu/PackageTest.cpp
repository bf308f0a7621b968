// Packages (docs/package.md): a partitioned random chain written and loaded again runs
// bit-exact with the int8 interpreter; the bytes are reproducible; a corrupt, stale,
// truncated or foreign package is refused with a message naming what is wrong; a host
// segment's graph survives the trip through bytes unchanged.
#include "PartitionTestUtil.h"

#include "ember/driver/Execute.h"
#include "ember/driver/Package.h"
#include "ember/graph/Serialize.h"
#include "ember/isa/package.h"

#include <functional>
#include <nlohmann/json.hpp>

namespace ember::npu::test {
namespace {

using partition::Plan;

/// A chain with its second and fourth layers forced to the interpreter.
struct Partitioned {
  Chain ch;
  Plan plan;
  explicit Partitioned(unsigned seed, const isa::IsaDescription& isa = refIsa()) : ch(seed) {
    buildRandomChain(ch);
    partition::PartitionOptions o;
    o.costModel = false;
    o.fallback = partition::Fallback::Interp;
    int k = 0;
    for (const auto& n : ch.g.f->nodes())
      if (n->kind() != NodeKind::QuantizeLinear && n->kind() != NodeKind::DequantizeLinear &&
          (k++ == 1 || k == 4))
        o.hostNodes.insert(n->name());
    plan = partition::partition(*ch.g.f, isa, o);
  }
};

std::string refusal(const std::vector<uint8_t>& bytes, const isa::IsaDescription& isa) {
  try {
    partition::parsePackage(bytes.data(), bytes.size(), isa, "m.pkg");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Package, LoadedPackageRunsBitExact) {
  for (unsigned seed : {2u, 7u, 11u}) {
    Partitioned p(seed);
    const std::vector<uint8_t> bytes = partition::packageBytes(p.plan, refIsa());
    EXPECT_EQ(partition::packageBytes(p.plan, refIsa()), bytes) << "not reproducible";
    Plan loaded = partition::parsePackage(bytes.data(), bytes.size(), refIsa(), "m.pkg");
    EXPECT_EQ(partition::formatPlacementReport(loaded), partition::formatPlacementReport(p.plan));
    const Function& f = *p.ch.g.f;
    std::mt19937 rng(seed);
    std::map<std::string, std::vector<int8_t>> codes;
    std::vector<int8_t> x(size_t(f.inputs()[0]->resultType().size()));
    for (auto& v : x)
      v = static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
    codes["x"] = x;
    partition::PlanExecutor ex(loaded, simRunner(refIsa()));
    EXPECT_EQ(mismatches(outputCodes(f, ex.run(floatFeeds(f, codes))).at("y"),
                         interpret(f, codes).at("y")),
              0u)
        << "seed " << seed;
  }
}

TEST(Package, CorruptStaleTruncatedAndForeignPackagesAreRefused) {
  Partitioned p(7);
  const std::vector<uint8_t> good = partition::packageBytes(p.plan, refIsa());
  ASSERT_EQ(refusal(good, refIsa()), "");
  // Another description.
  EXPECT_NE(refusal(good, largeIsa()).find("built for another NPU description"), std::string::npos);
  // A stale format version (the header CRC is recomputed so that only the version differs).
  isa::Package pkg = isa::parsePackage(good.data(), good.size(), "m.pkg");
  std::vector<uint8_t> stale = good;
  stale[8] = 2;
  EXPECT_NE(refusal(stale, refIsa()).find("package format version 2, this Ember reads 1"),
            std::string::npos)
      << refusal(stale, refIsa());
  // One flipped byte anywhere in an entry's data, in the header, in the table.
  const isa::PackageEntry* manifest = pkg.find("manifest.json");
  ASSERT_NE(manifest, nullptr);
  for (size_t at : {size_t(20), size_t(60), good.size() - 3, good.size() / 2}) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x10;
    const std::string why = refusal(bad, refIsa());
    EXPECT_NE(why, "") << "flip at " << at << " accepted";
    EXPECT_NE(why.find("m.pkg"), std::string::npos) << why;
  }
  // Truncated.
  for (size_t len : {size_t(4), size_t(40), good.size() - 1}) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + long(len));
    EXPECT_NE(refusal(cut, refIsa()), "") << len;
  }
  // A package without a manifest.
  isa::Package noManifest = pkg;
  noManifest.entries.erase(noManifest.entries.begin());
  EXPECT_NE(refusal(isa::serializePackage(noManifest), refIsa()).find("no manifest.json"),
            std::string::npos);
  // A manifest naming a segment entry that is not there.
  isa::Package missing = pkg;
  missing.entries.pop_back();
  EXPECT_NE(refusal(isa::serializePackage(missing), refIsa()).find("has no entry"),
            std::string::npos);
}

/// A system of unequal devices (docs/package.md): an NPU segment compiled for
/// ember-v1-large in an ember-v1 package names its description in the manifest, is
/// refused without that description (naming segment, description and --system), and with
/// it loads, carries it, and runs bit-exact; a single-description package names none.
TEST(Package, SegmentOfAnotherDescriptionNeedsIt) {
  Partitioned p(2), large(2, largeIsa());
  const std::vector<uint8_t> single = partition::packageBytes(p.plan, refIsa());
  EXPECT_EQ(std::string(single.begin(), single.end()).find("isa_hash"), std::string::npos);
  size_t last = 0;
  for (size_t s = 0; s < p.plan.segments.size(); ++s)
    if (p.plan.segments[s].npu)
      last = s;
  ASSERT_TRUE(large.plan.segments.at(last).npu);
  p.plan.segments[last].npu = large.plan.segments[last].npu;
  p.plan.segments[last].isa = std::make_shared<const isa::IsaDescription>(largeIsa());
  const std::vector<uint8_t> bytes = partition::packageBytes(p.plan, refIsa());
  EXPECT_EQ(partition::packageBytes(p.plan, refIsa()), bytes) << "not reproducible";
  const std::string n = std::to_string(last);
  const std::string why = refusal(bytes, refIsa());
  EXPECT_NE(why.find("m.pkg:manifest.json: /segments/" + n + "/isa_hash: segment seg" + n +
                     ".elf is built for NPU description 'ember-v1-large' (hash " +
                     isa::toHex(largeIsa().hash()).substr(0, 16) + "...), not 'ember-v1'"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("ember-run PKG --system SYS.json --requests N"), std::string::npos) << why;
  Plan loaded =
      partition::parsePackage(bytes.data(), bytes.size(), refIsa(), "m.pkg", {largeIsa()});
  for (size_t s = 0; s < loaded.segments.size(); ++s)
    if (s == last)
      EXPECT_TRUE(loaded.segments[s].isa && loaded.segments[s].isa->hash() == largeIsa().hash());
    else
      EXPECT_EQ(loaded.segments[s].isa, nullptr) << s;
  partition::NpuRunner ref = simRunner(refIsa()), big = simRunner(largeIsa());
  partition::PlanExecutor ex(
      loaded, [&](const partition::Segment& s, const TensorMap& in, partition::SegmentRun& run) {
        return (s.isa ? big : ref)(s, in, run);
      });
  const Function& f = *p.ch.g.f;
  const auto codes = randomCodes(f, 5);
  EXPECT_EQ(
      mismatches(outputCodes(f, ex.run(floatFeeds(f, codes))).at("y"), interpret(f, codes).at("y")),
      0u);
}

/// The package with its manifest edited by `edit` (the container's CRCs recomputed, so
/// only the manifest's own checks can refuse it).
std::vector<uint8_t> withManifest(const std::vector<uint8_t>& good,
                                  const std::function<void(nlohmann::json&)>& edit) {
  isa::Package pkg = isa::parsePackage(good.data(), good.size(), "m.pkg");
  for (isa::PackageEntry& e : pkg.entries)
    if (e.name == "manifest.json") {
      nlohmann::json m = nlohmann::json::parse(e.data.begin(), e.data.end());
      edit(m);
      const std::string text = m.dump();
      e.data.assign(text.begin(), text.end());
    }
  return isa::serializePackage(pkg);
}

/// A manifest with no outputs, an output or input named twice is refused, naming the
/// JSON path (issue 47, item 5): such a package used to run and write wrong files.
TEST(Package, ManifestsWithoutOrWithRepeatedNamesAreRefused) {
  Partitioned p(7);
  const std::vector<uint8_t> good = partition::packageBytes(p.plan, refIsa());
  ASSERT_EQ(refusal(withManifest(good, [](nlohmann::json&) {}), refIsa()), "");
  std::string why =
      refusal(withManifest(good, [](nlohmann::json& m) { m["outputs"] = nlohmann::json::array(); }),
              refIsa());
  EXPECT_NE(why.find("m.pkg:manifest.json: /outputs: the package has no outputs"),
            std::string::npos)
      << why;
  why = refusal(
      withManifest(good, [](nlohmann::json& m) { m["outputs"].push_back(m["outputs"][0]); }),
      refIsa());
  EXPECT_NE(why.find("/outputs/1/name: output 'y' is named twice (also /outputs/0)"),
            std::string::npos)
      << why;
  why =
      refusal(withManifest(good, [](nlohmann::json& m) { m["inputs"].push_back(m["inputs"][0]); }),
              refIsa());
  EXPECT_NE(why.find("/inputs/1/name: input"), std::string::npos) << why;
  EXPECT_NE(why.find("is named twice (also /inputs/0)"), std::string::npos) << why;
  // Rates of the end-to-end estimate that are not positive.
  why =
      refusal(withManifest(
                  good, [](nlohmann::json& m) { m["estimate_rates"]["host_macs_per_second"] = 0; }),
              refIsa());
  EXPECT_NE(why.find("/estimate_rates/host_macs_per_second: not a positive rate"),
            std::string::npos)
      << why;
}

/// A manifest of another version (or none) is refused, naming /version; it used to be
/// ignored (tests/robustness/campaign.py: exit 0 with "version": 2, 0 or "1").
TEST(Package, ManifestOfAnotherVersionIsRefused) {
  Partitioned p(7);
  const std::vector<uint8_t> good = partition::packageBytes(p.plan, refIsa());
  ASSERT_EQ(refusal(withManifest(good, [](nlohmann::json&) {}), refIsa()), "");
  std::string why =
      refusal(withManifest(good, [](nlohmann::json& m) { m["version"] = 2; }), refIsa());
  EXPECT_NE(why.find("m.pkg:manifest.json: /version: manifest version 2, this Ember reads 1"),
            std::string::npos)
      << why;
  why = refusal(withManifest(good, [](nlohmann::json& m) { m["version"] = "1"; }), refIsa());
  EXPECT_NE(why.find("/version: not an integer"), std::string::npos) << why;
  why = refusal(withManifest(good, [](nlohmann::json& m) { m.erase("version"); }), refIsa());
  EXPECT_NE(why.find("missing 'version'"), std::string::npos) << why;
}

/// Issue 47 item 9: a manifest that is not JSON, or not an object, is refused with the
/// package, the entry, the place (line and column, or the JSON pointer) and the reason;
/// nlohmann::json's own text ("[json.exception.parse_error.101] ...") never shows.
TEST(Package, MalformedManifestMessagesNameThePlace) {
  Partitioned p(7);
  const std::vector<uint8_t> good = partition::packageBytes(p.plan, refIsa());
  auto withText = [&](const std::function<std::string(const std::string&)>& edit) {
    isa::Package pkg = isa::parsePackage(good.data(), good.size(), "m.pkg");
    for (isa::PackageEntry& e : pkg.entries)
      if (e.name == "manifest.json") {
        const std::string text = edit(std::string(e.data.begin(), e.data.end()));
        e.data.assign(text.begin(), text.end());
      }
    return isa::serializePackage(pkg);
  };
  const std::function<std::string(const std::string&)> edits[] = {
      [](const std::string& t) { return t.substr(0, t.size() / 2); },
      [](const std::string& t) { return t + "}"; },
      [](const std::string& t) { return "\n\n  [" + t; },
      [](const std::string& t) { return std::string(t).insert(1, "\"bad\xff\": 1,"); }};
  for (const auto& edit : edits) {
    const std::string why = refusal(withText(edit), refIsa());
    EXPECT_EQ(why.rfind("m.pkg:manifest.json: line ", 0), 0u) << why;
    EXPECT_NE(why.find(", column "), std::string::npos) << why;
    EXPECT_NE(why.find(": not valid JSON: "), std::string::npos) << why;
    EXPECT_EQ(why.find("json.exception"), std::string::npos) << why;
  }
  const std::string why = refusal(withText([](const std::string&) { return "[1]"; }), refIsa());
  EXPECT_EQ(why, "m.pkg:manifest.json: /: not a JSON object") << why;
}

TEST(Package, FunctionBytesRoundTrip) {
  Partitioned p(11);
  for (const auto& s : p.plan.segments) {
    if (!s.function)
      continue;
    const std::vector<uint8_t> a = serializeFunction(*s.function);
    std::unique_ptr<Module> m = deserializeFunction(a.data(), a.size(), "seg.graph");
    EXPECT_EQ(serializeFunction(*m->functions().front()), a);
  }
  // Malformed: the message names the JSON path.
  const std::vector<uint8_t> a = serializeFunction(*p.ch.g.f);
  std::string text(a.begin() + 16, a.end());
  const size_t kind = text.find("\"kind\":\"QuantizeLinear\"");
  ASSERT_NE(kind, std::string::npos);
  text.replace(kind, 23, "\"kind\":\"QuantizeLinaer\"");
  std::vector<uint8_t> bad(a.begin(), a.begin() + 16);
  bad.insert(bad.end(), text.begin(), text.end());
  try {
    deserializeFunction(bad.data(), bad.size(), "seg.graph");
    ADD_FAILURE() << "an unknown kind was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("seg.graph: /nodes/"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'QuantizeLinaer' is not an operator kind"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace ember::npu::test
