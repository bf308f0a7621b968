// Fashion-MNIST on the simulated NPU: CNNs trained by fashion_mnist.py (PyTorch; one with a
// 7x7 convolution as classifier, one with Flatten + Linear), each imported,
// calibrated on 256 training images and quantized by Ember, compiled for ember-v1 and run
// on the cycle-accurate simulator image by image. Every NPU result must equal the int8
// interpreter's bit for bit, and int8 top-1 accuracy must be within one percentage point
// of float accuracy (ARCHITECTURE section 8; the figures are printed).
#include "ember/runtime/Run.h"

#include "ember/backend/Backend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/isa/description.h"
#include "ember/npu/Compile.h"
#include "ember/quantization/Profile.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace {

using namespace ember;

/// Index of the first largest element (numpy's argmax).
int64_t argmax(const Tensor& t) {
  int64_t best = 0;
  for (int64_t i = 1; i < t.size(); ++i)
    if (t.getAsDouble(i) > t.getAsDouble(best))
      best = i;
  return best;
}

/// Image `i` of a [N, 1, 28, 28] batch as a [1, 1, 28, 28] tensor.
Tensor image(const Tensor& batch, int64_t i) {
  Shape one = batch.dims();
  one[0] = 1;
  Tensor t(ElemKind::Float32, one);
  const int64_t n = t.size();
  std::memcpy(t.data<float>(), batch.data<float>() + i * n, size_t(n) * sizeof(float));
  return t;
}

class FashionMnist : public ::testing::TestWithParam<const char*> {};

TEST_P(FashionMnist, Int8OnTheNpuIsWithinOnePointOfFloat) {
  const std::string dir = FASHION_DIR;
  std::unique_ptr<Module> m = importOnnxFile(dir + "/" + GetParam());
  Function& f = *m->functions().front();
  const std::string input = f.inputs().front()->name();
  const std::string output = f.outputs().front().name;
  Function* q = quant::quantizeModel(f, quant::loadCalibration(f, dir + "/calib.npy"));

  isa::IsaDescription desc = isa::IsaDescription::loadDefault("");
  npu::CompileResult bin = npu::compile(*q, desc);
  auto interp = createBackend("interp");
  auto floatRun = interp->compile(f);
  auto int8Run = interp->compile(*q);

  const Tensor images = readNpy(dir + "/test_images.npy");
  const Tensor labels = readNpy(dir + "/test_labels.npy");
  const int64_t n = images.dims()[0];
  ASSERT_GE(n, 2000);
  int64_t floatOk = 0, npuOk = 0, exact = 0;
  uint64_t cycles = 0;
  for (int64_t i = 0; i < n; ++i) {
    TensorMap in;
    in.emplace(input, image(images, i));
    const int64_t label = int64_t(labels.getAsDouble(i));
    floatOk += argmax(floatRun->run(in).at(output)) == label;
    const Tensor ref = int8Run->run(in).at(output);

    runtime::RunRequest req;
    req.binary = "<fashion_mnist>";
    req.input_tensors = in;
    req.table = false;
    req.progress = false;
    req.options.record_slices = false;
    std::ostringstream err;
    runtime::RunResult r = runtime::runLoadedBinary(bin.binary, desc, req, err);
    ASSERT_EQ(r.status, 0) << err.str();
    cycles += r.report.cycles;
    // The NPU's int8 codes, dequantized as the graph's DequantizeLinear does.
    const isa::IoEntry* e = nullptr;
    for (const auto& io : r.io)
      if (io.dir == isa::IoDir::Output)
        e = &io;
    ASSERT_NE(e, nullptr);
    const Tensor& codes = r.outputs.front().second;
    ASSERT_EQ(codes.size(), ref.size());
    bool same = true;
    Tensor deq(ElemKind::Float32, ref.dims());
    for (int64_t k = 0; k < codes.size(); ++k) {
      deq.data<float>()[k] = float(int64_t(codes.getAsDouble(k)) - e->zero_point) * float(e->scale);
      same = same && deq.data<float>()[k] == ref.data<float>()[k];
    }
    exact += same;
    npuOk += argmax(deq) == label;
  }
  const double floatAcc = 100.0 * double(floatOk) / double(n);
  const double npuAcc = 100.0 * double(npuOk) / double(n);
  std::printf("fashion-mnist %s, %lld test images: float %.2f%%, int8 on the NPU %.2f%% "
              "(difference %+.2f points); NPU == int8 interpreter on %lld of %lld; "
              "%.0f NPU cycles per image on %s\n",
              GetParam(), (long long)n, floatAcc, npuAcc, npuAcc - floatAcc, (long long)exact,
              (long long)n, double(cycles) / double(n), desc.name().c_str());
  EXPECT_EQ(exact, n);
  EXPECT_LE(std::fabs(npuAcc - floatAcc), 1.0);
  EXPECT_GT(floatAcc, 80.0); // the model did learn (PyTorch gets about 87%)
}

INSTANTIATE_TEST_SUITE_P(Heads, FashionMnist, ::testing::Values("model.onnx", "model_linear.onnx"),
                         [](const ::testing::TestParamInfo<const char*>& p) {
                           return std::string(p.param) == "model.onnx" ? "ConvHead"
                                                                       : "FlattenLinearHead";
                         });

} // namespace
