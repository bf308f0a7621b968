// The compile driver: import, pipeline, quantization, partition.
#include "ember/driver/Driver.h"

#ifdef EMBER_DRIVER_HAVE_ONNX
#include "ember/importer/OnnxImporter.h"
#endif
#include "ember/passes/Pass.h"
#include "ember/quantization/Profile.h"
#include "ember/support/Error.h"

#include <chrono>

namespace ember::driver {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
} // namespace

std::unique_ptr<Module> importModel(const std::string& path) {
#ifdef EMBER_DRIVER_HAVE_ONNX
  std::unique_ptr<Module> m = importOnnxFile(path);
  (void)modelFunction(*m);
  return m;
#else
  throw Error(path, "this build has no ONNX importer (EMBER_WITH_ONNX=OFF)");
#endif
}

Function& modelFunction(const Module& m) {
  if (m.functions().empty())
    throw Error(m.source(), "the imported module has no function");
  return *m.functions().front();
}

Function* quantizeFunction(Function& f, const QuantizeRequest& r, quant::QuantizeStats* stats) {
  quant::QuantizeOptions qo;
  qo.method = quant::parseCalibrationMethod(r.calibration);
  runPipeline(f, defaultPipeline());
  quant::Profile profile;
  if (!r.loadProfile.empty()) {
    profile = quant::Profile::load(r.loadProfile);
  } else {
    profile = quant::profileFunction(f, quant::loadCalibration(f, r.calibrate));
    if (!r.dumpProfile.empty())
      profile.save(r.dumpProfile);
  }
  return quant::quantize(f, profile, qo, stats);
}

CompiledModel compileModel(const std::string& path, const isa::IsaDescription& isa,
                           const QuantizeRequest& q, const partition::PartitionOptions& p) {
  (void)quant::parseCalibrationMethod(q.calibration); // a bad name fails before any work
  CompiledModel c;
  auto t0 = std::chrono::steady_clock::now();
  c.module = importModel(path);
  c.floatFunction = &modelFunction(*c.module);
  c.importSeconds = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  c.quantized = quantizeFunction(*c.floatFunction, q, &c.stats);
  c.quantizeSeconds = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  c.plan = partition::partition(*c.quantized, isa, p);
  c.partitionSeconds = secondsSince(t0);
  return c;
}

} // namespace ember::driver
