// Tests of ember-dse's design space and outputs (tools/ember-dse). Expected values are
// worked out by hand from the rules of docs/extending-isa.md section 2 (row sizes, address
// widths) and from made-up points, never taken from the code under test.
#include "Report.h"
#include "Space.h"
#include "Sweep.h"

#include "ember/isa/description.h"
#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <set>

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
