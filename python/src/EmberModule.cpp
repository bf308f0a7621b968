// The Python extension `ember._ember`: ember.Program, ember.isa's loaders, and Ember's
// errors as Python exceptions (the tools' messages, word for word). NumPy arrays in and
// out; python/ember/__init__.py is the public face.
#include "Dse.h"
#include "InputCheck.h"
#include "Program.h"

#include "ember/isa/description.h"
#include "ember/session/Devices.h"
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

py::list infoList(const std::vector<python::ValueInfo>& v) {
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

} // namespace

PYBIND11_MODULE(_ember, m) {
  m.doc() = "Ember: compile ONNX models for the Ember NPU and run them (C++ core)";
  session::registerNpuBackend();

  // Errors: ember.Error (bad input: file, place, reason), ember.Unsupported (valid input
  // Ember lacks), ember.UsageError (a bad argument), ember.InternalError.
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

  py::class_<python::Program>(m, "Program")
      .def_static(
          "compile",
          [](const std::string& model, const std::string& target, const std::string& isa,
             const std::string& precision, const std::string& calibrate,
             const std::string& calibration, const std::string& fallback,
             const std::vector<std::string>& hostKinds, const std::vector<std::string>& hostNodes,
             const std::map<std::string, std::vector<int64_t>>& inputShapes, const py::dict& bind) {
            python::CompileArgs a;
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
            return python::Program::compile(model, a);
          },
          py::arg("model"), py::arg("target"), py::arg("isa"), py::arg("precision"),
          py::arg("calibrate"), py::arg("calibration"), py::arg("fallback"), py::arg("host_kinds"),
          py::arg("host_nodes"), py::arg("input_shapes"), py::arg("bind"))
      .def_static(
          "load",
          [](const std::string& path, const std::string& isa) {
            py::gil_scoped_release release;
            return python::Program::load(path, isa);
          },
          py::arg("path"), py::arg("isa"))
      .def("save", &python::Program::save, py::arg("path"))
      .def(
          "run",
          [](python::Program& p, const py::dict& inputs, const std::string& device) {
            TensorMap in = python::checkedInputs(inputs, p, device);
            TensorMap out;
            {
              py::gil_scoped_release release;
              out = p.run(in, device);
            }
            return toDict(out);
          },
          py::arg("inputs"), py::arg("device"))
      .def_property_readonly("target", &python::Program::target)
      .def_property_readonly("precision", &python::Program::precision)
      .def_property_readonly("isa_name", &python::Program::isaName)
      .def_property_readonly("devices", &python::Program::devices)
      .def_property_readonly("inputs",
                             [](const python::Program& p) { return infoList(p.inputs()); })
      .def_property_readonly("outputs",
                             [](const python::Program& p) { return infoList(p.outputs()); })
      .def_property_readonly("whole_on_npu", &python::Program::wholeOnNpu)
      .def_property_readonly("placement", &python::Program::placement)
      .def_property_readonly("placement_report", &python::Program::placementReport)
      .def_property_readonly("compile_summary", &python::Program::compileSummary)
      .def_property_readonly("last_reports_json", &python::Program::lastReports)
      .def("write_html", &python::Program::writeHtml, py::arg("path"));

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
  m.def("backends", &backendNames, "The backends of this build (interp, cpu, npu).");
  python::bindDse(m);
}
