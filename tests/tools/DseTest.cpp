// Tests of ember-dse's design space and outputs (runtime/session/dse). Expected values are
// worked out by hand from the rules of docs/extending-isa.md section 2 (row sizes, address
// widths) and from made-up points, never taken from the code under test.
#include "ember/session/dse/Area.h"
#include "ember/session/dse/Report.h"
#include "ember/session/dse/Space.h"
#include "ember/session/dse/Sweep.h"

#include "ember/isa/description.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

using namespace ember;
using namespace ember::dse;
using nlohmann::json;

namespace {

json baseJson() {
  return isa::IsaDescription::loadFile(EMBER_SOURCE_DIR "/isa/ember-v1.json").json();
}

isa::IsaDescription load(const json& d) {
  return isa::IsaDescription::loadString(d.dump(), "test.json");
}

/// The error the validator gives `d` ("" when it is valid).
std::string refusal(const json& d) {
  try {
    (void)load(d);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

std::string usageMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

} // namespace

TEST(DsePareto, MarksTheKnownFront) {
  // (cycles, energy): A(1,10) B(2,5) C(3,3) D(4,4) E(2,8) F(5,1) G(3,3) H(6,6).
  // Dominated: D by C, E by B, H by C; C and G are equal (both on the front).
  const std::vector<std::pair<double, double>> pts = {{1, 10}, {2, 5}, {3, 3}, {4, 4},
                                                      {2, 8},  {5, 1}, {3, 3}, {6, 6}};
  const std::vector<bool> want = {true, true, true, false, false, true, true, false};
  EXPECT_EQ(paretoFront(pts), want);
  EXPECT_EQ(paretoFront({}), std::vector<bool>{});
  EXPECT_EQ(paretoFront({{7, 7}}), std::vector<bool>{true});
  // Same cycles, less energy dominates; same energy, fewer cycles dominates.
  EXPECT_EQ(paretoFront({{5, 2}, {5, 3}, {4, 3}}), (std::vector<bool>{true, false, true}));
}

TEST(DsePareto, PerModelAndOnlyOkRows) {
  std::vector<Result> rows(5);
  const std::pair<const char*, std::pair<std::uint64_t, double>> v[] = {
      {"a", {100, 9}}, {"a", {200, 4}}, {"a", {300, 5}}, {"b", {300, 5}}, {"a", {50, 1}}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].point = i;
    rows[i].model = v[i].first;
    rows[i].cycles = v[i].second.first;
    rows[i].energyUj = v[i].second.second;
  }
  rows[4].status = Status::Fault; // would dominate everything of model a if it counted
  markPareto(rows);
  EXPECT_TRUE(rows[0].pareto);
  EXPECT_TRUE(rows[1].pareto);
  EXPECT_FALSE(rows[2].pareto); // (300, 5) is dominated by (200, 4)
  EXPECT_TRUE(rows[3].pareto);  // alone for model b
  EXPECT_FALSE(rows[4].pareto);
}

TEST(DseAxes, ParsesAndRefusesWithTheArgumentNamed) {
  const Axis a = parseAxis("array=8,16,32");
  EXPECT_EQ(a.name, "array");
  EXPECT_EQ(a.values, (std::vector<std::string>{"8", "16", "32"}));
  const Axis p = parseAxis("/hardware/dma/latency_cycles=50,100");
  EXPECT_EQ(p.name, "/hardware/dma/latency_cycles");
  EXPECT_EQ(p.values.size(), 2u);
  EXPECT_NE(usageMessage([] { parseAxis("frobnicate=1"); }).find("unknown axis 'frobnicate'"),
            std::string::npos);
  EXPECT_NE(usageMessage([] { parseAxis("act_kib=64,lots"); }).find("got 'lots'"),
            std::string::npos);
  EXPECT_NE(usageMessage([] { parseAxis("array"); }).find("--axis 'array'"), std::string::npos);
  EXPECT_NE(usageMessage([] { parseAxis("array=8,,16"); }).find("empty value"), std::string::npos);
  EXPECT_NE(usageMessage([] {
              applySettings(baseJson(), {{"/hardware/nope", "1"}});
            }).find("no value at /hardware/nope"),
            std::string::npos);
}

TEST(DseAxes, CrossProductFirstAxisSlowest) {
  const auto pts = crossProduct({parseAxis("array=8,16"), parseAxis("act_kib=64,128,256")});
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(pts[0], (Settings{{"array", "8"}, {"act_kib", "64"}}));
  EXPECT_EQ(pts[2], (Settings{{"array", "8"}, {"act_kib", "256"}}));
  EXPECT_EQ(pts[3], (Settings{{"array", "16"}, {"act_kib", "64"}}));
  EXPECT_EQ(crossProduct({}).size(), 1u);
}

// Issue 47 item 7: --axis array=8,16 --axis array=32 ran and labelled its rows 8 and 16
// while every point had array=32. An axis given twice, or two axes writing one field, is
// refused naming both.
TEST(DseAxes, AnAxisGivenTwiceIsRefusedNamingBoth) {
  const std::string twice = usageMessage([] {
    crossProduct({parseAxis("array=8,16"), parseAxis("array=32")});
  });
  EXPECT_NE(twice.find("--axis 'array=32'"), std::string::npos) << twice;
  EXPECT_NE(twice.find("axis 'array' is given twice (also --axis 'array=8,16')"), std::string::npos)
      << twice;
  EXPECT_NE(twice.find("--axis array=8,16,32"), std::string::npos) << twice;
  // Settings made elsewhere (ember.dse_search's trials) are checked where they are applied.
  EXPECT_NE(usageMessage([] {
              applySettings(baseJson(), {{"array", "8"}, {"act_kib", "64"}, {"array", "32"}});
            }).find("axis 'array' is given twice (values '8' and '32')"),
            std::string::npos);
  // Different axes that write one field: the convenience axis and the pointer under it.
  const std::string rows = usageMessage([] {
    applySettings(baseJson(), {{"array", "8"}, {"/hardware/mac_array/rows", "32"}});
  });
  EXPECT_NE(rows.find("--axis /hardware/mac_array/rows: sets /hardware/mac_array/rows, which "
                      "--axis array sets too"),
            std::string::npos)
      << rows;
  EXPECT_NE(usageMessage([] {
              applySettings(baseJson(), {{"/hardware/dma", "{}"}, {"burst_bytes", "64"}});
            }).find("which --axis /hardware/dma sets too"),
            std::string::npos);
  EXPECT_NE(usageMessage([] {
              applySettings(baseJson(), {{"act_kib", "64"}, {"/hardware/memories/act", "{}"}});
            }).find("--axis act_kib sets too (/hardware/memories/act/size_bytes)"),
            std::string::npos);
  // Axes on different fields still combine.
  EXPECT_EQ(
      crossProduct({parseAxis("array=8,16"), parseAxis("/hardware/dma/burst_bytes=64")}).size(),
      2u);
  EXPECT_NO_THROW(applySettings(
      baseJson(), {{"array", "8"}, {"act_kib", "64"}, {"/hardware/dma/burst_bytes", "64"}}));
}

TEST(DseAxes, ArrayKeepsTheDescriptionConsistent) {
  const json d = applySettings(baseJson(), {{"array", "32"}});
  const isa::IsaDescription isa = load(d);
  EXPECT_EQ(isa.hw().mac.rows, 32u);
  EXPECT_EQ(isa.hw().mac.cols, 32u);
  EXPECT_EQ(isa.hw().vector.lanes, 32u);
  EXPECT_EQ(isa.memory("act").row_bytes, 32u);      // one row: L int8 channels
  EXPECT_EQ(isa.memory("weight").row_bytes, 1024u); // one L x L block
  EXPECT_EQ(isa.memory("acc").row_bytes, 128u);     // L int32
  EXPECT_EQ(isa.memory("param").row_bytes, 128u);
}

TEST(DseAxes, BigSramsWidenAddressFieldsAndTheWord) {
  // 4 MiB of 16-byte act rows = 262144 rows: act addresses need 18 bits (14 in the base).
  const json d = applySettings(baseJson(), {{"act_kib", "4096"}, {"weight_kib", "4096"}});
  const isa::IsaDescription isa = load(d);
  const isa::InstrDesc* gemm = nullptr;
  for (const auto& in : isa.instructions())
    if (in.name == "gemm")
      gemm = &in;
  ASSERT_NE(gemm, nullptr);
  EXPECT_GE(gemm->field("act_addr")->bits.width, 18u);
  // The strides through act grew by as much as its address (12 -> 16).
  EXPECT_EQ(gemm->field("act_s1")->bits.width, 16u);
  // An unchanged description is left alone.
  EXPECT_EQ(applySettings(baseJson(), {}), baseJson());
}

TEST(DseAxes, InvalidValuesAreTheValidatorsToName) {
  const json d = applySettings(baseJson(), {{"act_kib", "3"}});
  EXPECT_NE(refusal(d).find("/hardware/memories/act/size_bytes"), std::string::npos) << refusal(d);
  const json p = applySettings(baseJson(), {{"/hardware/dma/burst_bytes", "48"}});
  EXPECT_NE(refusal(p).find("/hardware/dma/burst_bytes"), std::string::npos) << refusal(p);
}

TEST(DseRandom, DrawsValidDeterministicAndVariedDescriptions) {
  const json base = baseJson();
  std::set<std::string> arrays, words, dumps;
  for (std::uint64_t i = 0; i < 40; ++i) {
    Settings s1, s2;
    unsigned r1 = 0, r2 = 0;
    const json a = drawValid(base, mixSeed(5, i), RandomRanges{}, s1, r1);
    const json b = drawValid(base, mixSeed(5, i), RandomRanges{}, s2, r2);
    EXPECT_EQ(a, b);
    EXPECT_EQ(s1, s2);
    EXPECT_EQ(refusal(a), "");
    const isa::IsaDescription isa = load(a);
    EXPECT_GE(isa.hw().mac.rows, 4u);
    EXPECT_LE(isa.hw().mac.rows, 64u);
    arrays.insert(std::to_string(isa.hw().mac.rows));
    words.insert(std::to_string(isa.instructionBytes()));
    dumps.insert(a.dump());
  }
  EXPECT_EQ(dumps.size(), 40u);
  EXPECT_GE(arrays.size(), 3u);
  EXPECT_GE(words.size(), 2u);
}

TEST(DseRandom, RespectsTheRanges) {
  RandomRanges r;
  r.minArray = 8;
  r.maxArray = 16;
  r.minBytes["weight"] = 512 * 1024;
  r.maxBytes = 1 << 20;
  for (std::uint64_t i = 0; i < 20; ++i) {
    Settings s;
    unsigned redraws = 0;
    const isa::IsaDescription isa = load(drawValid(baseJson(), mixSeed(9, i), r, s, redraws));
    EXPECT_GE(isa.hw().mac.rows, 8u);
    EXPECT_LE(isa.hw().mac.rows, 16u);
    EXPECT_GE(isa.memory("weight").size_bytes, 512u * 1024);
    for (const char* m : {"act", "weight", "acc", "param"})
      EXPECT_LE(isa.memory(m).size_bytes, 1u << 20);
  }
}

// A model that needs acc >= 4x and act >= 2x the description's: the search grows every
// SRAM to 4x, then halves each back while the (made-up) model still compiles; every
// description it asks about is valid. One that no size makes compile: nothing.
TEST(DseGrow, FindsTheSmallestSizesThatCompile) {
  json d = baseJson();
  d["hardware"]["memories"]["act"]["size_bytes"] = 1024;
  d["hardware"]["memories"]["acc"]["size_bytes"] = 512;
  conformDescription(d);
  ASSERT_EQ(refusal(d), "");
  std::size_t asked = 0;
  auto needs = [&](const json& g) {
    ++asked;
    EXPECT_EQ(refusal(g), "");
    const auto& m = g["hardware"]["memories"];
    return m["acc"]["size_bytes"].get<std::uint64_t>() >= 2048 &&
           m["act"]["size_bytes"].get<std::uint64_t>() >= 2048;
  };
  const std::vector<GrownSram> g = grownSramSizes(d, needs);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].name, "acc");
  EXPECT_EQ(g[0].bytes, 2048u);
  EXPECT_EQ(g[0].had, 512u);
  EXPECT_EQ(g[1].name, "act");
  EXPECT_EQ(g[1].bytes, 2048u);
  EXPECT_EQ(g[1].had, 1024u);
  EXPECT_EQ(formatGrown(g), "acc 2 KiB (has 512 B), act 2 KiB (has 1 KiB)");
  // x2 fails, x4 compiles; then (in key order) acc's first halving fails, act's second,
  // and param and weight halve twice back to their own sizes.
  EXPECT_EQ(asked, 2u + 1 + 2 + 2 + 2);
  EXPECT_TRUE(grownSramSizes(d, [](const json&) { return false; }).empty());
}

TEST(DseReport, CsvQuotesAndNamesEveryColumn) {
  SweepData d;
  Point p;
  p.index = 0;
  p.settings = {{"array", "8"}};
  p.file = "out/descriptions/p0.json";
  d.points.push_back(p);
  Result ok;
  ok.model = "m";
  ok.cycles = 1234;
  ok.energyUj = 2.5;
  ok.macUtilization = 0.5;
  ok.sram = {{"act", 512, 1024}};
  Result bad;
  bad.model = "n";
  bad.status = Status::Invalid;
  bad.message = "p0.json: /hardware/x: a, \"quoted\" reason";
  d.rows = {ok, bad};
  d.columns = settingColumns(d.points);
  const std::string csv = toCsv(d);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,array,model,status,cycles,npu_us,energy_uj,mac_utilization,"
            "sram_act_peak_bytes,sram_act_bytes,sram_peak_max_pct,pareto,host_seconds,"
            "description,message");
  EXPECT_NE(csv.find("0,8,m,ok,1234,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",512,1024,50.0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\"p0.json: /hardware/x: a, \"\"quoted\"\" reason\""), std::string::npos)
      << csv;
  const std::string html = toHtml(d);
  // Self-contained: the only URLs are the SVG namespace of each chart.
  auto count = [&html](const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_GE(count("<svg "), 1u);
  EXPECT_EQ(count("http"), count("xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_NE(html.find("&quot;quoted&quot;"), std::string::npos);
}

TEST(DseReport, ShortMessagesKeepTheFirstLines) {
  EXPECT_EQ(shortMessage("one line"), "one line");
  EXPECT_EQ(shortMessage("a\nb\nc", 4), "a\nb\nc");
  EXPECT_EQ(shortMessage("a\nb\nc\nd\ne\nf", 2), "a\nb\n  (4 more lines)");
  EXPECT_EQ(shortMessage("a\nb\nc", 2), "a\nb\n  (1 more line)");
}

TEST(DseSweep, RowsSurviveTheTripFromChildToParent) {
  // A child process writes its rows as JSON; the parent reads them back.
  for (Status s : {Status::Ok, Status::Invalid, Status::Unsupported, Status::CompileError,
                   Status::Fault, Status::RunError, Status::Mismatch, Status::Crash}) {
    Result r;
    r.point = 7;
    r.model = "resnet18";
    r.status = s;
    r.message = "line 1\nline 2";
    r.cycles = 123456789012ull;
    r.npuSeconds = 0.25;
    r.energyUj = 1.5;
    r.macUtilization = 0.75;
    r.sram = {{"act", 1024, 4096}, {"acc", 64, 128}};
    r.hostSeconds = 2.5;
    const Result back = resultFromJson(nlohmann::json::parse(toJson(r).dump()));
    EXPECT_EQ(back.point, 7u);
    EXPECT_EQ(back.model, "resnet18");
    EXPECT_EQ(back.status, s) << statusName(s);
    EXPECT_EQ(back.message, "line 1\nline 2");
    EXPECT_EQ(back.cycles, 123456789012ull);
    EXPECT_EQ(back.npuSeconds, 0.25);
    EXPECT_EQ(back.energyUj, 1.5);
    EXPECT_EQ(back.macUtilization, 0.75);
    ASSERT_EQ(back.sram.size(), 2u);
    EXPECT_EQ(back.sram[1].name, "acc");
    EXPECT_EQ(back.sram[1].peakBytes, 64u);
    EXPECT_EQ(back.sram[1].sizeBytes, 128u);
    EXPECT_EQ(back.hostSeconds, 2.5);
  }
}

TEST(DsePareto, ThreeAxes) {
  // (cycles, logic, SRAM): A(1,9,9) B(9,1,9) C(9,9,1) D(5,5,5) E(6,5,5) F(5,5,5) G(9,9,9).
  // E is dominated by D (and F), G by every other; D and F are equal (both on the front).
  const std::vector<std::vector<double>> pts = {{1, 9, 9}, {9, 1, 9}, {9, 9, 1}, {5, 5, 5},
                                                {6, 5, 5}, {5, 5, 5}, {9, 9, 9}};
  const std::vector<bool> want = {true, true, true, true, false, true, false};
  EXPECT_EQ(paretoFrontN(pts), want);
}

TEST(DseArea, FrontOfCyclesLogicAndSram) {
  // Points 0..3 of model m: (cycles; cells + flip-flops; SRAM bits).
  // p0 (100; 50+50; 1000), p1 (80; 150+50; 1000), p2 (100; 90+20; 1000): dominated by p0,
  // p3 (90; 40+10; 4000): SRAM costs more, on the front; p4 failed synthesis: no area.
  std::vector<PointArea> area(5);
  const std::uint64_t v[][3] = {{50, 50, 1000}, {150, 50, 1000}, {90, 20, 1000}, {40, 10, 4000}};
  for (std::size_t i = 0; i < 4; ++i) {
    area[i].state = PointArea::State::Ok;
    area[i].cells = v[i][0];
    area[i].flipFlops = v[i][1];
    area[i].sramBits = v[i][2];
  }
  area[4].state = PointArea::State::Failed;
  std::vector<Result> rows(5);
  const std::uint64_t cycles[] = {100, 80, 100, 90, 10};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].point = i;
    rows[i].model = "m";
    rows[i].cycles = cycles[i];
  }
  markAreaPareto(rows, area);
  EXPECT_TRUE(rows[0].paretoArea);
  EXPECT_TRUE(rows[1].paretoArea);
  EXPECT_FALSE(rows[2].paretoArea);
  EXPECT_TRUE(rows[3].paretoArea);
  EXPECT_FALSE(rows[4].paretoArea); // the fastest, but with no area figure

  SweepData d;
  for (std::size_t i = 0; i < 5; ++i) {
    Point p;
    p.index = i;
    d.points.push_back(p);
  }
  d.rows = rows;
  d.area = area;
  d.area[4].message = "synthesis failed: ERROR: boom";
  const std::string csv = toCsv(d);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "point,model,status,cycles,npu_us,energy_uj,mac_utilization,sram_peak_max_pct,"
            "area_status,npu_cells,npu_flip_flops,sram_bits,area_pareto,area_seconds,area_cached,"
            "pareto,host_seconds,description,message,area_message");
  EXPECT_NE(csv.find(",ok,50,50,1000,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",ok,90,20,1000,0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",failed,,,,0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("synthesis failed: ERROR: boom"), std::string::npos) << csv;
  EXPECT_NE(formatTable(d).find("point 4 area: failed: synthesis failed: ERROR: boom"),
            std::string::npos);
  const std::string html = toHtml(d);
  EXPECT_NE(html.find("NPU logic cells"), std::string::npos);
  EXPECT_NE(html.find("area: synthesis failed: ERROR: boom"), std::string::npos);
  // Without --area nothing changes: no area column.
  d.area.clear();
  EXPECT_EQ(toCsv(d).find("npu_cells"), std::string::npos);
  EXPECT_EQ(toHtml(d).find("NPU logic cells"), std::string::npos);
}

TEST(DseArea, KeyFollowsTheRtlNotTheLayout) {
  AreaTools tools;
  tools.flowDigest = "flow-1";
  const json base = baseJson();
  const std::string key = areaKey(base, "a.json", tools);
  EXPECT_EQ(key.size(), 64u);
  // The same description written with other spacing and member order, from another file.
  const json same = json::parse(base.dump(4));
  EXPECT_EQ(areaKey(same, "b.json", tools), key);
  EXPECT_NE(areaKey(applySettings(base, {{"array", "8"}}), "a.json", tools), key);
  EXPECT_NE(areaKey(applySettings(base, {{"act_kib", "128"}}), "a.json", tools), key);
  AreaTools other = tools;
  other.flowDigest = "flow-2"; // another Yosys, area.py or RTL source
  EXPECT_NE(areaKey(base, "a.json", other), key);
}

namespace {

/// A stand-in for area.py (run by /bin/sh): counts its runs in `count`, fails when its
/// "Yosys" is `fail`, else writes fixed figures (100 cells, 10 flip-flops, 8,208 bits).
AreaTools fakeAreaTools(const std::filesystem::path& dir, const std::string& yosys) {
  const std::filesystem::path script = dir / "fake_area.sh";
  std::ofstream(script) << "echo run >> '" << (dir / "count").string() << "'\n"
                        << "if [ \"$1\" = fail ]; then echo 'ERROR: fake synthesis failure' >&2; "
                           "exit 1; fi\n"
                        << "printf '{\"p\": {\"sram_bits\": {\"act\": 8192, \"acc\": 16}, "
                           "\"npu\": {\"cells\": 100, \"flip_flops\": 10, \"seconds\": 0.5}}}' "
                           "> \"$2\"\n";
  AreaTools t;
  t.python = "/bin/sh";
  t.areaScript = script.string();
  t.yosys = yosys;
  t.flowDigest = "fake";
  t.cacheDir = (dir / ("cache-" + yosys)).string();
  return t;
}

std::size_t lines(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string l; std::getline(in, l);)
    ++n;
  return n;
}

} // namespace

TEST(DseArea, SynthesizesOncePerKeyCachesAndNamesFailures) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ember_dse_area_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const json base = baseJson();
  std::vector<Point> points(4);
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i].index = i;
    points[i].file = "p" + std::to_string(i) + ".json";
    points[i].description = i == 3 ? applySettings(base, {{"array", "8"}}) : base;
  }
  points[1].invalid = "p1.json: /hardware/x: bad"; // p0 and p2 are one description
  const AreaTools ok = fakeAreaTools(dir, "ok");
  std::vector<PointArea> a = synthesizeAreas(points, ok, 2, (dir / "scratch").string(), {});
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(lines(dir / "count"), 2u); // p0 (= p2) and p3
  for (std::size_t i : {0u, 2u, 3u}) {
    EXPECT_EQ(a[i].state, PointArea::State::Ok) << i << ": " << a[i].message;
    EXPECT_EQ(a[i].cells, 100u);
    EXPECT_EQ(a[i].flipFlops, 10u);
    EXPECT_EQ(a[i].sramBits, 8208u);
    EXPECT_FALSE(a[i].cached);
  }
  EXPECT_EQ(a[0].key, a[2].key);
  EXPECT_NE(a[0].key, a[3].key);
  EXPECT_EQ(a[1].state, PointArea::State::Skipped);
  EXPECT_NE(a[1].message.find("invalid"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "scratch" / "p0"));
  // Again: everything from the cache, no run.
  a = synthesizeAreas(points, ok, 2, (dir / "scratch").string(), {});
  EXPECT_EQ(lines(dir / "count"), 2u);
  for (std::size_t i : {0u, 2u, 3u}) {
    EXPECT_EQ(a[i].state, PointArea::State::Ok);
    EXPECT_TRUE(a[i].cached);
    EXPECT_EQ(a[i].cells, 100u);
  }
  // A failing synthesis: a per-point message with the tool's error, nothing cached.
  const AreaTools bad = fakeAreaTools(dir, "fail");
  a = synthesizeAreas(points, bad, 1, (dir / "scratch").string(), {});
  EXPECT_EQ(lines(dir / "count"), 4u);
  EXPECT_EQ(a[0].state, PointArea::State::Failed);
  EXPECT_NE(a[0].message.find("ERROR: fake synthesis failure"), std::string::npos) << a[0].message;
  EXPECT_EQ(a[2].state, PointArea::State::Failed);
  EXPECT_FALSE(std::filesystem::exists(bad.cacheDir) && !std::filesystem::is_empty(bad.cacheDir));
  std::filesystem::remove_all(dir);
}

// A worker's record (ember-dse --area on Dask) reads back as the area it was made from,
// and a record missing a field is refused naming it.
TEST(DseArea, WorkerRecordsReadBack) {
  PointArea a;
  a.state = PointArea::State::Ok;
  a.cells = 1234;
  a.flipFlops = 56;
  a.sramBits = 7890;
  a.seconds = 1.5;
  a.cached = true;
  a.key = "k1";
  a.detail = {{"npu", {{"cells", 1234}}}};
  const PointArea b = areaFromJson(toJson(a));
  EXPECT_EQ(b.state, PointArea::State::Ok);
  EXPECT_EQ(b.cells, 1234u);
  EXPECT_EQ(b.flipFlops, 56u);
  EXPECT_EQ(b.sramBits, 7890u);
  EXPECT_EQ(b.seconds, 1.5);
  EXPECT_TRUE(b.cached);
  EXPECT_EQ(b.key, "k1");
  EXPECT_EQ(b.detail, a.detail);
  a.state = PointArea::State::Failed;
  a.message = "Yosys not found";
  EXPECT_EQ(areaFromJson(toJson(a)).state, PointArea::State::Failed);
  EXPECT_EQ(areaFromJson(toJson(a)).message, "Yosys not found");
  EXPECT_EQ(areaFromJson(toJson(skippedArea())).state, PointArea::State::Skipped);
  json broken = toJson(a);
  broken.erase("flip_flops");
  try {
    (void)areaFromJson(broken);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("flip_flops"), std::string::npos) << e.what();
  }
}

TEST(DseArea, MissingYosysIsNamed) {
  AreaRequest r;
  r.yosys = "ember-no-such-yosys";
  try {
    (void)findAreaTools(r);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Yosys not found: no 'ember-no-such-yosys' on PATH"),
              std::string::npos)
        << e.what();
  }
  r.yosys = "/nonexistent/yosys";
  try {
    (void)findAreaTools(r);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/yosys is not an executable"),
              std::string::npos)
        << e.what();
  }
}
