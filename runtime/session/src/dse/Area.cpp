// ember-dse --area: the NPU's area per point from rtl/cmake/area.py, cached (Area.h).
#include "ember/session/dse/Area.h"
#include "Children.h"

#include "ember/isa/codegen.h"
#include "ember/isa/description.h"
#include "ember/isa/hash.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ember::dse {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kWhat = "ember-dse --area";

bool isExecutable(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

/// `name` when it holds a '/', else the first executable `name` in a folder of $PATH;
/// "" when there is none.
std::string findProgram(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return isExecutable(name) ? fs::absolute(name).string() : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (fs::path(dir.empty() ? "." : dir) / name).string();
    if (isExecutable(candidate))
      return fs::absolute(candidate).string();
  }
  return "";
}

/// Starts `argv` with stdout and stderr going to `log` (or to fd `outFd` when >= 0).
pid_t spawn(const std::vector<std::string>& argv, const std::string& log, int outFd = -1) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (outFd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, outFd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, outFd, STDERR_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw Error(kWhat, "cannot start " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

/// The output of `argv` (stdout and stderr), or throws naming the program.
std::string capture(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw Error(kWhat, "cannot create a pipe");
  pid_t pid = -1;
  try {
    pid = spawn(argv, "", fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, std::size_t(n));
  ::close(fds[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    throw Error(kWhat, argv[0] + " " + argv[1] + " failed: " + out);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return out;
}

std::string readText(const std::string& path, const std::string& what) {
  try {
    return readFileBytes(path);
  } catch (const std::exception& e) {
    throw Error(kWhat, "cannot read " + what + " " + path + ": " + e.what());
  }
}

std::string rtlDirOf(const AreaRequest& r) {
#ifdef EMBER_DSE_RTL_DIR
  return r.rtlDir.empty() ? std::string(EMBER_DSE_RTL_DIR) : r.rtlDir;
#else
  return r.rtlDir;
#endif
}

std::string pythonPath() {
#ifdef EMBER_DSE_PYTHON
  if (isExecutable(EMBER_DSE_PYTHON))
    return EMBER_DSE_PYTHON;
#endif
  return findProgram("python3");
}

/// rtl/src/sources.txt: one module per line (NAME.sv in rtl/src), "NAME macro" for a
/// black box; '#' starts a comment line.
void readSourceList(const fs::path& rtl, AreaTools& t) {
  const fs::path list = rtl / "src" / "sources.txt";
  std::stringstream in(readText(list.string(), "the RTL source list"));
  std::string line;
  while (std::getline(in, line)) {
    std::stringstream words(line);
    std::string name, tag;
    words >> name >> tag;
    if (name.empty() || name[0] == '#')
      continue;
    const std::string file = (rtl / "src" / (name + ".sv")).string();
    if (!fs::exists(file))
      throw Error(kWhat, list.string() + " names " + name + ", but " + file + " does not exist");
    (tag == "macro" ? t.macros : t.sources).push_back(file);
  }
  if (t.sources.empty())
    throw Error(kWhat, list.string() + " lists no RTL source");
}

std::string hex(const std::string& bytes) {
  return isa::toHex(isa::sha256(bytes));
}

/// area.py's SPEC argument: fields split on ':' and files on ',', so no path may hold
/// either.
std::string joinPaths(const std::vector<std::string>& files) {
  std::string s;
  for (const std::string& f : files) {
    if (f.find_first_of(":,") != std::string::npos)
      throw Error(kWhat, "area.py cannot take a path with ':' or ',': " + f);
    s += (s.empty() ? "" : ",") + f;
  }
  return s;
}

/// The generated files of one description (what the key hashes and area.py reads).
struct Generated {
  std::string package, decoder;
};

Generated generate(const json& description, const std::string& file) {
  const isa::IsaDescription d = isa::IsaDescription::loadString(description.dump(), file);
  return {isa::generateSvPackage(d), isa::generateSvDecoder(d)};
}

std::string keyOf(const json& description, const Generated& g, const AreaTools& t) {
  return hex("ember-dse area 1\ndescription\n" + description.dump() + "\npackage\n" + g.package +
             "\ndecoder\n" + g.decoder + "\nflow " + t.flowDigest + "\n");
}

PointArea fromRecord(const json& j) {
  PointArea a;
  a.state = PointArea::State::Ok;
  a.cells = j.at("cells").get<std::uint64_t>();
  a.flipFlops = j.at("flip_flops").get<std::uint64_t>();
  a.sramBits = j.at("sram_bits").get<std::uint64_t>();
  a.seconds = j.at("seconds").get<double>();
  a.key = j.at("key").get<std::string>();
  a.detail = j.value("area", json::object());
  return a;
}

/// A cached area for `key`, or nothing (absent or unreadable: synthesized again).
std::optional<PointArea> readCache(const AreaTools& t, const std::string& key) {
  const fs::path file = fs::path(t.cacheDir) / (key + ".json");
  std::ifstream in(file);
  if (!in)
    return std::nullopt;
  const json j = json::parse(in, nullptr, false);
  try {
    if (!j.is_object() || j.value("key", "") != key)
      return std::nullopt;
    PointArea a = fromRecord(j);
    a.cached = true;
    return a;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// The lines of a failed area.py log worth showing: Yosys' ERROR lines and area.py's
/// own, else the last few lines.
std::string logExcerpt(const std::string& log) {
  std::vector<std::string> lines, picked;
  std::stringstream in(log);
  for (std::string l; std::getline(in, l);)
    if (!l.empty())
      lines.push_back(l);
  for (const std::string& l : lines)
    if (l.find("ERROR") != std::string::npos || l.rfind("area.py:", 0) == 0 ||
        l.find("Error") != std::string::npos)
      picked.push_back(l);
  if (picked.empty())
    picked.assign(lines.size() > 6 ? lines.end() - 6 : lines.begin(), lines.end());
  std::string s;
  for (const std::string& l : picked)
    s += (s.empty() ? "" : "\n") + l;
  return s.empty() ? "(no output)" : s;
}

/// One synthesis: the key's first point, the points sharing the key, its folder.
struct Job {
  std::size_t first = 0;
  std::vector<std::size_t> points;
  Generated files;
  std::string dir;
  std::chrono::steady_clock::time_point start;
};

pid_t startJob(Job& job, const Point& p, const AreaTools& t) {
  fs::create_directories(job.dir);
  const std::string pkg = (fs::path(job.dir) / "ember_isa_pkg.sv").string();
  const std::string dec = (fs::path(job.dir) / "ember_decode.sv").string();
  const std::string desc = (fs::path(job.dir) / "description.json").string();
  writeFileAtomic(pkg, job.files.package);
  writeFileAtomic(dec, job.files.decoder);
  writeFileAtomic(desc, p.description.dump(1) + "\n");
  std::vector<std::string> npu{pkg, dec};
  npu.insert(npu.end(), t.sources.begin(), t.sources.end());
  const std::string spec = "p=" + joinPaths({desc}) + "::" + joinPaths({pkg, dec}) + ":" +
                           joinPaths(npu) + ":" + joinPaths(t.macros);
  job.start = std::chrono::steady_clock::now();
  return spawn({t.python, t.areaScript, t.yosys, (fs::path(job.dir) / "area.json").string(), spec},
               (fs::path(job.dir) / "log.txt").string());
}

/// The area of a finished job from its exit status and area.py's JSON.
PointArea finishJob(const Job& job, int status, const AreaTools& t, const std::string& key) {
  PointArea a;
  a.key = key;
  const std::string log = [&] {
    try {
      return readFileBytes((fs::path(job.dir) / "log.txt").string());
    } catch (const std::exception&) {
      return std::string();
    }
  }();
  a.detail = {{"log", log}}; // the whole log of a failure, for OUT/area/pN.json
  if (WIFSIGNALED(status)) {
    a.state = PointArea::State::Failed;
    a.message = "area.py died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                strsignal(WTERMSIG(status)) + ")";
    return a;
  }
  if (WEXITSTATUS(status) != 0) {
    a.state = PointArea::State::Failed;
    a.message = "synthesis failed (area.py exit status " + std::to_string(WEXITSTATUS(status)) +
                ", Yosys " + t.yosys + "): " + logExcerpt(log);
    return a;
  }
  std::ifstream in(fs::path(job.dir) / "area.json");
  const json j = json::parse(in, nullptr, false);
  try {
    const json& rec = j.at("p");
    const json& npu = rec.at("npu");
    a.state = PointArea::State::Ok;
    a.cells = npu.at("cells").get<std::uint64_t>();
    a.flipFlops = npu.at("flip_flops").get<std::uint64_t>();
    for (const auto& [name, bits] : rec.at("sram_bits").items())
      a.sramBits += bits.get<std::uint64_t>();
    a.seconds = npu.at("seconds").get<double>();
    a.detail = rec;
  } catch (const std::exception& e) {
    a = PointArea{};
    a.key = key;
    a.detail = {{"log", log}};
    a.state = PointArea::State::Failed;
    a.message = std::string("area.py wrote no NPU figures (") + e.what() + "): " + logExcerpt(log);
  }
  return a;
}

void writeCache(const AreaTools& t, const PointArea& a) {
  try {
    fs::create_directories(t.cacheDir);
    json j = toJson(a);
    j["yosys"] = t.yosysVersion;
    writeFileAtomic((fs::path(t.cacheDir) / (a.key + ".json")).string(), j.dump(1) + "\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember-dse: warning: cannot write the area cache %s: %s\n",
                 t.cacheDir.c_str(), e.what());
  }
}

} // namespace

const char* areaStateName(PointArea::State s) {
  switch (s) {
  case PointArea::State::Ok:
    return "ok";
  case PointArea::State::Failed:
    return "failed";
  case PointArea::State::Skipped:
    return "skipped";
  }
  return "failed";
}

json toJson(const PointArea& a) {
  return {{"key", a.key},
          {"state", areaStateName(a.state)},
          {"cells", a.cells},
          {"flip_flops", a.flipFlops},
          {"sram_bits", a.sramBits},
          {"seconds", a.seconds},
          {"cached", a.cached},
          {"message", a.message},
          {"area", a.detail.is_null() ? json::object() : a.detail}};
}

PointArea skippedArea() {
  PointArea a;
  a.message = "not synthesized: the description is invalid";
  return a;
}

PointArea areaFromJson(const json& j) {
  PointArea a;
  try {
    const std::string state = j.at("state").get<std::string>();
    a.state = state == "ok"        ? PointArea::State::Ok
              : state == "skipped" ? PointArea::State::Skipped
                                   : PointArea::State::Failed;
    a.key = j.at("key").get<std::string>();
    a.cells = j.at("cells").get<std::uint64_t>();
    a.flipFlops = j.at("flip_flops").get<std::uint64_t>();
    a.sramBits = j.at("sram_bits").get<std::uint64_t>();
    a.seconds = j.at("seconds").get<double>();
    a.cached = j.at("cached").get<bool>();
    a.message = j.at("message").get<std::string>();
    a.detail = j.value("area", json::object());
  } catch (const json::exception& e) {
    throw Error(kWhat, std::string("an area record from a worker is malformed: ") + e.what());
  }
  return a;
}

PointArea synthesizeAreaHere(const Point& point, const AreaRequest& request) {
  static std::mutex mu;
  static std::map<std::string, AreaTools> found; // by request: `yosys -V` and the hash once
  const std::string id = request.yosys + '\n' + request.rtlDir + '\n' + request.cacheDir;
  AreaTools tools;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = found.find(id);
    if (it == found.end())
      it = found.emplace(id, findAreaTools(request)).first;
    tools = it->second;
  }
  std::string scratch = (fs::temp_directory_path() / "ember-area-XXXXXX").string();
  if (!::mkdtemp(scratch.data()))
    throw Error(kWhat, "cannot make a scratch folder in " + fs::temp_directory_path().string() +
                           ": " + std::strerror(errno));
  std::vector<PointArea> a;
  try {
    a = synthesizeAreas({point}, tools, 1, scratch, {});
  } catch (...) {
    std::error_code ec;
    fs::remove_all(scratch, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
  return a.front();
}

std::string defaultAreaCache() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "ember" / "area").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".cache" / "ember" / "area").string();
  return ".ember-area-cache";
}

AreaTools findAreaTools(const AreaRequest& request) {
  AreaTools t;
  t.yosys = findProgram(request.yosys);
  if (t.yosys.empty())
    throw Error(kWhat, request.yosys.find('/') == std::string::npos
                           ? "Yosys not found: no '" + request.yosys +
                                 "' on PATH (install it, e.g. Debian's yosys package, or give "
                                 "--yosys FILE)"
                           : "Yosys not found: " + request.yosys + " is not an executable file");
  t.python = pythonPath();
  if (t.python.empty())
    throw Error(kWhat, "Python not found: area.py needs python3 on PATH");
  const std::string rtl = rtlDirOf(request);
  if (rtl.empty() || !fs::is_directory(rtl))
    throw Error(kWhat, "the RTL sources are not found: no folder '" + rtl +
                           "' (give --rtl DIR, the rtl/ folder of the Ember sources)");
  t.areaScript = (fs::path(rtl) / "cmake" / "area.py").string();
  const std::string script = readText(t.areaScript, "the area script");
  readSourceList(rtl, t);
  t.yosysVersion = capture({t.yosys, "-V"});
  t.cacheDir = request.cacheDir.empty() ? defaultAreaCache() : request.cacheDir;
  std::string flow = "area.py\n" + script + "\nyosys " + t.yosysVersion + "\n";
  for (const auto* list : {&t.sources, &t.macros})
    for (const std::string& f : *list)
      flow += (list == &t.macros ? "macro " : "source ") + fs::path(f).filename().string() + "\n" +
              readText(f, "the RTL source") + "\n";
  t.flowDigest = hex(flow);
  return t;
}

std::string areaKey(const json& description, const std::string& file, const AreaTools& tools) {
  return keyOf(description, generate(description, file), tools);
}

std::vector<PointArea> synthesizeAreas(const std::vector<Point>& points, const AreaTools& tools,
                                       unsigned jobs, const std::string& scratch,
                                       const AreaProgress& progress) {
  std::vector<PointArea> out(points.size());
  std::vector<Job> todo;
  std::map<std::string, std::size_t> jobOfKey;
  std::vector<std::string> keys(points.size());
  std::size_t done = 0, cached = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    if (!p.invalid.empty()) {
      out[i] = skippedArea();
      ++done;
      continue;
    }
    Generated g;
    try {
      g = generate(p.description, p.file);
    } catch (const std::exception& e) {
      out[i].state = PointArea::State::Failed;
      out[i].message = std::string("cannot generate the RTL: ") + e.what();
      ++done;
      continue;
    }
    keys[i] = keyOf(p.description, g, tools);
    if (std::optional<PointArea> hit = readCache(tools, keys[i])) {
      out[i] = std::move(*hit);
      ++done;
      ++cached;
      continue;
    }
    const auto [it, fresh] = jobOfKey.emplace(keys[i], todo.size());
    if (fresh) {
      Job j;
      j.first = i;
      j.files = std::move(g);
      j.dir = (fs::path(scratch) / ("p" + std::to_string(p.index))).string();
      todo.push_back(std::move(j));
    }
    todo[it->second].points.push_back(i);
  }
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  while (done < points.size()) {
    while (next < todo.size() && running.size() < std::max(1u, jobs)) {
      Job& j = todo[next];
      try {
        running.emplace(startJob(j, points[j.first], tools), next);
      } catch (const std::exception& e) {
        for (std::size_t i : j.points) {
          out[i].state = PointArea::State::Failed;
          out[i].key = keys[i];
          out[i].message = e.what();
          ++done;
        }
      }
      ++next;
    }
    if (progress)
      progress(done, points.size(), cached, running.size());
    const auto reaped = reapChild(running);
    if (!reaped)
      continue;
    const Job& j = todo[reaped->first];
    const PointArea a = finishJob(j, reaped->second, tools, keys[j.first]);
    if (a.state == PointArea::State::Ok)
      writeCache(tools, a);
    for (std::size_t i : j.points) {
      out[i] = a;
      ++done;
    }
    std::error_code ec;
    fs::remove_all(j.dir, ec);
  }
  if (progress)
    progress(done, points.size(), cached, 0);
  return out;
}

} // namespace ember::dse
