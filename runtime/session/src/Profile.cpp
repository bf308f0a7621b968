// ember-run --profile's formats (Profile.h).
#include "ember/session/Profile.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>

namespace ember::session {

namespace {

double totalSeconds(const std::vector<session::OpTime>& ops) {
  double t = 0;
  for (const session::OpTime& op : ops)
    t += op.seconds;
  return t;
}

/// `s` in at most `width` characters: its end, which tells a layer from its neighbours
/// ("/features/features.12/conv/conv.0/conv.0.0/Conv").
std::string tail(const std::string& s, size_t width) {
  return s.size() <= width ? s : "..." + s.substr(s.size() - (width - 3));
}

std::string format(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

} // namespace

std::string formatProfile(const std::vector<session::OpTime>& ops, size_t top) {
  const double total = totalSeconds(ops);
  std::vector<size_t> order(ops.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ops[a].seconds > ops[b].seconds; });
  const size_t shown = top ? std::min(top, ops.size()) : ops.size();
  std::string out = "profile (cpu): " + std::to_string(ops.size()) + " operations, " +
                    format("%.3f", 1e3 * total) + " ms in all";
  out +=
      shown < ops.size() ? ", the " + std::to_string(shown) + " slowest:\n" : ", slowest first:\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %5s  %-40s %-20s %10s %7s %7s\n", "#", "node", "kind", "ms",
                "share", "cumul.");
  out += line;
  double cumulative = 0;
  for (size_t r = 0; r < shown; ++r) {
    const session::OpTime& op = ops[order[r]];
    const double share = total > 0 ? op.seconds / total : 0;
    cumulative += share;
    std::snprintf(line, sizeof line, "  %5zu  %-40s %-20.20s %10.4f %6.1f%% %6.1f%%\n", order[r],
                  tail(op.name, 40).c_str(), op.kind.c_str(), 1e3 * op.seconds, 100 * share,
                  100 * cumulative);
    out += line;
  }
  std::map<std::string, std::pair<size_t, double>> kinds;
  for (const session::OpTime& op : ops) {
    kinds[op.kind].first += 1;
    kinds[op.kind].second += op.seconds;
  }
  std::vector<std::pair<std::string, std::pair<size_t, double>>> byKind(kinds.begin(), kinds.end());
  std::stable_sort(byKind.begin(), byKind.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  out += "  per kind:\n";
  for (const auto& [kind, v] : byKind) {
    std::snprintf(line, sizeof line, "  %-20.20s %5zu op(s) %10.4f ms %6.1f%%\n", kind.c_str(),
                  v.first, 1e3 * v.second, total > 0 ? 100 * v.second / total : 0.0);
    out += line;
  }
  return out;
}

std::string profileJson(const std::vector<session::OpTime>& ops) {
  const double total = totalSeconds(ops);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (size_t i = 0; i < ops.size(); ++i)
    list.push_back({{"index", i},
                    {"name", ops[i].name},
                    {"kind", ops[i].kind},
                    {"ms", 1e3 * ops[i].seconds},
                    {"share", total > 0 ? ops[i].seconds / total : 0.0}});
  nlohmann::ordered_json doc = {{"total_ms", 1e3 * total}, {"ops", std::move(list)}};
  return doc.dump(2) + "\n";
}

std::string profileTrace(const std::vector<session::OpTime>& ops) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "ember cpu"}}}});
  double at = 0;
  for (const session::OpTime& op : ops) {
    const double us = 1e6 * op.seconds;
    events.push_back({{"name", op.name},
                      {"cat", op.kind},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", at},
                      {"dur", us}});
    at += us;
  }
  nlohmann::ordered_json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return doc.dump(1) + "\n";
}

} // namespace ember::session
