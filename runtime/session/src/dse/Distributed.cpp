// ember-dse on Dask: the plan goes to the Python engine, its rows come back (Distributed.h).
#include "ember/session/dse/Distributed.h"

#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

namespace ember::dse {

using nlohmann::json;

namespace {

/// PYTHONPATH with the build's python/ folder (where `ember` and its extension are) first.
void setPythonPath() {
  const std::string mine = EMBER_DSE_PYTHONPATH;
  if (mine.empty() || !std::filesystem::exists(std::filesystem::path(mine) / "ember"))
    return;
  const char* old = std::getenv("PYTHONPATH");
  const std::string value = old && *old ? mine + ":" + old : mine;
  setenv("PYTHONPATH", value.c_str(), 1);
}

std::vector<char*> argvOf(std::vector<std::string>& args) {
  std::vector<char*> v;
  for (std::string& a : args)
    v.push_back(a.data());
  v.push_back(nullptr);
  return v;
}

json readJson(const std::string& file) {
  std::ifstream in(file);
  json j = json::parse(in, nullptr, false);
  if (!in || j.is_discarded())
    throw Error(file, "cannot be read as JSON");
  return j;
}

/// The points' areas from the engine's list (a record per point, null for an invalid
/// one).
std::vector<PointArea> areasOf(const std::vector<Point>& points, const json& list,
                               const std::string& file) {
  if (!list.is_array() || list.size() != points.size())
    throw Error(file, "holds no area per point (" + std::to_string(points.size()) + " points)");
  std::vector<PointArea> out(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    out[i] =
        !points[i].invalid.empty() || list[i].is_null() ? skippedArea() : areaFromJson(list[i]);
  }
  return out;
}

} // namespace

std::string defaultDseCache() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (std::filesystem::path(x) / "ember" / "dse").string();
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home && *home ? home : ".") / ".cache" / "ember" / "dse").string();
}

std::vector<std::string> pythonCommand() {
  const char* env = std::getenv("EMBER_PYTHON");
  return {env && *env ? env : EMBER_DSE_PYTHON, "-m", "ember.dse"};
}

std::vector<Result> runOnDask(const std::vector<Point>& points,
                              const std::vector<std::pair<std::string, std::string>>& models,
                              const DaskRequest& r, std::vector<PointArea>* areas) {
  const std::filesystem::path dir = std::filesystem::path(r.out) / ".dse";
  std::filesystem::create_directories(dir);
  json plan;
  plan["points"] = json::array();
  for (const Point& p : points)
    plan["points"].push_back({{"index", p.index},
                              {"file", p.file},
                              {"invalid", p.invalid},
                              {"description", p.description}});
  plan["models"] = json::array();
  for (const auto& [path, name] : models)
    plan["models"].push_back({{"path", std::filesystem::absolute(path).string()}, {"name", name}});
  plan["scheduler"] = r.scheduler;
  plan["cache"] = r.cache.empty() ? defaultDseCache() : r.cache;
  plan["jobs"] = r.jobs;
  plan["retries"] = r.retries;
  plan["check"] = r.check;
  plan["resume"] = r.resume;
  plan["progress"] = r.progress;
  plan["calibrate"] = r.calibrate;
  plan["input_shapes"] = r.inputShapes;
  const std::string planFile = (dir / "plan.json").string();
  const std::string rowsFile = (dir / "rows.json").string();
  const std::string areasFile = (dir / "areas.json").string();
  if (r.area)
    plan["area"] = {{"yosys", r.area->yosys},
                    {"rtl", r.area->rtlDir},
                    {"cache", r.area->cacheDir},
                    {"file", areasFile}};
  writeFileAtomic(planFile, plan.dump());
  std::filesystem::remove(rowsFile);
  std::vector<std::string> cmd = pythonCommand();
  cmd.insert(cmd.end(), {"run-plan", planFile, rowsFile});
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0)
    throw Error("ember-dse", "cannot start " + cmd.front());
  if (pid == 0) {
    setPythonPath();
    std::vector<char*> argv = argvOf(cmd);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "ember-dse: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("ember-dse", "the Dask engine (" + cmd.front() +
                                 " -m ember.dse run-plan) failed (its message is above)");
  std::vector<Result> rows;
  for (const json& row : readJson(rowsFile))
    rows.push_back(resultFromJson(row));
  if (r.area && areas)
    *areas = areasOf(points, readJson(areasFile), areasFile);
  std::filesystem::remove_all(dir);
  return rows;
}

void execEngine(const std::vector<std::string>& args) {
  std::vector<std::string> cmd = pythonCommand();
  cmd.insert(cmd.end(), args.begin(), args.end());
  setPythonPath();
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<char*> argv = argvOf(cmd);
  ::execvp(argv[0], argv.data());
  throw Error("ember-dse", "cannot run " + cmd.front() + ": " + std::strerror(errno));
}

void saveSweepArgs(const std::string& out, const std::vector<std::string>& args) {
  std::filesystem::create_directories(out);
  json j{{"args", args}, {"cwd", std::filesystem::current_path().string()}};
  writeFileAtomic((std::filesystem::path(out) / "dse-args.json").string(), j.dump(1) + "\n");
}

std::vector<std::string> resumedArgs(const std::string& out, const std::string& scheduler) {
  const std::string file = (std::filesystem::path(out) / "dse-args.json").string();
  if (!std::filesystem::exists(file))
    throw Error(file, "does not exist: --resume continues a sweep run with --scheduler or "
                      "--cache (which saves its command line there)");
  const json j = readJson(file);
  if (j.value("cwd", std::string()) != std::filesystem::current_path().string())
    throw Error(file, "was written in " + j.value("cwd", std::string()) +
                          ": run --resume from that folder (the sweep's paths are relative to it)");
  std::vector<std::string> args;
  const std::vector<std::string> saved = j.at("args").get<std::vector<std::string>>();
  for (std::size_t i = 0; i < saved.size(); ++i) {
    if (!scheduler.empty() && saved[i] == "--scheduler" && i + 1 < saved.size()) {
      ++i;
      continue;
    }
    args.push_back(saved[i]);
  }
  if (!scheduler.empty())
    args.insert(args.end(), {"--scheduler", scheduler});
  args.insert(args.end(), {"--resume", out});
  return args;
}

} // namespace ember::dse
