// Tests of ember-run's helpers; expected values worked out by hand.
#include "ember/session/RunUtil.h"
#include "ember/session/Compare.h"
#include "ember/session/Devices.h"

#include "ember/support/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::session;
using namespace ember::session;

TEST(RunUtil, SanitizesOutputNames) {
  EXPECT_EQ(sanitizeOutputName("output"), "output");
  EXPECT_EQ(sanitizeOutputName("a-b_c.d9"), "a-b_c.d9");
  EXPECT_EQ(sanitizeOutputName("onnx::Gemm/out:0"), "onnx__Gemm_out_0");
  EXPECT_EQ(sanitizeOutputName("../../etc/passwd"), ".._.._etc_passwd");
  EXPECT_EQ(sanitizeOutputName("sp ace\t\xc3\xa9"), "sp_ace___");
  EXPECT_EQ(sanitizeOutputName(""), "_");
}

TEST(RunUtil, RandomInputsAreDeterministicAndInRange) {
  Type t(ElemKind::Float32, {4, 1000});
  Tensor a = randomTensor(t, 42, 0), b = randomTensor(t, 42, 0);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, randomTensor(t, 43, 0));
  EXPECT_NE(a, randomTensor(t, 42, 1));
  double lo = 1, hi = -1, sum = 0;
  for (float v : a.toVector<float>()) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    sum += v;
  }
  // 4000 uniform samples: the extremes are near +-1 and the mean near 0.
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
  EXPECT_LT(std::fabs(sum / 4000), 0.05);
  Tensor ints = randomTensor(Type(ElemKind::Int64, {100}), 1, 0);
  for (int64_t v : ints.toVector<int64_t>()) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 16);
  }
  Tensor flags = randomTensor(Type(ElemKind::Bool, {100}), 1, 0);
  int ones = 0;
  for (bool v : flags.toVector<bool>())
    ones += v;
  EXPECT_GT(ones, 20);
  EXPECT_LT(ones, 80);
}

TEST(RunUtil, TopKMedianAndDifferences) {
  Tensor t = Tensor::fromVector<float>({2, 3}, {0.5f, 3.f, -1.f, 3.f, 2.f, 0.f});
  auto top = topK(t, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].first, 1); // ties: lower index first
  EXPECT_EQ(top[1].first, 3);
  EXPECT_EQ(top[2].first, 4);
  EXPECT_EQ(top[2].second, 2.0);
  EXPECT_EQ(topK(t, 10).size(), 6u);

  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_EQ(median({}), 0);

  Tensor u = Tensor::fromVector<float>({2, 3}, {0.5f, 3.25f, -1.f, 3.f, 2.f, 0.f});
  EXPECT_DOUBLE_EQ(maxAbsDiff(t, u), 0.25);
  EXPECT_DOUBLE_EQ(maxAbs(t), 3.0);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(maxAbsDiff(t, t.reshaped({3, 2})), inf);
  EXPECT_EQ(maxAbsDiff(t, t.convertTo(ElemKind::Int32)), inf);
  Tensor n = Tensor::fromVector<float>({1}, {NAN});
  EXPECT_EQ(maxAbsDiff(n, Tensor::fromVector<float>({1}, {0.f})), inf);
  EXPECT_EQ(maxAbsDiff(n, n), 0.0);
}

TEST(RunUtil, SummaryNamesTypeAndRange) {
  Tensor t = Tensor::fromVector<float>({2, 2}, {1.f, -2.f, 4.f, 1.f});
  std::string s = summarize(t);
  EXPECT_NE(s.find("float32[2, 2]"), std::string::npos) << s;
  EXPECT_NE(s.find("min -2"), std::string::npos) << s;
  EXPECT_NE(s.find("max 4"), std::string::npos) << s;
  EXPECT_NE(s.find("mean 1"), std::string::npos) << s;
}

TEST(Devices, TableHasTheInterpreterAndTheNpuAndRejectsUnknownNames) {
  EXPECT_EQ(findDevice("interp").name, "interp");
  EXPECT_FALSE(findDevice("interp").int8Only);
  EXPECT_EQ(findDevice("sim").name, "sim");
  EXPECT_TRUE(findDevice("sim").int8Only);
  try {
    findDevice("tpu");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("interp"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sim"), std::string::npos) << e.what();
  }
}

// The cross-check's figures, hand-computed.
TEST(Compare, CosineAndTopOne) {
  Tensor a = Tensor::fromVector<float>({2, 3}, {1, 0, 0, 0, 2, 1});
  Tensor b = Tensor::fromVector<float>({2, 3}, {2, 0, 0, 0, 1, 2});
  // a.b = 2 + 2 + 2 = 6; |a| = sqrt(6), |b| = sqrt(9): 6 / sqrt(54).
  EXPECT_NEAR(cosineSimilarity(a, b), 6.0 / std::sqrt(54.0), 1e-12);
  EXPECT_DOUBLE_EQ(top1Agreement(a, b), 0.5); // row 0 agrees (0), row 1 does not (1 vs 2)
  Tensor z = Tensor::fromVector<float>({2, 3}, {0, 0, 0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(cosineSimilarity(z, z), 1.0);
  EXPECT_DOUBLE_EQ(cosineSimilarity(a, z), 0.0);
}

TEST(Compare, Int8MismatchIsListedAndFloatUsesTheTolerance) {
  DeviceOutputs ref{"interp", {}, 0.1, std::nullopt};
  ref.outputs.emplace("y", Tensor::fromVector<float>({2}, {1.0f, 2.0f}));
  DeviceOutputs same{"sim", {}, 0.2, std::nullopt};
  same.outputs.emplace("y", Tensor::fromVector<float>({2}, {1.0f, 2.0f}));
  DeviceOutputs near{"cpu", {}, 0.2, std::nullopt};
  near.outputs.emplace("y", Tensor::fromVector<float>({2}, {1.0f, 2.00001f}));
  EXPECT_TRUE(compareRuns({"y"}, {ref, same}, true, nullptr).mismatch.empty());
  CompareResult exact = compareRuns({"y"}, {ref, near}, true, nullptr);
  ASSERT_EQ(exact.mismatch.size(), 1u);
  EXPECT_EQ(exact.mismatch[0], "output 'y' on cpu");
  EXPECT_TRUE(compareRuns({"y"}, {ref, near}, false, nullptr).mismatch.empty());
}

// Issue 47 item 6: --compare sim,rtl compares the energy too. Two reports equal in every
// cycle and counter but not in energy disagree, naming the component; sums that differ
// only by rounding (a relative 1e-12) agree.
TEST(RunUtil, NpuReportsDisagreeOnEnergy) {
  platform::Report a;
  a.cycles = 100;
  a.energy = {{"mac_array", 250.0}, {"dram", 1000.0}, {"leakage", 100.0}};
  a.energy_total_pj = 1350.0;
  platform::Report b = a;
  EXPECT_EQ(compareNpuReports(a, "sim", b, "rtl"), "");
  b.energy[0].pj *= 1 + 1e-12;
  EXPECT_EQ(compareNpuReports(a, "sim", b, "rtl"), "");
  b.energy[1].pj = 0;
  EXPECT_EQ(compareNpuReports(a, "sim", b, "rtl"), "energy dram: sim 1000.0 pJ, rtl 0.0 pJ");
  b = a;
  b.energy_total_pj = 0;
  EXPECT_EQ(compareNpuReports(a, "sim", b, "rtl"), "energy total: sim 1350.0 pJ, rtl 0.0 pJ");
  b = a;
  b.energy.pop_back();
  EXPECT_NE(compareNpuReports(a, "sim", b, "rtl").find("energy leakage"), std::string::npos);
  // Two runs that fault alike still compare the energy of what retired before the fault.
  platform::Fault f;
  f.kind = platform::FaultKind::DramOutOfRange;
  f.cycle = 90;
  f.instruction = 3;
  a.fault = f;
  b = a;
  EXPECT_EQ(compareNpuReports(a, "sim", b, "rtl"), "");
  b.energy[0].pj = 0;
  EXPECT_EQ(compareNpuReports(a, "sim", b, "rtl"), "energy mac_array: sim 250.0 pJ, rtl 0.0 pJ");
  b = a;
  b.fault->cycle = 91;
  EXPECT_NE(compareNpuReports(a, "sim", b, "rtl").find("fault record"), std::string::npos);
}
