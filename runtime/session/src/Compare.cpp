// ember-run --compare: the cross-check table.
#include "ember/session/Compare.h"

#include "ember/session/RunUtil.h"

#include "ember/support/Error.h"
#include "ember/support/Format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace ember::session {

namespace {

std::string cell(const std::string& s, size_t w) {
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

} // namespace

double cosineSimilarity(const Tensor& a, const Tensor& b) {
  if (a.size() != b.size())
    return 0;
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    double x = a.getAsDouble(i), y = b.getAsDouble(i);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  if (aa == 0 && bb == 0)
    return 1;
  if (aa == 0 || bb == 0)
    return 0;
  return ab / std::sqrt(aa * bb);
}

double top1Agreement(const Tensor& a, const Tensor& b) {
  if (a.size() != b.size() || a.size() == 0)
    return 0;
  const int64_t cols = a.dims().empty() ? 1 : std::max<int64_t>(1, a.dims().back());
  const int64_t rows = a.size() / cols;
  int64_t same = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t ia = 0, ib = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (a.getAsDouble(r * cols + c) > a.getAsDouble(r * cols + ia))
        ia = c;
      if (b.getAsDouble(r * cols + c) > b.getAsDouble(r * cols + ib))
        ib = c;
    }
    same += ia == ib;
  }
  return double(same) / double(rows);
}

CompareResult compareRuns(const std::vector<std::string>& outputNames,
                          const std::vector<DeviceOutputs>& runs, bool exact,
                          const std::map<std::string, Tensor>* floatRef) {
  CompareResult res;
  std::string& t = res.table;
  const DeviceOutputs& ref = runs.front();
  t += "cross-check (" + std::string(exact ? "int8, must be bit-exact" : "float32") +
       ", reference: " + ref.device + ")\n";
  t += "  " + cell("output", 24) + cell("device", 8) + cell(exact ? "bit-exact" : "agrees", 10) +
       cell("max diff", 12) + (floatRef ? cell("cosine vs float", 17) + "top-1 vs float" : "") +
       "\n";
  for (const std::string& name : outputNames) {
    for (const DeviceOutputs& d : runs) {
      auto it = d.outputs.find(name);
      auto rit = ref.outputs.find(name);
      std::string verdict = "-", diff = "-";
      if (&d != &ref) {
        double err = (it == d.outputs.end() || rit == ref.outputs.end())
                         ? std::numeric_limits<double>::infinity()
                         : maxAbsDiff(rit->second, it->second);
        double tol = exact ? 0.0 : 1e-4 * std::max(1.0, maxAbs(rit->second));
        bool ok = err <= tol;
        verdict = ok ? "yes" : "NO";
        diff = formatNumber("%.3g", err);
        if (!ok)
          res.mismatch.push_back("output '" + name + "' on " + d.device);
      }
      std::string line =
          "  " + cell(name, 24) + cell(d.device, 8) + cell(verdict, 10) + cell(diff, 12);
      if (floatRef && it != d.outputs.end()) {
        auto fit = floatRef->find(name);
        if (fit != floatRef->end())
          line += cell(formatNumber("%.6f", cosineSimilarity(fit->second, it->second)), 17) +
                  formatNumber("%.1f%%", 100.0 * top1Agreement(fit->second, it->second));
      }
      t += line + "\n";
    }
  }
  for (const DeviceOutputs& d : runs) {
    t += "  " + cell(d.device, 8) + formatNumber("run %.3f s", d.runSeconds);
    if (d.npu) {
      const platform::Report& r = *d.npu;
      t += formatNumber(", NPU %.0f cycles", double(r.cycles)) +
           formatNumber(" (%.3f ms", r.seconds * 1e3) +
           formatNumber(" at %.0f MHz)", double(r.clock_hz) / 1e6) +
           formatNumber(", energy %.3f uJ", r.energy_total_pj / 1e6) +
           formatNumber(", MAC utilisation %.1f%%", 100.0 * r.mac_utilization);
    }
    t += "\n";
  }
  return res;
}

std::string compareNpuRuns(const std::vector<platform::Report>& a, const std::string& an,
                           const std::vector<platform::Report>& b, const std::string& bn) {
  if (a.size() != b.size())
    return "different numbers of NPU segments (" + an + " " + std::to_string(a.size()) + ", " + bn +
           " " + std::to_string(b.size()) + ")";
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::string d = compareNpuReports(a[k], an, b[k], bn); !d.empty())
      return a.size() > 1 ? "NPU segment " + std::to_string(k) + ": " + d : d;
  return "";
}

std::string timingVerdict(const std::vector<platform::Report>& a, const std::string& an,
                          const std::string& bn, const std::string& diff) {
  std::uint64_t cycles = 0;
  for (const platform::Report& r : a)
    cycles += r.cycles;
  return "timing " + an + " vs " + bn + ": " +
         (diff.empty() ? "equal: " + std::to_string(cycles) +
                             " cycles, every instruction's fetch, take, start and end, "
                             "every counter and the energy"
                       : diff);
}

void compareNpuPairs(const std::vector<std::string>& devices,
                     const std::vector<std::vector<platform::Report>>& reports, std::string& lines,
                     std::vector<std::string>& mismatch) {
  for (std::size_t i = 0; i < reports.size(); ++i)
    for (std::size_t j = i + 1; j < reports.size(); ++j)
      if (!reports[i].empty() && !reports[j].empty()) {
        const std::string d = compareNpuRuns(reports[i], devices[i], reports[j], devices[j]);
        lines += timingVerdict(reports[i], devices[i], devices[j], d) + "\n";
        if (!d.empty())
          mismatch.push_back(d);
      }
}

void throwIfDisagreements(const std::string& compare, const std::vector<std::string>& mismatch) {
  if (mismatch.empty())
    return;
  std::string msg = std::to_string(mismatch.size()) + " disagreement(s):";
  for (const auto& m : mismatch)
    msg += "\n  " + m;
  throw Error("--compare " + compare, msg);
}

namespace {

/// The energy of two runs: every component and the total, equal up to the rounding of
/// sums taken in another order (a relative 1e-9).
std::string compareEnergy(const platform::Report& a, const std::string& an,
                          const platform::Report& b, const std::string& bn) {
  auto differ = [](double x, double y) {
    return !(std::fabs(x - y) <= 1e-9 * std::max({1.0, std::fabs(x), std::fabs(y)}));
  };
  auto pj = [](double v) {
    char s[64];
    std::snprintf(s, sizeof s, "%.1f pJ", v);
    return std::string(s);
  };
  std::map<std::string, double> eb;
  for (const auto& e : b.energy)
    eb[e.component] = e.pj;
  for (const auto& e : a.energy) {
    const auto it = eb.find(e.component);
    if (it == eb.end() || differ(e.pj, it->second))
      return "energy " + e.component + ": " + an + " " + pj(e.pj) + ", " + bn + " " +
             (it == eb.end() ? std::string("none") : pj(it->second));
  }
  if (a.energy.size() != b.energy.size() || differ(a.energy_total_pj, b.energy_total_pj))
    return "energy total: " + an + " " + pj(a.energy_total_pj) + ", " + bn + " " +
           pj(b.energy_total_pj);
  return "";
}

} // namespace

std::string compareNpuReports(const platform::Report& a, const std::string& an,
                              const platform::Report& b, const std::string& bn) {
  auto n = [](std::uint64_t v) { return std::to_string(v); };
  if (a.fault.has_value() != b.fault.has_value())
    return an + " " + (a.fault ? a.fault->message() : "done") + ", " + bn + " " +
           (b.fault ? b.fault->message() : "done");
  if (a.fault) {
    const auto &x = *a.fault, &y = *b.fault;
    if (x.kind != y.kind || x.cycle != y.cycle || x.engine != y.engine ||
        x.instruction != y.instruction)
      return "fault record: " + an + " " + x.message() + ", " + bn + " " + y.message();
    // Both stopped at the same instruction and cycle: what retired before it cost the same.
    return compareEnergy(a, an, b, bn);
  }
  auto sorted = [](std::vector<platform::Slice> v) {
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
    return v;
  };
  const auto sa = sorted(a.slices), sb = sorted(b.slices);
  for (std::size_t i = 0; i < std::min(sa.size(), sb.size()); ++i) {
    const auto &x = sa[i], &y = sb[i];
    if (x.index != y.index)
      return "instruction " + n(std::min(x.index, y.index)) + " retired on one model only";
    if (x.dispatch != y.dispatch || x.take != y.take || x.start != y.start || x.end != y.end ||
        x.memory_stall != y.memory_stall)
      return "instr " + n(x.index) + " " + x.name + ": " + an + " " + n(x.start) + "-" + n(x.end) +
             " (fetched " + n(x.dispatch) + ", taken " + n(x.take) + "), " + bn + " " + n(y.start) +
             "-" + n(y.end) + " (fetched " + n(y.dispatch) + ", taken " + n(y.take) + ")";
  }
  if (sa.size() != sb.size())
    return "retired instructions: " + an + " " + n(sa.size()) + ", " + bn + " " + n(sb.size());
  if (a.cycles != b.cycles)
    return "total cycles: " + an + " " + n(a.cycles) + ", " + bn + " " + n(b.cycles);
  if (a.fetch_stall != b.fetch_stall)
    return "fetch_stall: " + an + " " + n(a.fetch_stall) + ", " + bn + " " + n(b.fetch_stall);
  if (a.macs != b.macs)
    return "macs: " + an + " " + n(a.macs) + ", " + bn + " " + n(b.macs);
  for (std::size_t e = 0; e < std::min(a.engines.size(), b.engines.size()); ++e) {
    const auto &x = a.engines[e], &y = b.engines[e];
    auto c = [&](const char* what, std::uint64_t u, std::uint64_t v) -> std::string {
      return u == v ? "" : x.name + " " + what + ": " + an + " " + n(u) + ", " + bn + " " + n(v);
    };
    for (const std::string& d :
         {c("instructions", x.instructions, y.instructions), c("busy", x.busy, y.busy),
          c("token_stall", x.token_stall, y.token_stall),
          c("memory_stall", x.memory_stall, y.memory_stall), c("idle", x.idle, y.idle)})
      if (!d.empty())
        return d;
  }
  auto dram = [](const platform::Report& r) -> const platform::MemoryReport* {
    for (const auto& m : r.memories)
      if (m.name == "dram")
        return &m;
    return nullptr;
  };
  const auto *da = dram(a), *db = dram(b);
  if (da && db && (da->bytes_read != db->bytes_read || da->bytes_written != db->bytes_written))
    return "DRAM bytes: " + an + " " + n(da->bytes_read) + "/" + n(da->bytes_written) + ", " + bn +
           " " + n(db->bytes_read) + "/" + n(db->bytes_written);
  return compareEnergy(a, an, b, bn);
}

} // namespace ember::session
