// What a sweep prints and writes: Pareto front, table, CSV, HTML (Report.h).
#include "ember/session/dse/Report.h"
#include "ember/support/Format.h"
#include "ember/support/Html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <set>

namespace ember::dse {

std::vector<bool> paretoFrontN(const std::vector<std::vector<double>>& points) {
  std::vector<bool> front(points.size(), true);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (std::size_t j = 0; j < points.size() && front[i]; ++j) {
      const std::vector<double>& a = points[i];
      const std::vector<double>& b = points[j];
      bool noWorse = true, better = false;
      for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
        noWorse = noWorse && b[k] <= a[k];
        better = better || b[k] < a[k];
      }
      if (noWorse && better)
        front[i] = false;
    }
  return front;
}

std::vector<bool> paretoFront(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::vector<double>> v;
  for (const auto& [x, y] : points)
    v.push_back({x, y});
  return paretoFrontN(v);
}

void markPareto(std::vector<Result>& rows) {
  std::map<std::string, std::vector<std::size_t>> byModel;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].pareto = false;
    if (rows[i].status == Status::Ok)
      byModel[rows[i].model].push_back(i);
  }
  for (const auto& [model, idx] : byModel) {
    std::vector<std::pair<double, double>> pts;
    for (std::size_t i : idx)
      pts.emplace_back(double(rows[i].cycles), rows[i].energyUj);
    const std::vector<bool> front = paretoFront(pts);
    for (std::size_t k = 0; k < idx.size(); ++k)
      rows[idx[k]].pareto = front[k];
  }
}

std::uint64_t logicCells(const PointArea& a) {
  return a.cells + a.flipFlops;
}

void markAreaPareto(std::vector<Result>& rows, const std::vector<PointArea>& area) {
  std::map<std::string, std::vector<std::size_t>> byModel;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].paretoArea = false;
    if (rows[i].status == Status::Ok && rows[i].point < area.size() &&
        area[rows[i].point].state == PointArea::State::Ok)
      byModel[rows[i].model].push_back(i);
  }
  for (const auto& [model, idx] : byModel) {
    std::vector<std::vector<double>> pts;
    for (std::size_t i : idx) {
      const PointArea& a = area[rows[i].point];
      pts.push_back({double(rows[i].cycles), double(logicCells(a)), double(a.sramBits)});
    }
    const std::vector<bool> front = paretoFrontN(pts);
    for (std::size_t k = 0; k < idx.size(); ++k)
      rows[idx[k]].paretoArea = front[k];
  }
}

std::vector<std::string> settingColumns(const std::vector<Point>& points) {
  std::vector<std::string> cols;
  for (const Point& p : points)
    for (const auto& [name, value] : p.settings)
      if (std::find(cols.begin(), cols.end(), name) == cols.end())
        cols.push_back(name);
  return cols;
}

namespace {

std::string setting(const Point& p, const std::string& name) {
  for (const auto& [n, v] : p.settings)
    if (n == name)
      return v;
  return "";
}

/// The largest SRAM peak in percent of its SRAM (0 with no SRAM figures).
double peakPercent(const Result& r) {
  double best = 0;
  for (const SramPeak& s : r.sram)
    if (s.sizeBytes)
      best = std::max(best, 100.0 * double(s.peakBytes) / double(s.sizeBytes));
  return best;
}

std::vector<std::string> sramNames(const std::vector<Result>& rows) {
  std::vector<std::string> names;
  for (const Result& r : rows)
    for (const SramPeak& s : r.sram)
      if (std::find(names.begin(), names.end(), s.name) == names.end())
        names.push_back(s.name);
  return names;
}

const Point* pointOf(const SweepData& d, std::size_t index) {
  for (const Point& p : d.points)
    if (p.index == index)
      return &p;
  return nullptr;
}

/// The area of a point with --area, else nullptr.
const PointArea* areaOf(const SweepData& d, std::size_t point) {
  return point < d.area.size() ? &d.area[point] : nullptr;
}

bool areaOk(const PointArea* a) {
  return a && a->state == PointArea::State::Ok;
}

/// "12,345": thousands separated, for cell counts in the table and the page.
std::string grouped(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = int(s.size()) - 3; i > 0; i -= 3)
    s.insert(std::size_t(i), ",");
  return s;
}

/// One line per point whose area failed: "point N area: failed: why".
std::string areaFailures(const SweepData& d) {
  std::string out;
  for (std::size_t i = 0; i < d.area.size(); ++i)
    if (d.area[i].state == PointArea::State::Failed)
      out +=
          "point " + std::to_string(i) + " area: failed: " + shortMessage(d.area[i].message) + "\n";
  return out;
}

} // namespace

std::string shortMessage(const std::string& message, std::size_t lines) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < lines; ++i) {
    at = message.find('\n', at);
    if (at == std::string::npos)
      return message;
    ++at;
  }
  std::size_t more = 1;
  for (std::size_t k = message.find('\n', at); k != std::string::npos;
       k = message.find('\n', k + 1))
    more += k + 1 < message.size();
  return message.substr(0, at) + "  (" + std::to_string(more) + " more line" +
         (more == 1 ? "" : "s") + ")";
}

std::string formatTable(const SweepData& d) {
  std::vector<std::string> head{"point"};
  for (const std::string& c : d.columns)
    head.push_back(c);
  for (const char* c :
       {"model", "status", "cycles", "energy uJ", "MAC util", "SRAM peak", "pareto"})
    head.push_back(c);
  const bool withArea = !d.area.empty();
  if (withArea)
    for (const char* c : {"NPU cells", "flip-flops", "SRAM KiB", "area front"})
      head.push_back(c);
  std::vector<std::vector<std::string>> lines{head};
  for (const Result& r : d.rows) {
    const Point* p = pointOf(d, r.point);
    std::vector<std::string> l{std::to_string(r.point)};
    for (const std::string& c : d.columns)
      l.push_back(p ? setting(*p, c) : "");
    l.push_back(r.model);
    l.push_back(statusName(r.status));
    const bool ok = r.status == Status::Ok;
    l.push_back(ok ? std::to_string(r.cycles) : "-");
    l.push_back(ok ? formatNumber("%.1f", r.energyUj) : "-");
    l.push_back(ok ? formatNumber("%.1f%%", 100 * r.macUtilization) : "-");
    l.push_back(ok ? formatNumber("%.0f%%", peakPercent(r)) : "-");
    l.push_back(r.pareto ? "*" : "");
    if (withArea) {
      const PointArea* a = areaOf(d, r.point);
      const bool aok = areaOk(a);
      l.push_back(aok                                         ? grouped(a->cells)
                  : a && a->state == PointArea::State::Failed ? "failed"
                                                              : "-");
      l.push_back(aok ? grouped(a->flipFlops) : "-");
      l.push_back(aok ? grouped(a->sramBits / 8192) : "-");
      l.push_back(r.paretoArea ? "*" : "");
    }
    lines.push_back(std::move(l));
  }
  std::vector<std::size_t> width(head.size(), 0);
  for (const auto& l : lines)
    for (std::size_t i = 0; i < l.size(); ++i)
      width[i] = std::max(width[i], l[i].size());
  std::string out;
  for (const auto& l : lines) {
    std::string s;
    for (std::size_t i = 0; i < l.size(); ++i)
      s += l[i] + std::string(width[i] - l[i].size() + 2, ' ');
    while (!s.empty() && s.back() == ' ')
      s.pop_back();
    out += s + "\n";
  }
  for (const Result& r : d.rows)
    if (r.status != Status::Ok || !r.message.empty())
      out += "point " + std::to_string(r.point) + " " + r.model + ": " + statusName(r.status) +
             ": " + shortMessage(r.message) + "\n";
  return out + areaFailures(d);
}

namespace {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

} // namespace

std::string toCsv(const SweepData& d) {
  const std::vector<std::string> srams = sramNames(d.rows);
  std::vector<std::string> head{"point"};
  for (const std::string& c : d.columns)
    head.push_back(c);
  for (const char* c : {"model", "status", "cycles", "npu_us", "energy_uj", "mac_utilization"})
    head.push_back(c);
  for (const std::string& s : srams) {
    head.push_back("sram_" + s + "_peak_bytes");
    head.push_back("sram_" + s + "_bytes");
  }
  head.push_back("sram_peak_max_pct");
  const bool withArea = !d.area.empty();
  if (withArea)
    for (const char* c : {"area_status", "npu_cells", "npu_flip_flops", "sram_bits", "area_pareto",
                          "area_seconds", "area_cached"})
      head.push_back(c);
  for (const char* c : {"pareto", "host_seconds", "description", "message"})
    head.push_back(c);
  if (withArea)
    head.push_back("area_message");
  std::string out;
  auto line = [&out](const std::vector<std::string>& f) {
    for (std::size_t i = 0; i < f.size(); ++i)
      out += (i ? "," : "") + csvField(f[i]);
    out += "\n";
  };
  line(head);
  for (const Result& r : d.rows) {
    const Point* p = pointOf(d, r.point);
    const bool ok = r.status == Status::Ok;
    std::vector<std::string> f{std::to_string(r.point)};
    for (const std::string& c : d.columns)
      f.push_back(p ? setting(*p, c) : "");
    f.push_back(r.model);
    f.push_back(statusName(r.status));
    f.push_back(ok ? std::to_string(r.cycles) : "");
    f.push_back(ok ? formatNumber("%.3f", r.npuSeconds * 1e6) : "");
    f.push_back(ok ? formatNumber("%.4f", r.energyUj) : "");
    f.push_back(ok ? formatNumber("%.5f", r.macUtilization) : "");
    for (const std::string& s : srams) {
      const SramPeak* found = nullptr;
      for (const SramPeak& x : r.sram)
        if (x.name == s)
          found = &x;
      f.push_back(found ? std::to_string(found->peakBytes) : "");
      f.push_back(found ? std::to_string(found->sizeBytes) : "");
    }
    f.push_back(ok ? formatNumber("%.1f", peakPercent(r)) : "");
    const PointArea* a = areaOf(d, r.point);
    if (withArea) {
      const bool aok = areaOk(a);
      f.push_back(a ? areaStateName(a->state) : "");
      f.push_back(aok ? std::to_string(a->cells) : "");
      f.push_back(aok ? std::to_string(a->flipFlops) : "");
      f.push_back(aok ? std::to_string(a->sramBits) : "");
      f.push_back(r.paretoArea ? "1" : "0");
      f.push_back(aok ? formatNumber("%.1f", a->seconds) : "");
      f.push_back(aok ? (a->cached ? "1" : "0") : "");
    }
    f.push_back(r.pareto ? "1" : "0");
    f.push_back(formatNumber("%.3f", r.hostSeconds));
    f.push_back(p ? p->file : "");
    f.push_back(r.message);
    if (withArea)
      f.push_back(a ? a->message : "");
    line(f);
  }
  return out;
}

namespace {

std::string esc(const std::string& s) {
  return htmlEscape(s);
}

/// One axis of a chart: linear, or log10 when the values span more than 5x.
struct Scale {
  double lo = 0, hi = 1;
  bool log = false;
  double at(double v, double p0, double p1) const {
    double a = log ? std::log10(std::max(v, 1e-300)) : v;
    double t = hi > lo ? (a - lo) / (hi - lo) : 0.5;
    return p0 + t * (p1 - p0);
  }
  double value(double t) const {
    double a = lo + t * (hi - lo);
    return log ? std::pow(10.0, a) : a;
  }
};

Scale scaleOf(const std::vector<double>& v) {
  Scale s;
  if (v.empty())
    return s;
  double mn = *std::min_element(v.begin(), v.end());
  double mx = *std::max_element(v.begin(), v.end());
  s.log = mn > 0 && mx / mn > 5;
  s.lo = s.log ? std::log10(mn) : mn;
  s.hi = s.log ? std::log10(mx) : mx;
  const double pad =
      (s.hi - s.lo) * 0.06 + (s.hi == s.lo ? (s.log ? 0.1 : std::abs(s.lo) * 0.1 + 1) : 0);
  s.lo -= pad;
  s.hi += pad;
  if (!s.log && mn >= 0)
    s.lo = std::max(s.lo, 0.0);
  return s;
}

std::string utilColour(double u) {
  return "hsl(" + formatNumber("%.0f", 120.0 * std::clamp(u, 0.0, 1.0)) + ",70%,42%)";
}

std::string settingsText(const Point* p) {
  std::string s;
  if (p)
    for (const auto& [n, v] : p->settings)
      s += (s.empty() ? "" : ", ") + n + "=" + v;
  return s.empty() ? "base" : s;
}

/// What one scatter chart plots of a row against its cycles: y, whether the row is on
/// the chart's front (ringed), the marker's radius and the hover text after the settings.
struct ChartSpec {
  std::string yLabel;
  std::function<double(const Result&)> y;
  std::function<bool(const Result&)> front;
  std::function<double(const Result&)> radius;
  std::function<std::string(const Result&)> detail;
  bool joinFront = true; ///< Join the front's points with a dashed line (a 2-D front).
};

/// Cycles (x) against `c.y` of one model's Ok rows; the front ringed (and joined).
std::string scatter(const SweepData& d, const std::vector<const Result*>& rows,
                    const ChartSpec& c) {
  const double W = 640, H = 380, L = 80, R = 40, T = 20, B = 50;
  std::vector<double> xs, ys;
  for (const Result* r : rows) {
    xs.push_back(double(r->cycles));
    ys.push_back(c.y(*r));
  }
  const Scale sx = scaleOf(xs), sy = scaleOf(ys);
  std::string s = "<svg width=\"" + formatNumber("%.0f", W) + "\" height=\"" +
                  formatNumber("%.0f", H) +
                  "\" xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">\n";
  s += "<rect x=\"" + formatNumber("%.0f", L) + "\" y=\"" + formatNumber("%.0f", T) +
       "\" width=\"" + formatNumber("%.0f", W - L - R) + "\" height=\"" +
       formatNumber("%.0f", H - T - B) + "\" fill=\"#fafafa\" stroke=\"#999\"/>\n";
  for (int k = 0; k <= 4; ++k) {
    const double t = k / 4.0;
    const double x = L + t * (W - L - R), y = H - B - t * (H - T - B);
    s += "<text x=\"" + formatNumber("%.1f", x) + "\" y=\"" + formatNumber("%.0f", H - B + 16) +
         "\" text-anchor=\"middle\">" + formatNumber("%.3g", sx.value(t)) + "</text>\n";
    s += "<text x=\"" + formatNumber("%.0f", L - 6) + "\" y=\"" + formatNumber("%.1f", y + 4) +
         "\" text-anchor=\"end\">" + formatNumber("%.3g", sy.value(t)) + "</text>\n";
  }
  s += "<text x=\"" + formatNumber("%.0f", L + (W - L - R) / 2) + "\" y=\"" +
       formatNumber("%.0f", H - 12) + "\" text-anchor=\"middle\">cycles" +
       (sx.log ? " (log)" : "") + "</text>\n";
  s += "<text transform=\"translate(16," + formatNumber("%.0f", T + (H - T - B) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + esc(c.yLabel) + (sy.log ? " (log)" : "") +
       "</text>\n";
  std::vector<std::pair<double, double>> front;
  for (const Result* r : rows)
    if (c.front(*r))
      front.emplace_back(sx.at(double(r->cycles), L, W - R), sy.at(c.y(*r), H - B, T));
  std::sort(front.begin(), front.end());
  if (c.joinFront && front.size() > 1) {
    s += "<polyline fill=\"none\" stroke=\"#333\" stroke-dasharray=\"4 3\" points=\"";
    for (const auto& [x, y] : front)
      s += formatNumber("%.1f", x) + "," + formatNumber("%.1f", y) + " ";
    s += "\"/>\n";
  }
  for (const Result* r : rows) {
    const bool f = c.front(*r);
    const double x = sx.at(double(r->cycles), L, W - R), y = sy.at(c.y(*r), H - B, T);
    s += "<circle class=\"" + std::string(f ? "pareto" : "pt") + "\" cx=\"" +
         formatNumber("%.1f", x) + "\" cy=\"" + formatNumber("%.1f", y) + "\" r=\"" +
         formatNumber("%.1f", c.radius(*r)) + "\" fill=\"" + utilColour(r->macUtilization) + "\"" +
         (f ? " stroke=\"#000\" stroke-width=\"2\"" : "") + "><title>point " +
         std::to_string(r->point) + ": " + esc(settingsText(pointOf(d, r->point))) + "\n" +
         esc(c.detail(*r)) + (f ? " (Pareto)" : "") + "</title></circle>\n";
  }
  return s + "</svg>\n";
}

/// The cycles/energy chart: the front joined and ringed.
ChartSpec energyChart() {
  ChartSpec c;
  c.yLabel = "energy uJ";
  c.y = [](const Result& r) { return r.energyUj; };
  c.front = [](const Result& r) { return r.pareto; };
  c.radius = [](const Result& r) { return r.pareto ? 6.0 : 4.5; };
  c.detail = [](const Result& r) {
    return std::to_string(r.cycles) + " cycles, " + formatNumber("%.2f", r.energyUj) + " uJ, MAC " +
           formatNumber("%.1f", 100 * r.macUtilization) + "%";
  };
  return c;
}

/// --area: cycles against the NPU's logic cells; marker area grows with the SRAM bits
/// (log scale over the chart's rows), the (cycles, logic, SRAM) front ringed, not joined
/// (its third axis is the marker size).
ChartSpec areaChart(const SweepData& d, const std::vector<const Result*>& rows) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Result* r : rows) {
    const double b = std::log2(double(std::max<std::uint64_t>(1, d.area[r->point].sramBits)));
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  ChartSpec c;
  c.yLabel = "NPU logic cells (generic cells + flip-flops)";
  c.y = [&d](const Result& r) { return double(logicCells(d.area[r.point])); };
  c.front = [](const Result& r) { return r.paretoArea; };
  c.radius = [&d, lo, hi](const Result& r) {
    const double b = std::log2(double(std::max<std::uint64_t>(1, d.area[r.point].sramBits)));
    return 3.5 + (hi > lo ? 4.5 * (b - lo) / (hi - lo) : 2.0);
  };
  c.detail = [&d](const Result& r) {
    const PointArea& a = d.area[r.point];
    return std::to_string(r.cycles) + " cycles, " + grouped(a.cells) + " cells + " +
           grouped(a.flipFlops) + " flip-flops, SRAM " + grouped(a.sramBits / 8192) + " KiB";
  };
  c.joinFront = false;
  return c;
}

/// MAC utilisation of each Ok row of one model, one bar per point.
std::string bars(const std::vector<const Result*>& rows) {
  const double W = 640, H = 160, L = 80, R = 20, T = 10, B = 30;
  const double bw = (W - L - R) / double(std::max<std::size_t>(1, rows.size()));
  std::string s = "<svg width=\"640\" height=\"160\" xmlns=\"http://www.w3.org/2000/svg\" "
                  "font-size=\"11\">\n";
  s += "<text x=\"" + formatNumber("%.0f", L - 6) + "\" y=\"" + formatNumber("%.0f", T + 8) +
       "\" text-anchor=\"end\">100%</text><text x=\"" + formatNumber("%.0f", L - 6) + "\" y=\"" +
       formatNumber("%.0f", H - B) + "\" text-anchor=\"end\">0%</text>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double u = std::clamp(rows[i]->macUtilization, 0.0, 1.0);
    const double h = u * (H - T - B);
    s += "<rect x=\"" + formatNumber("%.1f", L + i * bw + 1) + "\" y=\"" +
         formatNumber("%.1f", H - B - h) + "\" width=\"" +
         formatNumber("%.1f", std::max(1.0, bw - 2)) + "\" height=\"" + formatNumber("%.1f", h) +
         "\" fill=\"" + utilColour(u) + "\"><title>point " + std::to_string(rows[i]->point) +
         ": MAC " + formatNumber("%.1f", 100 * u) + "%</title></rect>\n";
    if (rows.size() <= 40)
      s += "<text x=\"" + formatNumber("%.1f", L + (i + 0.5) * bw) + "\" y=\"" +
           formatNumber("%.0f", H - B + 14) + "\" text-anchor=\"middle\">" +
           std::to_string(rows[i]->point) + "</text>\n";
  }
  s += "<text x=\"" + formatNumber("%.0f", L + (W - L - R) / 2) + "\" y=\"" +
       formatNumber("%.0f", H - 2) + "\" text-anchor=\"middle\">point (MAC utilisation)</text>\n";
  return s + "</svg>\n";
}

/// The page's table of every row (with --area, the area columns and messages).
std::string htmlTable(const SweepData& d) {
  const bool withArea = !d.area.empty();
  std::string h = "<h2>All rows</h2>\n<table><tr><th>point</th>";
  for (const std::string& c : d.columns)
    h += "<th>" + esc(c) + "</th>";
  h += "<th class=\"l\">model</th><th class=\"l\">status</th><th>cycles</th><th>energy uJ</th>"
       "<th>MAC util</th><th>SRAM peak</th><th>Pareto</th>";
  if (withArea)
    h += "<th>NPU cells</th><th>flip-flops</th><th>SRAM KiB</th><th>area front</th>";
  h += "<th class=\"l\">description / message</th></tr>\n";
  for (const Result& r : d.rows) {
    const Point* p = pointOf(d, r.point);
    const bool ok = r.status == Status::Ok;
    h += std::string("<tr") + (r.pareto ? " class=\"pareto\"" : "") + "><td>" +
         std::to_string(r.point) + "</td>";
    for (const std::string& c : d.columns)
      h += "<td>" + esc(p ? setting(*p, c) : "") + "</td>";
    h += "<td class=\"l\">" + esc(r.model) + "</td><td class=\"l" + (ok ? "" : " bad") + "\">" +
         statusName(r.status) + "</td><td>" + (ok ? std::to_string(r.cycles) : "") + "</td><td>" +
         (ok ? formatNumber("%.2f", r.energyUj) : "") + "</td><td>" +
         (ok ? formatNumber("%.1f%%", 100 * r.macUtilization) : "") + "</td><td>" +
         (ok ? formatNumber("%.0f%%", peakPercent(r)) : "") + "</td><td>" + (r.pareto ? "*" : "") +
         "</td>";
    const PointArea* a = areaOf(d, r.point);
    std::string areaMessage;
    if (withArea) {
      const bool aok = areaOk(a);
      const bool failed = a && a->state == PointArea::State::Failed;
      h += std::string("<td") + (failed ? " class=\"bad\"" : "") + ">" +
           (aok      ? grouped(a->cells)
            : failed ? "failed"
                     : "") +
           "</td><td>" + (aok ? grouped(a->flipFlops) : "") + "</td><td>" +
           (aok ? grouped(a->sramBits / 8192) : "") + "</td><td>" + (r.paretoArea ? "*" : "") +
           "</td>";
      if (failed)
        areaMessage = "area: " + a->message;
    }
    h += "<td class=\"l\">" + esc(p ? p->file : "") +
         (r.message.empty() ? "" : "<br>" + esc(r.message)) +
         (areaMessage.empty() ? "" : "<br><span class=\"bad\">" + esc(areaMessage) + "</span>") +
         "</td></tr>\n";
  }
  return h + "</table>\n";
}

} // namespace

std::string toHtml(const SweepData& d) {
  std::string h = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + esc(d.title) +
                  "</title>\n<style>body{font-family:sans-serif;margin:20px}"
                  "table{border-collapse:collapse;font-size:12px}"
                  "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
                  "td.l,th.l{text-align:left}tr.pareto td{font-weight:bold}"
                  ".bad{color:#a00}</style></head><body>\n<h1>" +
                  esc(d.title) + "</h1>\n";
  h += "<p>Cycles against energy per point for each model: colour is MAC utilisation (red 0%, "
       "green 100%); ringed points joined by the dashed line are the Pareto front (no other "
       "point is faster and cheaper). Hover a point for its settings.</p>\n";
  if (!d.area.empty())
    h += "<p>Area (ember-dse --area): the NPU's logic from Yosys' generic synthesis of the RTL "
         "(generic cells plus flip-flops, SRAM macros not included) against cycles; marker size "
         "grows with the SRAM bits; ringed points are on the front of cycles, logic and SRAM "
         "(no other point is as fast with as little logic and SRAM).</p>\n";
  std::vector<std::string> models;
  for (const Result& r : d.rows)
    if (std::find(models.begin(), models.end(), r.model) == models.end())
      models.push_back(r.model);
  for (const std::string& m : models) {
    std::vector<const Result*> ok, withArea;
    std::size_t failed = 0;
    for (const Result& r : d.rows)
      if (r.model == m)
        (r.status == Status::Ok ? (void)ok.push_back(&r) : (void)++failed);
    for (const Result* r : ok)
      if (areaOk(areaOf(d, r->point)))
        withArea.push_back(r);
    h += "<h2>" + esc(m) + "</h2>\n<p>" + std::to_string(ok.size()) + " points ran" +
         (failed ? ", <span class=\"bad\">" + std::to_string(failed) + " did not</span>" : "") +
         " (table below).</p>\n";
    if (!ok.empty())
      h += scatter(d, ok, energyChart()) + "<br>\n";
    if (!withArea.empty())
      h += scatter(d, withArea, areaChart(d, withArea)) + "<br>\n";
    if (!ok.empty())
      h += bars(ok);
  }
  return h + htmlTable(d) + "</body></html>\n";
}

} // namespace ember::dse
