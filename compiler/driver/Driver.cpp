// The compile driver: import, pipeline, quantization, partition.
#include "ember/driver/Driver.h"

#ifdef EMBER_DRIVER_HAVE_ONNX
#include "ember/importer/OnnxPlugin.h"
#endif
#include "ember/passes/Pass.h"
#include "ember/quantization/Profile.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <chrono>

namespace ember::driver {

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
} // namespace

#ifdef EMBER_DRIVER_HAVE_ONNX
namespace {

/// "(1, 3, 224, 224)", "(5,)": a shape as a Python tuple.
std::string pythonTuple(const Shape& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}

/// The advice of the message for an input whose dimensions nothing decides: the option
/// that gives them, with the declared shape (unknown dimensions as 1) as the example.
std::string shapeAdvice(const InputBindings& b, const std::string& name, const Shape* example) {
  if (b.spelling == OptionSpelling::Python)
    return "give its shape with input_shapes={'" + name +
           "': " + (example ? pythonTuple(*example) : std::string("(...)")) + "}";
  std::string s = "give its shape with --input-shape " + name + "=" +
                  (example ? shapeArgument(*example) : std::string("D0xD1x..."));
  if (b.takesInputFiles)
    s += ", or an input .npy (--input " + name + "=FILE.npy)";
  return s;
}

/// The importer's options for `b`, each entry with how the user wrote it. Reads the
/// --bind files and the shapes of the --input files.
OnnxImportOptions importOptions(const InputBindings& b) {
  const bool cli = b.spelling == OptionSpelling::CommandLine;
  OnnxImportOptions o;
  for (const auto& [name, dims] : b.shapes) {
    o.inputShapes[name] = dims;
    o.origins.shapes[name] = cli ? "--input-shape " + name + "=" + shapeArgument(dims)
                                 : "input_shapes['" + name + "']=" + pythonTuple(dims);
  }
  for (const auto& [name, file] : b.bindFiles) {
    o.constantInputs.emplace(name, readNpy(file));
    o.origins.constants[name] = "--bind " + name + "=" + file;
  }
  for (const auto& [name, value] : b.bound) {
    if (!o.constantInputs.emplace(name, value).second)
      throw UsageError("input '" + name + "' is bound twice");
    o.origins.constants[name] = cli ? "the value bound to '" + name + "'" : "bind['" + name + "']";
  }
  for (const auto& [name, file] : b.feedFiles) {
    const std::string origin = "--input " + name + "=" + file;
    auto bound = o.origins.constants.find(name);
    if (bound != o.origins.constants.end())
      throw Error(origin, "input '" + name + "' is also bound to a constant (" + bound->second +
                              "); give it one way");
    if (b.shapes.count(name))
      continue; // --input-shape decides; the file is checked against it when it is read
    o.feedShapes[name] = readNpy(file).dims();
    o.origins.feeds[name] = origin;
  }
  o.shapeAdvice = [b](const std::string& name, const Shape* example) {
    return shapeAdvice(b, name, example);
  };
  o.bindAdvice = [cli](const std::string& name) {
    return cli ? "bind it to a constant with --bind " + name + "=FILE.npy"
               : "bind it to a constant with bind={'" + name + "': array}";
  };
  o.declaredDims = b.declaredDims;
  return o;
}

} // namespace
#endif

std::string shapeArgument(const Shape& s) {
  std::string a;
  for (size_t i = 0; i < s.size(); ++i)
    a += (i ? "x" : "") + std::to_string(s[i]);
  return a;
}

std::unique_ptr<Module> importModel(const std::string& path, const InputBindings& inputs) {
#ifdef EMBER_DRIVER_HAVE_ONNX
  // The importer linked in, else its module, loaded now (ember/importer/OnnxPlugin.h).
  std::unique_ptr<Module> m = loadOnnxImporter().importFile(path, importOptions(inputs));
  (void)modelFunction(*m);
  return m;
#else
  (void)inputs;
  throw Error(path, "this build has no ONNX importer (EMBER_WITH_ONNX=OFF)");
#endif
}

void refuseInputOptions(const InputBindings& b, const std::string& what) {
  const bool py = b.spelling == OptionSpelling::Python;
  if (!b.shapes.empty())
    throw UsageError(py ? "input_shapes" : "--input-shape",
                     what + " was compiled for fixed input shapes; the option is for ONNX models");
  if (!b.bindFiles.empty() || !b.bound.empty())
    throw UsageError(py ? "bind" : "--bind",
                     what + " was compiled with its inputs; the option is for ONNX models");
}

Function& modelFunction(const Module& m) {
  if (m.functions().empty())
    throw Error(m.source(), "the imported module has no function");
  return *m.functions().front();
}

Function* prepareFunction(Function& f, bool int8, bool compiling, const QuantizeRequest& r,
                          quant::QuantizeStats* stats) {
  if (int8)
    return quantizeFunction(f, r, stats);
  if (compiling)
    runPipeline(f, defaultPipeline());
  return &f;
}

Function* quantizeFunction(Function& f, const QuantizeRequest& r, quant::QuantizeStats* stats) {
  quant::QuantizeOptions qo;
  qo.method = quant::parseCalibrationMethod(r.calibration);
  runPipeline(f, defaultPipeline());
  std::shared_ptr<const quant::Profile> profile = r.profile;
  if (!profile && !r.loadProfile.empty())
    profile = std::make_shared<quant::Profile>(quant::Profile::load(r.loadProfile));
  if (!profile) {
    auto calibrated = std::make_shared<quant::Profile>(
        quant::profileFunction(f, quant::loadCalibration(f, r.calibrate)));
    if (!r.dumpProfile.empty())
      calibrated->save(r.dumpProfile);
    profile = std::move(calibrated);
  }
  if (r.profileUsed)
    *r.profileUsed = profile;
  return quant::quantize(f, *profile, qo, stats);
}

CompiledModel compileModel(const std::string& path, const isa::IsaDescription& isa,
                           const QuantizeRequest& q, const partition::PartitionOptions& p,
                           const InputBindings& inputs) {
  (void)quant::parseCalibrationMethod(q.calibration); // a bad name fails before any work
  CompiledModel c;
  auto t0 = std::chrono::steady_clock::now();
  c.module = importModel(path, inputs);
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
