// Accuracy of quantization on real data (ARCHITECTURE.md section 8): a small CNN trained
// at test time on scikit-learn's digits (digits_model.py, fixture quant.digits_model) is
// imported, calibrated on the training images with each method, quantized, and its
// top-1 accuracy on the test images measured in float and int8: int8 must be within 2
// points of float. The figures are printed.
#include "ember/importer/OnnxImporter.h"
#include "ember/interpreter/Interpreter.h"
#include "ember/passes/Pass.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Npy.h"

#include <gtest/gtest.h>

#include <fstream>

namespace ember {
namespace {

const std::string kDir = std::string(EMBER_BINARY_DIR) + "/tests/compiler/quant/digits";

/// Top-1 accuracy of `f` on images x [M, 1, 8, 8] with labels y [M].
double accuracy(const Function& f, const Tensor& x, const Tensor& y) {
  Interpreter interp(f);
  const int64_t m = x.dims()[0], one = x.size() / m;
  int64_t correct = 0;
  for (int64_t i = 0; i < m; ++i) {
    Tensor img(ElemKind::Float32, {1, 1, 8, 8});
    std::copy(x.data<float>() + i * one, x.data<float>() + (i + 1) * one, img.data<float>());
    const Tensor logits = interp.run({{"image", img}}).at("logits");
    const float* l = logits.data<float>();
    const int64_t best = std::max_element(l, l + logits.size()) - l;
    correct += best == y.data<int64_t>()[i];
  }
  return double(correct) / double(m);
}

TEST(QuantDigits, Int8AccuracyWithinTwoPointsOfFloat) {
  std::ifstream probe(kDir + "/digits.onnx");
  ASSERT_TRUE(probe.good()) << "missing " << kDir << " (run the quant.digits_model test)";
  std::unique_ptr<Module> m = importOnnxFile(kDir + "/digits.onnx");
  Function& f = *m->functions().front();
  runPipeline(f, defaultPipeline());
  const Tensor testX = readNpy(kDir + "/test_x.npy"), testY = readNpy(kDir + "/test_y.npy");
  const std::vector<TensorMap> calib = quant::loadCalibration(f, kDir + "/train_x.npy");
  ASSERT_GT(calib.size(), 1000u);
  const quant::Profile profile = quant::profileFunction(f, calib);
  const double floatAcc = accuracy(f, testX, testY);
  std::cout << "[digits] " << calib.size() << " calibration images, " << testX.dims()[0]
            << " test images; float top-1 " << floatAcc * 100 << " %\n";
  EXPECT_GT(floatAcc, 0.9);
  for (auto method : {quant::CalibrationMethod::MinMax, quant::CalibrationMethod::Percentile,
                      quant::CalibrationMethod::KL}) {
    quant::QuantizeOptions o;
    o.method = method;
    o.functionName = std::string("int8_") + quant::calibrationMethodName(method);
    quant::QuantizeStats st;
    const Function* q = quant::quantize(f, profile, o, &st);
    const double acc = accuracy(*q, testX, testY);
    std::cout << "[digits] " << quant::calibrationMethodName(method) << ": int8 top-1 " << acc * 100
              << " % (" << (acc - floatAcc) * 100 << " points; " << st.int8Nodes << " int8 nodes, "
              << st.floatNodes << " float)\n";
    EXPECT_GE(acc, floatAcc - 0.02) << quant::calibrationMethodName(method);
  }
}

} // namespace
} // namespace ember
