// One ONNX node-test case: import, run on the interpreter, compare.
#include "Conformance.h"

#include "OnnxTensor.h"
#include "ember/backend/Backend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/importer/OnnxOpImporter.h"
#include "ember/support/Error.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace ember::conformance {

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

/// "" when `got` matches `want` (rtol/atol for floats, exact otherwise), else why not.
std::string compare(const Tensor& got, const Tensor& want) {
  if (got.kind() != want.kind())
    return std::string("element kind ") + elemKindName(got.kind()) + ", expected " +
           elemKindName(want.kind());
  if (got.dims() != want.dims())
    return "shape " + shapeToString(got.dims()) + ", expected " + shapeToString(want.dims());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < got.size(); ++i) {
    bool ok;
    if (got.kind() == ElemKind::Float32) {
      double a = got.getAsDouble(i), b = want.getAsDouble(i);
      ok = (std::isnan(a) && std::isnan(b)) || a == b ||
           std::fabs(a - b) <= kAtol + kRtol * std::fabs(b);
    } else {
      ok = got.getAsInt(i) == want.getAsInt(i);
    }
    if (!ok && bad++ == 0)
      first = i;
  }
  if (bad == 0)
    return "";
  std::ostringstream os;
  os.precision(9);
  os << bad << " of " << got.size() << " elements differ; first at " << first << ": got "
     << got.getAsDouble(first) << ", expected " << want.getAsDouble(first);
  return os.str();
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Distinct op types (domain-qualified when not default) and whether Ember claims all.
void inspectModel(const onnx::ModelProto& m, CaseResult& r) {
  std::set<std::string> ops;
  bool claimed = true;
  for (const auto& n : m.graph().node()) {
    bool defaultDomain = n.domain().empty() || n.domain() == "ai.onnx";
    ops.insert(defaultDomain ? n.op_type() : n.domain() + "::" + n.op_type());
    bool subgraph = false;
    for (const auto& a : n.attribute())
      subgraph |= a.has_g() || a.graphs_size() > 0;
    claimed &= defaultDomain && !subgraph && findOnnxOp(n.op_type()) != nullptr;
  }
  r.ops.assign(ops.begin(), ops.end());
  r.claimed = claimed;
  r.group = caseGroup(r.name, r.ops);
}

/// Imports `model`. When an operand that decides a shape (Resize's scales, OneHot's
/// depth, Compress's condition) is a graph input, the import fails with "must be known
/// at compile time"; then the trailing inputs (never input 0, the data) are bound as
/// constants, one more at a time, as a user of such a model would bind them
/// (OnnxImportOptions::constantInputs). An input the message names is bound first: the
/// operand itself, or an integer input the operand is computed from alone.
std::unique_ptr<Module> importBinding(const fs::path& model, OnnxImportOptions& opts,
                                      TensorMap& inputs,
                                      const std::vector<std::string>& inputNames) {
  for (;;) {
    try {
      return importOnnxFile(model.string(), opts);
    } catch (const Unsupported& e) {
      const std::string what = e.what();
      if (what.find("must be known at compile time") == std::string::npos)
        throw;
      // The graph input the message names (as cli_conformance.py binds it): the operand
      // itself, or an integer input it is computed from alone (a window's size).
      bool bound = false;
      for (const std::string named :
           {"it is the graph input '", "it is computed from the graph input '"}) {
        const size_t at = what.find(named);
        if (at == std::string::npos)
          continue;
        const size_t from = at + named.size();
        auto it = inputs.find(what.substr(from, what.find('\'', from) - from));
        const bool derived = named.find("computed") != std::string::npos;
        if (it == inputs.end() || (derived && !isIntElemKind(it->second.kind())))
          continue;
        opts.constantInputs.emplace(it->first, std::move(it->second));
        inputs.erase(it);
        bound = true;
      }
      if (bound)
        continue;
      // Bind the next input from the end that is still a run-time input.
      size_t i = inputNames.size();
      while (i > 1 && !inputs.count(inputNames[i - 1]))
        --i;
      if (i <= 1)
        throw;
      auto it = inputs.find(inputNames[i - 1]);
      opts.constantInputs.emplace(it->first, std::move(it->second));
      inputs.erase(it);
    }
  }
}

/// Runs one test_data_set folder; returns "" on success, else the mismatch.
std::string runDataSet(const fs::path& model, const onnx::GraphProto& g, const fs::path& set) {
  std::set<std::string> inits;
  for (const auto& t : g.initializer())
    inits.insert(t.name());
  std::vector<std::string> inputNames;
  for (const auto& vi : g.input())
    if (!inits.count(vi.name()))
      inputNames.push_back(vi.name());
  // Sequence / optional / map values are not TensorProto files: Ember has no such types.
  for (const auto* list : {&g.input(), &g.output()})
    for (const auto& vi : *list)
      if (!vi.type().has_tensor_type())
        throw Unsupported(model.string(), "value '" + vi.name() + "' is not a tensor");

  OnnxImportOptions opts;
  TensorMap inputs;
  for (size_t i = 0;; ++i) {
    fs::path p = set / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p))
      break;
    if (i >= inputNames.size())
      throw Error(p.string(), "more input files than graph inputs");
    Tensor t = readOnnxTensorFile(p.string());
    // Shape-like operands (Reshape's shape, Slice's starts, ...) are int64: constants.
    if (t.kind() == ElemKind::Int64)
      opts.constantInputs.emplace(inputNames[i], std::move(t));
    else
      inputs.emplace(inputNames[i], std::move(t));
  }
  std::unique_ptr<Module> mod = importBinding(model, opts, inputs, inputNames);
  Function* f = mod->functions().at(0).get();
  std::unique_ptr<Backend> backend = createBackend("interp");
  std::unique_ptr<CompiledFunction> exe = backend->compile(*f);
  TensorMap runInputs;
  for (auto& [name, t] : inputs)
    if (mod->getPlaceholder(name))
      runInputs.emplace(name, std::move(t));
  TensorMap outputs = exe->run(runInputs);

  for (int i = 0; i < g.output_size(); ++i) {
    fs::path p = set / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(p))
      continue;
    Tensor want = readOnnxTensorFile(p.string());
    auto it = outputs.find(g.output(i).name());
    if (it == outputs.end())
      return "output '" + g.output(i).name() + "' was not produced";
    std::string why = compare(it->second, want);
    if (!why.empty())
      return set.filename().string() + ": output '" + g.output(i).name() + "': " + why;
  }
  return "";
}

} // namespace

std::string caseGroup(const std::string& caseName, const std::vector<std::string>& ops) {
  if (ops.size() == 1)
    return ops[0];
  auto squash = [](const std::string& s) {
    std::string out;
    for (char c : s)
      if (c != '_')
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::string name = squash(caseName.rfind("test_", 0) == 0 ? caseName.substr(5) : caseName);
  std::string best;
  for (const std::string& op : ops) {
    std::string s = squash(op);
    if (name.rfind(s, 0) == 0 && s.size() > best.size())
      best = op;
  }
  return best.empty() ? "(multi-node)" : best;
}

CaseResult runCase(const fs::path& dir) {
  CaseResult r;
  r.name = dir.filename().string();
  r.group = "(unreadable)";
  fs::path model = dir / "model.onnx";
  try {
    onnx::ModelProto m;
    if (!m.ParseFromString(readFile(model)))
      throw Error(model.string(), "cannot parse the model");
    inspectModel(m, r);
    std::vector<fs::path> sets;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(e.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty())
      throw Error(dir.string(), "no test_data_set_* folder");
    for (const fs::path& set : sets) {
      std::string why = runDataSet(model, m.graph(), set);
      if (!why.empty()) {
        r.status = Status::Fail;
        r.reason = why;
        return r;
      }
    }
    r.status = Status::Pass;
  } catch (const Unsupported& e) {
    r.status = Status::Unsupported;
    r.reason = e.what();
  } catch (const std::exception& e) {
    r.status = Status::Fail;
    r.reason = e.what();
  }
  return r;
}

CaseResult runCaseIsolated(const fs::path& dir, unsigned timeoutSeconds) {
  int fds[2];
  if (pipe(fds) != 0)
    return runCase(dir);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return runCase(dir);
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(timeoutSeconds);
    CaseResult r = runCase(dir);
    nlohmann::json j = {{"status", static_cast<int>(r.status)},
                        {"claimed", r.claimed},
                        {"group", r.group},
                        {"ops", r.ops},
                        {"reason", r.reason}};
    std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const char* p = s.data();
    size_t left = s.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0)
        break;
      p += n;
      left -= static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string data;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0)
      break;
    data.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);

  CaseResult r;
  r.name = dir.filename().string();
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && !data.empty()) {
    nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
    if (!j.is_discarded()) {
      r.status = static_cast<Status>(j["status"].get<int>());
      r.claimed = j["claimed"].get<bool>();
      r.group = j["group"].get<std::string>();
      r.ops = j["ops"].get<std::vector<std::string>>();
      r.reason = j["reason"].get<std::string>();
      return r;
    }
  }
  // The child died: inspect the model here to know which operators were involved.
  onnx::ModelProto m;
  r.group = "(unreadable)";
  if (m.ParseFromString(readFile(dir / "model.onnx")))
    inspectModel(m, r);
  r.status = Status::Fail;
  if (WIFSIGNALED(wstatus))
    r.reason = WTERMSIG(wstatus) == SIGALRM
                   ? "timed out after " + std::to_string(timeoutSeconds) + " s"
                   : std::string("crashed: ") + strsignal(WTERMSIG(wstatus));
  else
    r.reason = "the case's process exited with status " + std::to_string(WEXITSTATUS(wstatus));
  return r;
}

} // namespace ember::conformance
