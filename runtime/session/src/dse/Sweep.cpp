// Running a sweep: models loaded once, points evaluated in child processes (Sweep.h).
#include "ember/session/dse/Sweep.h"
#include "Children.h"

#include "ember/session/RunUtil.h"

#include "ember/backend/Backend.h"
#include "ember/driver/Driver.h"
#include "ember/driver/Execute.h"
#include "ember/driver/Partition.h"
#include "ember/npu/Compile.h"
#include "ember/runtime/Run.h"
#include "ember/session/Devices.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <sys/wait.h>
#include <unistd.h>

namespace ember::dse {

using nlohmann::json;

const char* statusName(Status s) {
  switch (s) {
  case Status::Ok:
    return "ok";
  case Status::Invalid:
    return "invalid";
  case Status::Unsupported:
    return "unsupported";
  case Status::TooSmall:
    return "too-small";
  case Status::CompileError:
    return "compile-error";
  case Status::Fault:
    return "fault";
  case Status::RunError:
    return "run-error";
  case Status::Mismatch:
    return "mismatch";
  case Status::Crash:
    return "crash";
  }
  return "crash";
}

std::string modelName(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.filename() == "model.onnx" && p.has_parent_path() && !p.parent_path().filename().empty())
    return p.parent_path().filename().string();
  return p.stem().string();
}

Model loadModel(const std::string& path, const std::string& calibrate, bool check,
                const driver::InputBindings& inputs) {
  Model m;
  m.path = path;
  m.name = modelName(path);
  m.module = driver::importModel(path, inputs);
  Function& f = driver::modelFunction(*m.module);
  // The inputs ember-run --random-input 1 gives: one per input the function reads.
  std::uint64_t index = 0;
  for (const Node* p : f.inputs())
    m.inputs.emplace(p->name(), session::randomTensor(p->resultType(), 1, index++));
  driver::QuantizeRequest q;
  q.calibrate = calibrate;
  m.quantized = driver::quantizeFunction(f, q);
  if (check) {
    std::unique_ptr<Backend> interp = createBackend("interp");
    m.reference = interp->compile(*m.quantized)->run(m.inputs);
  }
  return m;
}

json toJson(const Result& r) {
  json sram = json::array();
  for (const SramPeak& s : r.sram)
    sram.push_back({{"name", s.name}, {"peak", s.peakBytes}, {"size", s.sizeBytes}});
  return {{"point", r.point},
          {"model", r.model},
          {"status", statusName(r.status)},
          {"message", r.message},
          {"cycles", r.cycles},
          {"npu_seconds", r.npuSeconds},
          {"energy_uj", r.energyUj},
          {"mac_utilization", r.macUtilization},
          {"sram", sram},
          {"host_seconds", r.hostSeconds}};
}

Result resultFromJson(const json& j) {
  Result r;
  r.point = j.at("point").get<std::size_t>();
  r.model = j.at("model").get<std::string>();
  const std::string s = j.at("status").get<std::string>();
  r.status = Status::Crash;
  for (Status k :
       {Status::Ok, Status::Invalid, Status::Unsupported, Status::TooSmall, Status::CompileError,
        Status::Fault, Status::RunError, Status::Mismatch, Status::Crash})
    if (s == statusName(k))
      r.status = k;
  r.message = j.at("message").get<std::string>();
  r.cycles = j.at("cycles").get<std::uint64_t>();
  r.npuSeconds = j.at("npu_seconds").get<double>();
  r.energyUj = j.at("energy_uj").get<double>();
  r.macUtilization = j.at("mac_utilization").get<double>();
  for (const json& e : j.at("sram"))
    r.sram.push_back({e.at("name").get<std::string>(), e.at("peak").get<std::uint64_t>(),
                      e.at("size").get<std::uint64_t>()});
  r.hostSeconds = j.at("host_seconds").get<double>();
  return r;
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Runs the whole plan's binary on the SystemC model (no progress line, no files),
/// keeping the report; a fault is an NpuFault with the simulator's message.
partition::NpuRunner simRunner(const isa::IsaDescription& desc, const std::string& label,
                               std::vector<platform::Report>& reports) {
  runtime::RunRequest engine;
  engine.progress = false;
  engine.tool = "ember-dse";
  return session::npuSegmentRunner("sim", engine, desc, session::DeviceOptions{}, label, true,
                                   reports);
}

/// The first output that differs from the reference, as a message ("" = all equal).
std::string compareOutputs(const TensorMap& got, const TensorMap& want) {
  for (const auto& [name, ref] : want) {
    const auto it = got.find(name);
    if (it == got.end())
      return "the NPU run has no output '" + name + "'";
    const double d = session::maxAbsDiff(it->second, ref);
    if (d != 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", d);
      return "output '" + name + "' differs from the int8 interpreter's (max |diff| " + buf + ")";
    }
  }
  return "";
}

/// Whether model `m` compiles for the NPU (fallback none) on description `d`; false for
/// a description the validator refuses.
bool compilesOn(const json& d, const Model& m) {
  try {
    const isa::IsaDescription desc = isa::IsaDescription::loadString(d.dump(), "grown");
    partition::PartitionOptions po;
    po.fallback = partition::Fallback::None;
    (void)partition::partition(*m.quantized, desc, po);
    return true;
  } catch (const Error&) {
    return false;
  }
}

/// A refusal of the compiler (Unsupported or ProgramTooLong): TooSmall with the SRAM
/// sizes at which the model compiles when growing the point's SRAMs makes it compile,
/// else `status` with the compiler's message.
void refused(Result& r, const Point& p, const Model& m, Status status, std::string message) {
  r.status = status;
  r.message = std::move(message);
  const std::vector<GrownSram> g =
      grownSramSizes(p.description, [&](const json& d) { return compilesOn(d, m); });
  if (g.empty())
    return;
  r.status = Status::TooSmall;
  r.message = "compiles with " + formatGrown(g) + "; on this description: " + r.message;
}

std::vector<Result> rowsForAll(const Point& p, const std::vector<Model>& models, Status s,
                               const std::string& message) {
  std::vector<Result> rows;
  for (const Model& m : models) {
    Result r;
    r.point = p.index;
    r.model = m.name;
    r.status = s;
    r.message = message;
    rows.push_back(std::move(r));
  }
  return rows;
}

/// The child of one point: evaluates it and writes its rows to `file`; never returns.
[[noreturn]] void childMain(const Point& p, const std::vector<Model>& models, bool check,
                            const std::string& file) {
  int status = 0;
  try {
    const isa::IsaDescription desc = isa::IsaDescription::loadString(p.description.dump(), p.file);
    json rows = json::array();
    for (const Result& r : evaluatePoint(p, desc, models, check))
      rows.push_back(toJson(r));
    writeFileAtomic(file, rows.dump());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember-dse: point %zu: %s\n", p.index, e.what());
    status = 1;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(status);
}

} // namespace

Result evaluateModel(const Point& p, const isa::IsaDescription& desc, const Model& m, bool check) {
  Result r;
  r.point = p.index;
  r.model = m.name;
  const auto t0 = std::chrono::steady_clock::now();
  partition::PartitionOptions po;
  po.fallback = partition::Fallback::None;
  partition::Plan plan;
  try {
    plan = partition::partition(*m.quantized, desc, po);
  } catch (const Unsupported& e) {
    refused(r, p, m, Status::Unsupported, e.reason());
    return r;
  } catch (const npu::ProgramTooLong& e) {
    refused(r, p, m, Status::CompileError, e.what());
    return r;
  } catch (const std::exception& e) {
    r.status = Status::CompileError;
    r.message = e.what();
    return r;
  }
  std::vector<platform::Report> reports;
  partition::PlanExecutor executor(plan, simRunner(desc, m.name + " on " + p.file, reports));
  TensorMap out;
  try {
    out = executor.run(m.inputs);
  } catch (const NpuFault& e) {
    r.status = Status::Fault;
    r.message = e.reason();
    return r;
  } catch (const std::exception& e) {
    r.status = Status::RunError;
    r.message = e.what();
    return r;
  }
  r.hostSeconds = secondsSince(t0);
  if (reports.size() != 1 || !plan.whole) {
    r.status = Status::CompileError;
    r.message = "the plan is not one NPU program (fallback none)";
    return r;
  }
  const platform::Report& rep = reports.front();
  r.cycles = rep.cycles;
  r.npuSeconds = rep.seconds;
  r.energyUj = rep.energy_total_pj * 1e-6;
  r.macUtilization = rep.mac_utilization;
  for (const auto& s : plan.segments.front().npu->summary.sram) {
    const isa::MemoryDesc* md = desc.findMemory(s.name);
    const std::uint64_t row = md ? md->row_bytes : 1;
    r.sram.push_back({s.name, std::uint64_t(s.peakRows) * row, std::uint64_t(s.rows) * row});
  }
  if (check && m.reference) {
    r.message = compareOutputs(out, *m.reference);
    if (!r.message.empty())
      r.status = Status::Mismatch;
  }
  return r;
}

std::vector<Result> evaluatePoint(const Point& p, const isa::IsaDescription& desc,
                                  const std::vector<Model>& models, bool check) {
  std::vector<Result> rows;
  for (const Model& m : models)
    rows.push_back(evaluateModel(p, desc, m, check));
  return rows;
}

std::vector<Result> runPoints(const std::vector<Point>& points, const std::vector<Model>& models,
                              bool check, unsigned jobs, const std::string& scratch,
                              const Progress& progress) {
  std::filesystem::create_directories(scratch);
  std::vector<std::vector<Result>> byPoint(points.size());
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0, done = 0;
  auto rowsFile = [&](std::size_t i) {
    return (std::filesystem::path(scratch) / ("p" + std::to_string(i) + ".rows.json")).string();
  };
  std::fflush(stdout);
  std::fflush(stderr);
  while (done < points.size()) {
    while (next < points.size() && running.size() < std::max(1u, jobs)) {
      const Point& p = points[next];
      if (!p.invalid.empty()) {
        byPoint[next++] = rowsForAll(p, models, Status::Invalid, p.invalid);
        ++done;
        continue;
      }
      std::filesystem::remove(rowsFile(next));
      const pid_t pid = ::fork();
      if (pid < 0)
        throw Error("ember-dse", "cannot start a process for point " + std::to_string(next));
      if (pid == 0)
        childMain(p, models, check, rowsFile(next));
      running.emplace(pid, next++);
    }
    if (progress)
      progress(done, points.size(), running.size());
    const auto reaped = reapChild(running);
    if (!reaped)
      continue;
    const std::size_t i = reaped->first;
    const int st = reaped->second;
    ++done;
    std::ifstream in(rowsFile(i));
    json rows = json::parse(in, nullptr, false);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && rows.is_array()) {
      for (const json& r : rows)
        byPoint[i].push_back(resultFromJson(r));
    } else {
      const std::string why =
          WIFSIGNALED(st) ? "the process evaluating it died of signal " +
                                std::to_string(WTERMSIG(st)) + " (" + strsignal(WTERMSIG(st)) + ")"
                          : "the process evaluating it exited with status " +
                                std::to_string(WEXITSTATUS(st)) + " (see its message above)";
      byPoint[i] = rowsForAll(points[i], models, Status::Crash, why);
    }
    std::filesystem::remove(rowsFile(i));
  }
  if (progress)
    progress(done, points.size(), 0);
  std::vector<Result> all;
  for (auto& rows : byPoint)
    for (Result& r : rows)
      all.push_back(std::move(r));
  return all;
}

} // namespace ember::dse
