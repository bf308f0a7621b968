// session::Session: compile, load, save, run, cross-check and report.
#include "ember/session/Session.h"

#include "ember/driver/Driver.h"
#include "ember/driver/Package.h"
#include "ember/driver/Partition.h"
#include "ember/platform/HtmlReport.h"
#include "ember/runtime/Run.h"
#include "ember/session/Devices.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

namespace ember::session {

namespace {

ValueInfo infoOf(const std::string& name, const Type& t) {
  return ValueInfo{name, elemKindName(t.kind), t.dims};
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

Session::~Session() = default;

std::unique_ptr<Session> Session::compile(const std::string& model, const CompileOptions& a) {
  return compileWith(model, a, nullptr);
}

std::unique_ptr<Session> Session::compileWith(const std::string& model, const CompileOptions& a,
                                              std::shared_ptr<const quant::Profile> profile) {
  if (!contains({"npu", "cpu", "interp"}, a.target))
    throw UsageError("target", "expects npu, cpu or interp, got '" + a.target + "'");
  std::unique_ptr<Session> p(new Session);
  p->target_ = a.target;
  p->precision_ = a.precision.empty() ? (a.target == "npu" ? "int8" : "float") : a.precision;
  if (p->precision_ != "int8" && p->precision_ != "float")
    throw UsageError("precision", "expects int8 or float, got '" + p->precision_ + "'");
  if (a.target == "npu" && p->precision_ != "int8")
    throw UsageError("precision", "the NPU runs int8 models only");
  if (a.target == "cpu" && !contains(backendNames(), "cpu"))
    throw UsageError("target 'cpu'", "this build has no cpu backend (EMBER_WITH_LLVM=OFF)");
  p->source_ = model;
  p->isa_.emplace(isa::IsaDescription::loadDefault(a.isa));
  driver::InputBindings inputs;
  inputs.spelling = a.spelling;
  inputs.shapes = a.inputShapes;
  inputs.bound = a.bind;
  inputs.declaredDims = &p->modelDims_;
  p->module_ = driver::importModel(model, inputs);
  for (const auto& ph : p->module_->placeholders())
    p->declaredInputs_.push_back(ph->name());
  Function& fn = driver::modelFunction(*p->module_);
  driver::QuantizeRequest q;
  q.calibrate = a.calibrate;
  q.calibration = a.calibration;
  q.profile = std::move(profile);
  q.profileUsed = &p->profile_;
  p->options_ = a;
  p->function_ = driver::prepareFunction(fn, p->precision_ == "int8", a.target != "interp", q);
  p->floatFunction_ = &fn;
  if (a.target == "npu") {
    partition::PartitionOptions o;
    if (!a.fallback.empty())
      o.fallback = partition::parseFallback(a.fallback);
    o.hostKinds.insert(a.hostKinds.begin(), a.hostKinds.end());
    o.hostNodes.insert(a.hostNodes.begin(), a.hostNodes.end());
    p->plan_ = std::make_unique<partition::Plan>(partition::partition(*p->function_, *p->isa_, o));
  }
  return p;
}

std::unique_ptr<Session> Session::load(const std::string& path, const std::string& isaPath) {
  std::unique_ptr<Session> p(new Session);
  p->target_ = "npu";
  p->precision_ = "int8";
  p->source_ = path;
  p->isa_.emplace(isa::IsaDescription::loadDefault(isaPath));
  if (!std::filesystem::is_regular_file(path))
    throw Error(path, "cannot open the file");
  if (isNpuBinaryFile(path)) {
    p->binary_ = std::make_unique<isa::Binary>(isa::readElf(path, *p->isa_));
  } else if (partition::isPackageFile(path)) {
    p->plan_ = std::make_unique<partition::Plan>(partition::loadPackage(path, *p->isa_));
  } else {
    throw Error(path, "neither an NPU binary (ELF) nor an Ember package; compile a model "
                      "with ember.compile");
  }
  return p;
}

void Session::save(const std::string& path) const {
  // Never onto what the program was made from: the model, binary or package, or the
  // description.
  checkOutputFile(path, "save");
  checkNotSameFile({path}, {source_, isa_->file()});
  if (binary_) {
    isa::writeElf(path, *binary_, *isa_);
    return;
  }
  if (!plan_)
    throw UsageError("save", "a program compiled for '" + target_ +
                                 "' has no file form (NPU programs save as binaries or "
                                 "packages; emberc --backend cpu --emit-bundle writes a host "
                                 "bundle)");
  if (plan_->whole)
    isa::writeElf(path, plan_->segments.front().npu->binary, *isa_);
  else
    partition::writePackage(path, *plan_, *isa_);
}

std::vector<std::string> Session::devices() const {
  std::vector<std::string> d;
  if (target_ == "npu") {
    d.push_back("sim");
#ifdef EMBER_HAVE_RTL
    d.push_back("rtl");
#endif
  }
  if (function_)
    for (const std::string& b : backendNames())
      if (b != "npu" && !contains(d, b))
        d.push_back(b);
  if (!d.empty() && d.front() != "sim") // a host program: its own backend first
    std::stable_partition(d.begin(), d.end(), [&](const std::string& s) { return s == target_; });
  return d;
}

std::string Session::checkedDevice(const std::string& device) const {
  const std::vector<std::string> ok = devices();
  const std::string dev = device.empty() ? ok.front() : device;
  if (contains(ok, dev))
    return dev;
  std::string list;
  for (const auto& d : ok)
    list += (list.empty() ? "" : ", ") + d;
  throw UsageError("device '" + dev + "'", "this program runs on " + list);
}

Session* Session::variantFor(const TensorMap& inputs) {
  if (!options_)
    return nullptr;
  std::map<std::string, Shape> shapes;
  std::string key;
  bool differs = false;
  for (const ValueInfo& v : this->inputs()) {
    auto it = inputs.find(v.name);
    if (it == inputs.end())
      continue; // usedInputs names what is missing
    const Shape& dims = it->second.dims();
    auto declared = modelDims_.find(v.name);
    if (dims.size() != v.shape.size() || declared == modelDims_.end() ||
        declared->second.size() != dims.size())
      return nullptr; // not another batch: the NPU takes [N, C] for [N, C, 1, 1]
    for (std::size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != v.shape[i] && declared->second[i] >= 0)
        return nullptr; // a dimension the model fixes: refused as a wrong shape
    differs |= dims != Shape(v.shape.begin(), v.shape.end());
    shapes[v.name] = dims;
    key += v.name + "=" + driver::shapeArgument(dims) + ";";
  }
  if (!differs)
    return nullptr;
  std::unique_ptr<Session>& s = variants_[key];
  if (!s) {
    CompileOptions o = *options_;
    for (const auto& [name, dims] : shapes)
      o.inputShapes[name] = dims;
    try { // the same calibration: the int8 parameters of this program
      s = compileWith(source_, o, profile_);
    } catch (const Error& e) {
      std::string compiled;
      for (const ValueInfo& v : this->inputs())
        compiled += (compiled.empty() ? "" : ", ") + v.name + " " +
                    driver::shapeArgument(Shape(v.shape.begin(), v.shape.end()));
      throw Error(source_, "the inputs' shapes differ from the program's (" + compiled +
                               "), and it cannot be compiled for theirs: " + e.what());
    }
    s->tool_ = tool_;
  }
  return s.get();
}

TensorMap Session::run(const TensorMap& inputs, const std::string& device) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const std::string dev = checkedDevice(device);
  if (Session* v = variantFor(inputs)) {
    TensorMap out = v->run(inputs, dev);
    lastReports_ = v->lastReports_;
    return out;
  }
  const TensorMap used = usedInputs(inputs);
  lastReports_.clear();
  if (dev == "sim" || dev == "rtl") {
    if (binary_)
      return runBinary(used, dev);
    auto& s = npu_[dev];
    if (!s)
      s = std::make_unique<PlanSession>(*plan_, *isa_, dev, DeviceOptions{}, source_);
    TensorMap out = s->run(used);
    lastReports_ = s->reports();
    return out;
  }
  return runHost(*function_, used, dev);
}

CrossCheck Session::crossCheck(const TensorMap& inputs, const std::vector<std::string>& devices) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (devices.size() < 2)
    throw UsageError("devices", "a cross-check compares at least two devices, got " +
                                    std::to_string(devices.size()));
  std::vector<std::string> devs;
  for (const std::string& d : devices) {
    const std::string dev = checkedDevice(d);
    if (contains(devs, dev))
      throw UsageError("devices", "'" + d + "' is listed twice");
    devs.push_back(dev);
  }
  if (Session* v = variantFor(inputs)) {
    CrossCheck c = v->crossCheck(inputs, devs);
    lastReports_ = v->lastReports_;
    return c;
  }
  CrossCheck c;
  std::vector<std::vector<platform::Report>> npu;
  for (const std::string& dev : devs) {
    const auto t0 = std::chrono::steady_clock::now();
    TensorMap out = run(inputs, dev);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::optional<platform::Report> report;
    if (lastReports_.size() == 1)
      report = lastReports_.front();
    c.runs.push_back(DeviceOutputs{dev, std::move(out), seconds, std::move(report)});
    npu.push_back(lastReports_);
  }
  std::vector<std::string> names;
  for (const ValueInfo& v : outputs())
    names.push_back(v.name);
  std::optional<TensorMap> floatRef; // what int8 cost, when the float model is at hand
  if (precision_ == "int8" && floatFunction_)
    floatRef = runHost(*floatFunction_, usedInputs(inputs), "interp");
  CompareResult r =
      compareRuns(names, c.runs, precision_ == "int8", floatRef ? &*floatRef : nullptr);
  c.table = std::move(r.table);
  c.mismatch = std::move(r.mismatch);
  compareNpuPairs(devs, npu, c.table, c.mismatch);
  lastReports_.clear();
  for (const auto& reports : npu)
    if (!reports.empty() && lastReports_.empty())
      lastReports_ = reports;
  return c;
}

TensorMap Session::usedInputs(const TensorMap& inputs) const {
  const std::vector<ValueInfo> needed = this->inputs();
  auto isNeeded = [&](const std::string& n) {
    return std::any_of(needed.begin(), needed.end(),
                       [&](const ValueInfo& v) { return v.name == n; });
  };
  std::vector<std::string> unknown, missing;
  TensorMap used;
  for (const auto& [name, t] : inputs) {
    if (isNeeded(name))
      used.emplace(name, t);
    else if (!contains(declaredInputs_, name))
      unknown.push_back(name);
    // else: declared by the model, but no output depends on it (a Shape of it folded to a
    // constant, Dropout's ratio): accepted and not used, as ember-run does.
  }
  for (const auto& v : needed)
    if (!inputs.count(v.name))
      missing.push_back(v.name);
  if (unknown.empty() && missing.empty())
    return used;
  std::string msg, names;
  for (const auto& v : needed)
    names += (names.empty() ? "" : ", ") + v.name;
  for (const auto& n : unknown)
    msg += (msg.empty() ? "" : "; ") + std::string("no input named '") + n + "'";
  for (const auto& n : missing)
    msg += (msg.empty() ? "" : "; ") + std::string("input '") + n + "' not given";
  throw Error(source_, msg + " (the model's inputs: " + names + ")");
}

TensorMap Session::runHost(const Function& f, const TensorMap& inputs, const std::string& device) {
  // One compiled form per function and backend (the float model's for a cross-check).
  auto& c = host_[(&f == function_ ? "" : "float:") + device];
  if (!c) {
    std::unique_ptr<Backend> b = createBackend(device);
    requireSupported(*b, f, "device '" + device + "'");
    c = b->compile(f);
  }
  return c->run(inputs);
}

TensorMap Session::runBinary(const TensorMap& inputs, const std::string& device) {
  runtime::RunRequest req = npuEngine(device);
  req.binary = source_;
  req.input_tensors = std::map<std::string, Tensor>(inputs.begin(), inputs.end());
  req.table = false;
  req.progress = false;
  req.tool = tool_;
  std::ostringstream err;
  runtime::RunResult r = runtime::runLoadedBinary(*binary_, *isa_, req, err);
  if (r.status != 0)
    throw Error("device '" + device + "'",
                "the NPU program faulted: " +
                    (r.report.fault ? r.report.fault->message() : err.str()));
  TensorMap out;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const auto& [name, t] = r.outputs[i];
    const isa::IoEntry* e = nullptr;
    for (const auto& io : r.io)
      if (io.name == name && io.dir == isa::IoDir::Output)
        e = &io;
    if (e && t.kind() == ElemKind::Int8) { // as the model's DequantizeLinear
      out.emplace(name, partition::dequantizeCodes(t, static_cast<float>(e->scale), e->zero_point,
                                                   t.dims()));
    } else {
      out.emplace(name, t);
    }
  }
  lastReports_.push_back(std::move(r.report));
  return out;
}

std::vector<ValueInfo> Session::inputs() const {
  std::vector<ValueInfo> v;
  if (function_) {
    for (const Node* ph : function_->inputs())
      v.push_back(infoOf(ph->name(), ph->resultType()));
  } else if (plan_) {
    for (const auto& [name, t] : plan_->inputs)
      v.push_back(infoOf(name, t));
  } else {
    for (const auto& e : binary_->io)
      if (e.dir == isa::IoDir::Input)
        v.push_back(ValueInfo{e.name, "float32", e.shape});
  }
  return v;
}

std::vector<ValueInfo> Session::outputs() const {
  std::vector<ValueInfo> v;
  if (function_) {
    for (const auto& o : function_->outputs())
      v.push_back(infoOf(o.name, o.value.type()));
  } else if (plan_) {
    for (const auto& [name, i] : plan_->outputs)
      v.push_back(infoOf(name, plan_->values[i].type));
  } else {
    for (const auto& e : binary_->io)
      if (e.dir == isa::IoDir::Output)
        v.push_back(ValueInfo{e.name, "float32", e.shape});
  }
  return v;
}

std::string Session::placement() const {
  return plan_ ? partition::placementSummaryLine(*plan_) : "";
}

std::string Session::placementReport() const {
  return plan_ ? partition::formatPlacementReport(*plan_) : "";
}

std::string Session::compileSummary() const {
  if (plan_ && plan_->whole && plan_->segments.front().npu)
    return npu::formatSummary(plan_->segments.front().npu->summary);
  return "";
}

void Session::writeHtml(const std::string& path) const {
  if (lastReports_.empty())
    throw Error(path, "no NPU run to report: run the program on sim or rtl first");
  platform::HtmlReportOptions h;
  h.title = platform::htmlReportTitle(source_);
  h.placement = placement();
  h.placementTable = plan_ && !plan_->whole ? placementReport() : "";
  writeFileAtomic(path, platform::toHtml(lastReports_, h));
}

} // namespace ember::session
