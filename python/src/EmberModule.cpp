// The Python extension `ember._ember`: ember.Program (the session's Session,
// ember/session/Session.h), ember.isa's loaders, and Ember's errors as Python exceptions
// (the tools' messages, word for word). NumPy arrays in and out;
// python/ember/__init__.py is the public face.
#include "Dse.h"
#include "InputCheck.h"

#include "ember/isa/description.h"
#include "ember/session/Devices.h"
#include "ember/session/RunTool.h"
#include "ember/session/ServeTool.h"
#include "ember/session/Session.h"
#include "ember/support/Error.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <optional>

namespace py = pybind11;
using namespace ember;

namespace {

/// The NumPy array of `t` (one copy: a Tensor owns its bytes).
py::array toNumpy(const Tensor& t) {
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
  auto make = [&](auto tag) {
    using T = decltype(tag);
    py::array_t<T> a(shape);
    if (t.size())
      std::memcpy(a.mutable_data(), t.raw(), t.sizeInBytes());
    return py::array(std::move(a));
  };
  switch (t.kind()) {
  case ElemKind::Float32:
    return make(float{});
  case ElemKind::Int8:
    return make(int8_t{});
  case ElemKind::Int32:
    return make(int32_t{});
  case ElemKind::Int64:
    return make(int64_t{});
  case ElemKind::Bool:
    return make(bool{});
  case ElemKind::Float64:
    return make(double{});
  case ElemKind::Float16: {
    py::array a(py::dtype("float16"), shape);
    if (t.size())
      std::memcpy(a.mutable_data(), t.raw(), t.sizeInBytes());
    return a;
  }
  case ElemKind::UInt8:
    return make(uint8_t{});
  case ElemKind::Int16:
    return make(int16_t{});
  case ElemKind::UInt16:
    return make(uint16_t{});
  case ElemKind::UInt32:
    return make(uint32_t{});
  case ElemKind::UInt64:
    return make(uint64_t{});
  }
  throw InternalError("tensor", "unknown element kind");
}

py::dict toDict(const TensorMap& m) {
  py::dict d;
  for (const auto& [name, t] : m)
    d[py::str(name)] = toNumpy(t);
  return d;
}

py::list infoList(const std::vector<session::ValueInfo>& v) {
  py::list l;
  for (const auto& i : v) {
    py::dict d;
    d["name"] = i.name;
    d["dtype"] = i.dtype;
    d["shape"] = py::tuple(py::cast(i.shape));
    l.append(d);
  }
  return l;
}

/// The session with the Python package's name in the runtime's messages.
std::unique_ptr<session::Session> named(std::unique_ptr<session::Session> s) {
  s->setToolName("ember (python)");
  return s;
}

/// The last run's NPU reports as JSON text (python/ember parses them).
std::vector<std::string> reportsJson(const session::Session& s) {
  std::vector<std::string> out;
  for (const auto& r : s.reports())
    out.push_back(platform::toJson(r).dump());
  return out;
}

/// Program.cross_check: {"table", "mismatch": [...], "outputs": {device: {name: array}},
/// "seconds": {device: s}}. Arrays are checked as for a host device when one is listed
/// (exact shapes), else as for the NPU.
py::dict crossCheck(session::Session& s, const py::dict& inputs,
                    const std::vector<std::string>& devices) {
  std::string checkAs = devices.empty() ? "" : devices.front();
  for (const std::string& d : devices)
    if (d != "sim" && d != "rtl")
      checkAs = d;
  TensorMap in = python::checkedInputs(inputs, s, checkAs);
  std::optional<session::CrossCheck> c;
  {
    py::gil_scoped_release release;
    c.emplace(s.crossCheck(in, devices));
  }
  py::dict outputs, seconds;
  for (const auto& r : c->runs) {
    outputs[py::str(r.device)] = toDict(r.outputs);
    seconds[py::str(r.device)] = r.runSeconds;
  }
  py::dict d;
  d["table"] = c->table;
  d["mismatch"] = c->mismatch;
  d["outputs"] = outputs;
  d["seconds"] = seconds;
  return d;
}

/// ember.Error (bad input: file, place, reason), ember.Unsupported (valid input Ember
/// lacks), ember.UsageError (a bad argument), ember.InternalError.
void bindErrors(py::module_& m) {
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<Unsupported> unsupported(m, "Unsupported", error.ptr());
  static py::exception<UsageError> usage(m, "UsageError", error.ptr());
  static py::exception<InternalError> internal(m, "InternalError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Unsupported& e) {
      unsupported(e.what());
    } catch (const UsageError& e) {
      usage(e.what());
    } catch (const InternalError& e) {
      internal(e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });
}

/// ember.Program: compile, load, save, run, cross_check and the reports.
void bindProgram(py::module_& m) {
  py::class_<session::Session>(m, "Program")
      .def_static(
          "compile",
          [](const std::string& model, const std::string& target, const std::string& isa,
             const std::string& precision, const std::string& calibrate,
             const std::string& calibration, const std::string& fallback,
             const std::vector<std::string>& hostKinds, const std::vector<std::string>& hostNodes,
             const std::map<std::string, std::vector<int64_t>>& inputShapes, const py::dict& bind) {
            session::CompileOptions a;
            a.target = target;
            a.isa = isa;
            a.precision = precision;
            a.calibrate = calibrate;
            a.calibration = calibration;
            a.fallback = fallback;
            a.hostKinds = hostKinds;
            a.hostNodes = hostNodes;
            a.inputShapes.insert(inputShapes.begin(), inputShapes.end());
            a.bind = python::checkedBind(bind);
            py::gil_scoped_release release;
            return named(session::Session::compile(model, a));
          },
          py::arg("model"), py::arg("target"), py::arg("isa"), py::arg("precision"),
          py::arg("calibrate"), py::arg("calibration"), py::arg("fallback"), py::arg("host_kinds"),
          py::arg("host_nodes"), py::arg("input_shapes"), py::arg("bind"))
      .def_static(
          "load",
          [](const std::string& path, const std::string& isa) {
            py::gil_scoped_release release;
            return named(session::Session::load(path, isa));
          },
          py::arg("path"), py::arg("isa"))
      .def("save", &session::Session::save, py::arg("path"))
      .def(
          "run",
          [](session::Session& p, const py::dict& inputs, const std::string& device) {
            TensorMap in = python::checkedInputs(inputs, p, device);
            TensorMap out;
            {
              py::gil_scoped_release release;
              out = p.run(in, device);
            }
            return toDict(out);
          },
          py::arg("inputs"), py::arg("device"))
      .def("cross_check", &crossCheck, py::arg("inputs"), py::arg("devices"))
      .def_property_readonly("target", &session::Session::target)
      .def_property_readonly("precision", &session::Session::precision)
      .def_property_readonly("isa_name", &session::Session::isaName)
      .def_property_readonly("devices", &session::Session::devices)
      .def_property_readonly("inputs",
                             [](const session::Session& p) { return infoList(p.inputs()); })
      .def_property_readonly("outputs",
                             [](const session::Session& p) { return infoList(p.outputs()); })
      .def_property_readonly("whole_on_npu", &session::Session::wholeOnNpu)
      .def_property_readonly("placement", &session::Session::placement)
      .def_property_readonly("placement_report", &session::Session::placementReport)
      .def_property_readonly("compile_summary", &session::Session::compileSummary)
      .def_property_readonly("last_reports_json", &reportsJson)
      .def("write_html", &session::Session::writeHtml, py::arg("path"));
}

/// ember.isa's loader.
void bindIsa(py::module_& m) {
  m.def(
      "isa_load",
      [](const std::string& path) {
        std::optional<isa::IsaDescription> loaded;
        {
          py::gil_scoped_release release;
          loaded.emplace(isa::IsaDescription::loadDefault(path));
        }
        const isa::IsaDescription& d = *loaded;
        py::dict info;
        info["name"] = d.name();
        info["version"] = d.version();
        info["file"] = d.file();
        info["sha256"] = d.hashHex();
        info["peak_macs_per_cycle"] = d.peakMacsPerCycle();
        info["json"] = d.json().dump();
        return info;
      },
      py::arg("path"),
      "Loads and validates a description (\"\" = the default); ember.Error names the file, "
      "the JSON path and the reason when it is not valid.");
  m.def("default_isa_path", &isa::IsaDescription::defaultPath);
}

/// Program.serve: a saved program served in simulated time (ember/session/ServeTool.h).
void bindServe(py::module_& m) {
  m.def(
      "serve",
      [](const std::string& path, const std::string& isa, size_t requests, size_t concurrency,
         size_t queueDepth, const std::string& whenFull, const std::string& system, size_t distinct,
         uint64_t seed, const std::string& reference, size_t batch, uint64_t batchDeadline) {
        session::RunOptions o;
        o.model = path;
        o.isa = isa;
        o.randomSeed = seed;
        o.serve.requests = requests;
        o.serve.concurrency = concurrency;
        o.serve.queueDepth = queueDepth;
        o.serve.whenFull = whenFull;
        o.serve.system = system;
        o.serve.distinctInputs = distinct;
        o.serve.reference = reference;
        o.serve.batch = batch;
        o.serve.batchDeadline = batchDeadline;
        py::gil_scoped_release release;
        session::checkServeOptions(o);
        return session::serve(o).reportJson;
      },
      py::arg("path"), py::arg("isa"), py::arg("requests"), py::arg("concurrency"),
      py::arg("queue_depth"), py::arg("when_full"), py::arg("system"), py::arg("distinct"),
      py::arg("seed"), py::arg("reference"), py::arg("batch") = 1, py::arg("batch_deadline") = 0,
      "Serves the program at `path` (as ember-run --requests); returns the report's JSON.");
}

} // namespace

PYBIND11_MODULE(_ember, m) {
  m.doc() = "Ember: compile ONNX models for the Ember NPU and run them (C++ core)";
  session::registerNpuBackend();
  bindErrors(m);
  bindProgram(m);
  bindIsa(m);
  bindServe(m);
  m.def("backends", &backendNames, "The backends of this build (interp, cpu, npu).");
  python::bindDse(m);
}
