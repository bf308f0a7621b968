// Calibration profiles, range choice and calibration inputs (ember/quantization/Profile.h)
// against hand-computed histograms and ranges.
#include "ember/quantization/Profile.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <cmath>
#include <gtest/gtest.h>

#include <random>
#include <sys/stat.h>

using namespace ember;
using namespace ember::quant;

namespace {

std::string tempDir(const std::string& name) {
  const std::string d = std::string(EMBER_BINARY_DIR) + "/tests/compiler/quant/tmp_" + name;
  mkdir(d.c_str(), 0755);
  return d;
}

TEST(QuantProfile, HistogramRecordsAndRebins) {
  Profile p;
  p.record("t", Tensor::fromVector<float>({4}, {-1.f, 0.f, 0.5f, 1.f}));
  const TensorProfile* e = p.find("t");
  ASSERT_NE(e, nullptr);
  // Bins over [-1, 1] of width 2/2048: -1 -> 0, 0 -> 1024, 0.5 -> 1536, 1 -> 2047 (last).
  EXPECT_EQ(e->absMax, 1.f);
  EXPECT_EQ(e->histogram[0], 1u);
  EXPECT_EQ(e->histogram[1024], 1u);
  EXPECT_EQ(e->histogram[1536], 1u);
  EXPECT_EQ(e->histogram[2047], 1u);
  // A wider batch re-bins by bin centres onto [-2, 2]: -0.9995 -> 512, 0.0005 -> 1024,
  // 0.5005 -> 1280, 0.9995 -> 1535; the new 2 -> 2047. NaN and inf are ignored.
  p.record("t", Tensor::fromVector<float>({3}, {2.f, NAN, INFINITY}));
  e = p.find("t");
  EXPECT_EQ(e->absMax, 2.f);
  EXPECT_EQ(e->min, -1.f);
  EXPECT_EQ(e->max, 2.f);
  EXPECT_EQ(e->count, 5u);
  for (int b : {512, 1024, 1280, 1535, 2047})
    EXPECT_EQ(e->histogram[size_t(b)], 1u) << b;
  EXPECT_THROW(p.record("i", Tensor::fromVector<int64_t>({1}, {1})), Error);
}

TensorProfile spikeProfile() {
  // Bin width 1 over [-1024, 1024]: 9998 values in [0, 1), one outlier at each end.
  TensorProfile t;
  t.absMax = 1024;
  t.min = -1024;
  t.max = 1024;
  t.histogram.assign(Profile::kBins, 0);
  t.histogram[1024] = 9998;
  t.histogram[0] = 1;
  t.histogram[2047] = 1;
  t.count = 10000;
  return t;
}

TEST(QuantProfile, ChooseRange) {
  const TensorProfile t = spikeProfile();
  EXPECT_EQ(chooseRange(t, CalibrationMethod::MinMax), std::make_pair(-1024.f, 1024.f));
  // 99.9 %: 5 elements may go at each end: both outliers dropped, [0, 1) kept.
  EXPECT_EQ(chooseRange(t, CalibrationMethod::Percentile, 99.9), std::make_pair(0.f, 1.f));
  // 99.99 %: 0.5 element per end: nothing can go.
  EXPECT_EQ(chooseRange(t, CalibrationMethod::Percentile, 99.99), std::make_pair(-1024.f, 1024.f));
  EXPECT_THROW(chooseRange(t, CalibrationMethod::Percentile, 0.0), Error);
  // KL: a normal(0, 0.3) bulk with one outlier at 10 gets a threshold far inside (the
  // search starts at 128 of the 1024 folded bins, 1.25 here).
  Profile p;
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.f, 0.3f);
  std::vector<float> v(100000);
  for (float& x : v)
    x = normal(gen);
  v[0] = 10.f;
  p.record("n", Tensor::fromVector<float>({int64_t(v.size())}, v));
  const auto kl = chooseRange(*p.find("n"), CalibrationMethod::KL);
  EXPECT_GT(kl.second, 0.5f);
  EXPECT_LT(kl.second, 3.f);
  EXPECT_EQ(kl.first, std::max(p.find("n")->min, -kl.second));
  EXPECT_EQ(parseCalibrationMethod("kl"), CalibrationMethod::KL);
  EXPECT_THROW(parseCalibrationMethod("median"), Error);
}

TEST(QuantProfile, SaveLoadRoundTripAndErrors) {
  const std::string dir = tempDir("profile");
  Profile p;
  p.record("a", Tensor::fromVector<float>({3}, {-0.25f, 3.f, 1e-3f}));
  p.record("b:1", Tensor::fromVector<float>({1}, {7.f}));
  p.addRun();
  p.save(dir + "/p.json");
  Profile q = Profile::load(dir + "/p.json");
  EXPECT_EQ(q.runs(), 1);
  ASSERT_EQ(q.entries().size(), 2u);
  for (const auto& [name, e] : p.entries()) {
    const TensorProfile* f = q.find(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->min, e.min);
    EXPECT_EQ(f->max, e.max);
    EXPECT_EQ(f->absMax, e.absMax);
    EXPECT_EQ(f->count, e.count);
    EXPECT_EQ(f->histogram, e.histogram);
  }
  auto loadError = [&](const std::string& text) {
    writeFileAtomic(dir + "/bad.json", text);
    try {
      Profile::load(dir + "/bad.json");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(loadError("{").find("bad.json"), std::string::npos);
  std::string msg =
      loadError(R"({"format":"ember-profile","version":1,"bins":2048,"runs":1,"tensors":)"
                R"({"x":{"min":0,"max":1,"absmax":1,"count":1,"histogram":[1,2]}}})");
  EXPECT_NE(msg.find("bad.json: /tensors/x/histogram"), std::string::npos) << msg;
  msg = loadError(R"({"format":"ember-profile","version":1,"bins":2048,"runs":1,"tensors":)"
                  R"({"x":{"min":0,"absmax":1,"count":1,"histogram":[]}}})");
  EXPECT_NE(msg.find("/tensors/x/max"), std::string::npos) << msg;
  msg = loadError(R"({"format":"other"})");
  EXPECT_NE(msg.find("/format"), std::string::npos) << msg;
  EXPECT_THROW(Profile::load(dir + "/missing.json"), Error);
}

/// x [1, 3] float -> Relu -> out.
std::unique_ptr<Module> reluModel(ElemKind kind = ElemKind::Float32) {
  auto m = std::make_unique<Module>();
  Function* f = m->createFunction("main");
  Node* x = m->createPlaceholder("x", Type(kind, {1, 3}));
  f->addOutput("out", f->create(NodeKind::Relu, "relu", {x->result()})->result());
  return m;
}

TEST(QuantProfile, LoadCalibration) {
  const std::string dir = tempDir("calib");
  auto m = reluModel();
  const Function& f = *m->functions().front();
  std::vector<float> v(12);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = float(i);
  writeNpy(dir + "/batch.npy", Tensor::fromVector<float>({4, 3}, v));
  std::vector<TensorMap> c = loadCalibration(f, dir + "/batch.npy");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[2].at("x").toVector<float>(), (std::vector<float>{6, 7, 8}));
  writeNpy(dir + "/stacked.npy", Tensor::fromVector<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}));
  c = loadCalibration(f, dir + "/stacked.npy");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].at("x").dims(), (Shape{1, 3}));
  // A folder: every .npy sorted by name (batch.npy, then stacked.npy).
  c = loadCalibration(f, dir);
  ASSERT_EQ(c.size(), 6u);
  EXPECT_EQ(c[4].at("x").toVector<float>(), (std::vector<float>{1, 2, 3}));
  // Errors name the file.
  writeNpy(dir + "/../bad_shape.npy", Tensor::fromVector<float>({2, 4}, std::vector<float>(8)));
  try {
    loadCalibration(f, dir + "/../bad_shape.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad_shape.npy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(loadCalibration(f, dir + "/nothing.npy"), Error);
  // NaN or an infinity in calibration data is refused, naming the file and the input.
  writeNpy(dir + "/../nan.npy", Tensor::fromVector<float>({1, 3}, {1, NAN, 2}));
  try {
    loadCalibration(f, dir + "/../nan.npy");
    FAIL() << "NaN calibration data accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nan.npy: calibration data for input 'x' holds NaN "
                                         "(element 1)"),
              std::string::npos)
        << e.what();
  }
  writeNpy(dir + "/../inf.npy", Tensor::fromVector<float>({1, 3}, {1, 2, -INFINITY}));
  EXPECT_THROW(loadCalibration(f, dir + "/../inf.npy"), Error);
  // random:N is seeded: the same N inputs every time.
  c = loadCalibration(f, "random:3");
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].at("x").toVector<float>(),
            loadCalibration(f, "random:3")[1].at("x").toVector<float>());
  EXPECT_NE(c[0].at("x").toVector<float>(), c[1].at("x").toVector<float>());
  EXPECT_THROW(loadCalibration(f, "random:zero"), Error);
  auto mi = reluModel(ElemKind::Int64);
  EXPECT_THROW(loadCalibration(*mi->functions().front(), "random:2"), Error);
}

TEST(QuantProfile, ProfileFunctionRecordsEveryFloatValue) {
  auto m = reluModel();
  const Function& f = *m->functions().front();
  Profile p = profileFunction(f, {{{"x", Tensor::fromVector<float>({1, 3}, {-2, 1, 3})}},
                                  {{"x", Tensor::fromVector<float>({1, 3}, {-1, 5, 0})}}});
  EXPECT_EQ(p.runs(), 2);
  ASSERT_NE(p.find("x"), nullptr);
  ASSERT_NE(p.find("relu"), nullptr);
  EXPECT_EQ(p.find("x")->min, -2.f);
  EXPECT_EQ(p.find("x")->max, 5.f);
  EXPECT_EQ(p.find("relu")->min, 0.f);
  EXPECT_EQ(p.find("relu")->count, 6u);
}

} // namespace
