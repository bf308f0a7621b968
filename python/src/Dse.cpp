// ember-dse's points, rows and outputs for Python (Dse.h). Everything crosses as JSON
// text: the same toJson/fromJson the tool's child processes use for their rows.
#include "Dse.h"

#include "ember/session/dse/Area.h"
#include "ember/session/dse/Points.h"
#include "ember/session/dse/Report.h"
#include "ember/session/dse/Sweep.h"

#include "ember/isa/description.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <pybind11/stl.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using nlohmann::json;

namespace ember::python {

namespace {

/// A model imported and quantized once per process (a worker keeps it for every point).
struct DseModel {
  std::shared_ptr<dse::Model> model;
};

dse::PointOptions pointOptions(const json& o) {
  dse::PointOptions p;
  p.axes = o.value("axes", std::vector<std::string>{});
  p.random = o.value("random", 0u);
  p.seed = o.value("seed", std::uint64_t(1));
  p.minKib = o.value("min_kib", std::vector<std::string>{});
  p.maxKib = o.value("max_kib", std::uint64_t(4096));
  p.minArray = o.value("min_array", 4);
  p.maxArray = o.value("max_array", 64);
  p.keepEncoding = o.value("keep_encoding", false);
  return p;
}

/// {"base": file, "points": [...]}: the points of `optionsJson` (Points.h) over the
/// description `base` ("" = the default), their descriptions written under `out`.
std::string points(const std::string& base, const std::string& optionsJson,
                   const std::string& out) {
  const std::string path = base.empty() ? isa::IsaDescription::defaultPath() : base;
  const isa::IsaDescription desc = isa::IsaDescription::loadFile(path);
  json list = json::array();
  for (const dse::Point& p :
       dse::makePoints(pointOptions(json::parse(optionsJson)), desc.json(), out))
    list.push_back(dse::toJson(p));
  return json{{"base", path}, {"points", list}}.dump();
}

/// One point of `settings` ([[name, value], ...]) over `base`, written to `file`.
std::string point(const std::string& base, const std::string& settingsJson, std::size_t index,
                  const std::string& file) {
  const std::string path = base.empty() ? isa::IsaDescription::defaultPath() : base;
  const isa::IsaDescription desc = isa::IsaDescription::loadFile(path);
  dse::Settings s;
  for (const json& e : json::parse(settingsJson))
    s.emplace_back(e.at(0).get<std::string>(), e.at(1).get<std::string>());
  return dse::toJson(dse::makePoint(desc.json(), s, index, file)).dump();
}

DseModel loadModel(const std::string& path, const std::string& calibrate, bool check,
                   const std::map<std::string, std::vector<int64_t>>& shapes) {
  driver::InputBindings in;
  for (const auto& [name, dims] : shapes)
    in.shapes[name] = Shape(dims.begin(), dims.end());
  return DseModel{std::make_shared<dse::Model>(dse::loadModel(path, calibrate, check, in))};
}

/// The row of `model` on `pointJson` (a valid point), as the tool's toJson(Result).
std::string evaluate(const std::string& pointJson, const DseModel& model, bool check) {
  const dse::Point p = dse::pointFromJson(json::parse(pointJson));
  const isa::IsaDescription desc = isa::IsaDescription::loadString(p.description.dump(), p.file);
  return dse::toJson(dse::evaluateModel(p, desc, *model.model, check)).dump();
}

/// The area record (toJson) of `pointJson` (a valid point) synthesized on this machine
/// with the tools and cache of `requestJson` ({"yosys", "rtl", "cache"}).
std::string area(const std::string& pointJson, const std::string& requestJson) {
  const json r = json::parse(requestJson);
  dse::AreaRequest request;
  request.yosys = r.value("yosys", request.yosys);
  request.rtlDir = r.value("rtl", std::string());
  request.cacheDir = r.value("cache", std::string());
  return dse::toJson(dse::synthesizeAreaHere(dse::pointFromJson(json::parse(pointJson)), request))
      .dump();
}

/// Writes OUT/dse.csv and OUT/dse.html of `pointsJson` and `rowsJson` (rows in point,
/// then model order; the Pareto marks are set here) and returns the terminal table.
std::string report(const std::string& pointsJson, const std::string& rowsJson,
                   const std::string& title, const std::string& out) {
  dse::SweepData d;
  d.title = title;
  for (const json& p : json::parse(pointsJson))
    d.points.push_back(dse::pointFromJson(p));
  for (const json& r : json::parse(rowsJson))
    d.rows.push_back(dse::resultFromJson(r));
  dse::markPareto(d.rows);
  d.columns = dse::settingColumns(d.points);
  std::filesystem::create_directories(out);
  writeFileAtomic((std::filesystem::path(out) / "dse.csv").string(), dse::toCsv(d));
  writeFileAtomic((std::filesystem::path(out) / "dse.html").string(), dse::toHtml(d));
  return dse::formatTable(d);
}

} // namespace

void bindDse(py::module_& m) {
  py::class_<DseModel>(m, "DseModel")
      .def_property(
          "name", [](const DseModel& d) { return d.model->name; },
          [](DseModel& d, const std::string& n) { d.model->name = n; })
      .def_property_readonly("path", [](const DseModel& d) { return d.model->path; });
  m.def(
      "dse_points",
      [](const std::string& base, const std::string& options, const std::string& out) {
        py::gil_scoped_release release;
        return points(base, options, out);
      },
      py::arg("base"), py::arg("options"), py::arg("out"));
  m.def(
      "dse_point",
      [](const std::string& base, const std::string& settings, std::size_t index,
         const std::string& file) {
        py::gil_scoped_release release;
        return point(base, settings, index, file);
      },
      py::arg("base"), py::arg("settings"), py::arg("index"), py::arg("file"));
  m.def(
      "dse_load_model",
      [](const std::string& path, const std::string& calibrate, bool check,
         const std::map<std::string, std::vector<int64_t>>& shapes) {
        py::gil_scoped_release release;
        return loadModel(path, calibrate, check, shapes);
      },
      py::arg("path"), py::arg("calibrate"), py::arg("check"), py::arg("input_shapes"));
  m.def(
      "dse_evaluate",
      [](const std::string& point, const DseModel& model, bool check) {
        py::gil_scoped_release release;
        return evaluate(point, model, check);
      },
      py::arg("point"), py::arg("model"), py::arg("check"));
  m.def(
      "dse_area",
      [](const std::string& point, const std::string& request) {
        py::gil_scoped_release release;
        return area(point, request);
      },
      py::arg("point"), py::arg("request"));
  m.def(
      "dse_report",
      [](const std::string& points, const std::string& rows, const std::string& title,
         const std::string& out) {
        py::gil_scoped_release release;
        return report(points, rows, title, out);
      },
      py::arg("points"), py::arg("rows"), py::arg("title"), py::arg("out"));
  m.def("dse_model_name", &dse::modelName, py::arg("path"));
}

} // namespace ember::python
