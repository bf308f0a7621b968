// The HTML report: inline SVG charts over the simulator's reports.
#include "ember/platform/HtmlReport.h"
#include "ember/platform/Layers.h"
#include "ember/support/Html.h"

#include "ember/support/Error.h"
#include "ember/support/Format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

namespace ember::platform {

namespace {

std::string esc(const std::string& s) {
  return htmlEscape(s);
}

/// 12345678 -> "12.3 M".
std::string human(double v) {
  if (v != 0 && std::fabs(v) < 1)
    return formatNumber("%.2g", v);
  const char* units[] = {"", " k", " M", " G", " T"};
  int u = 0;
  while (std::fabs(v) >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  return formatNumber(u ? "%.1f" : "%.0f", v) + units[u];
}

const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                          "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

/// A layer of the run, with the segment it belongs to.
struct Row {
  std::string name;
  size_t segment;
  const LayerReport* layer;
};

/// Horizontal bars: one per (label, value), scaled to the largest; `note` beside each.
std::string barChart(const std::vector<std::pair<std::string, double>>& bars,
                     const std::vector<std::string>& notes, const std::string& color,
                     double maxValue = 0) {
  const int rowH = 16, labelW = 260, barW = 520, noteW = 200;
  double top = maxValue;
  for (const auto& b : bars)
    top = std::max(top, b.second);
  if (top <= 0)
    top = 1;
  std::ostringstream o;
  const int h = int(bars.size()) * rowH + 4;
  o << "<svg width='" << labelW + barW + noteW << "' height='" << h << "' role='img'>";
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = int(i) * rowH;
    const double w = barW * bars[i].second / top;
    o << "<text x='" << labelW - 6 << "' y='" << y + 12 << "' text-anchor='end'>"
      << esc(bars[i].first.size() > 40 ? bars[i].first.substr(0, 38) + "…" : bars[i].first)
      << "</text><rect x='" << labelW << "' y='" << y + 2 << "' width='" << formatNumber("%.1f", w)
      << "' height='" << rowH - 4 << "' fill='" << color << "'><title>" << esc(bars[i].first)
      << ": " << esc(i < notes.size() ? notes[i] : "") << "</title></rect><text x='"
      << labelW + w + 4 << "' y='" << y + 12 << "'>" << esc(i < notes.size() ? notes[i] : "")
      << "</text>";
  }
  o << "</svg>";
  return o.str();
}

/// Log-log roofline: x arithmetic intensity (MACs per DRAM byte), y MACs per cycle.
std::string roofline(const std::vector<Row>& rows, double peak, double dramBytesPerCycle) {
  const int W = 760, H = 420, L = 70, B = 50, T = 20, R = 20;
  const double ridge = dramBytesPerCycle > 0 ? peak / dramBytesPerCycle : 0;
  double xmin = 0.01, xmax = std::max(10.0, ridge * 10), ymin = 0.01,
         ymax = std::max(1.0, peak) * 2;
  for (const auto& r : rows) {
    if (!r.layer->macs || !r.layer->dram_bytes || !r.layer->cycles)
      continue;
    const double x = double(r.layer->macs) / double(r.layer->dram_bytes);
    xmin = std::min(xmin, x / 2);
    xmax = std::max(xmax, x * 2);
  }
  auto px = [&](double x) {
    return L + (W - L - R) * std::log10(x / xmin) / std::log10(xmax / xmin);
  };
  auto py = [&](double y) {
    return H - B - (H - B - T) * std::log10(std::max(y, ymin) / ymin) / std::log10(ymax / ymin);
  };
  std::ostringstream o;
  o << "<svg width='" << W << "' height='" << H << "' role='img'>";
  o << "<rect x='" << L << "' y='" << T << "' width='" << W - L - R << "' height='" << H - B - T
    << "' fill='none' stroke='#999'/>";
  for (double d = std::pow(10, std::ceil(std::log10(xmin))); d <= xmax; d *= 10)
    o << "<line x1='" << px(d) << "' x2='" << px(d) << "' y1='" << T << "' y2='" << H - B
      << "' stroke='#eee'/><text x='" << px(d) << "' y='" << H - B + 16 << "' text-anchor='middle'>"
      << human(d) << "</text>";
  for (double d = std::pow(10, std::ceil(std::log10(ymin))); d <= ymax; d *= 10)
    o << "<line x1='" << L << "' x2='" << W - R << "' y1='" << py(d) << "' y2='" << py(d)
      << "' stroke='#eee'/><text x='" << L - 6 << "' y='" << py(d) + 4 << "' text-anchor='end'>"
      << human(d) << "</text>";
  o << "<text x='" << (L + W - R) / 2 << "' y='" << H - 10
    << "' text-anchor='middle'>arithmetic intensity (MACs per DRAM byte)</text>"
    << "<text transform='rotate(-90)' x='" << -(T + H - B) / 2 << "' y='16' "
    << "text-anchor='middle'>achieved MACs per cycle</text>";
  if (ridge > 0) { // the roof: DRAM-bound up to the ridge, then the array's peak
    o << "<polyline fill='none' stroke='#c00' stroke-width='2' points='" << px(xmin) << ","
      << py(xmin * dramBytesPerCycle) << " " << px(ridge) << "," << py(peak) << " " << px(xmax)
      << "," << py(peak) << "'/><text x='" << px(ridge) + 4 << "' y='" << py(peak) - 6 << "'>peak "
      << human(peak) << " MACs/cycle, ridge " << formatNumber("%.1f", ridge) << " MACs/byte</text>";
  }
  for (const auto& r : rows) {
    if (!r.layer->macs || !r.layer->dram_bytes || !r.layer->cycles)
      continue;
    const double x = double(r.layer->macs) / double(r.layer->dram_bytes);
    const double y = double(r.layer->macs) / double(r.layer->cycles);
    o << "<circle cx='" << formatNumber("%.1f", px(x)) << "' cy='" << formatNumber("%.1f", py(y))
      << "' r='4' fill='" << kPalette[r.segment % 10] << "' fill-opacity='0.75'><title>"
      << esc(r.name) << ": " << formatNumber("%.2f", x) << " MACs/byte, " << formatNumber("%.1f", y)
      << " MACs/cycle</title></circle>";
  }
  o << "</svg>";
  return o.str();
}

/// One stacked bar per engine: busy, memory stall, token stall, idle.
std::string engineChart(const std::vector<Report>& reports) {
  std::map<std::string, EngineReport> sum;
  std::vector<std::string> order;
  for (const auto& r : reports)
    for (const auto& e : r.engines) {
      if (!sum.count(e.name))
        order.push_back(e.name);
      EngineReport& s = sum[e.name];
      s.busy += e.busy;
      s.memory_stall += e.memory_stall;
      s.token_stall += e.token_stall;
      s.idle += e.idle;
      s.instructions += e.instructions;
    }
  const char* parts[] = {"busy", "memory stall", "token stall", "idle"};
  const char* colors[] = {"#59a14f", "#e15759", "#edc948", "#bab0ac"};
  std::ostringstream o;
  const int W = 760, rowH = 26, L = 90;
  o << "<svg width='" << W << "' height='" << order.size() * rowH + 30 << "' role='img'>";
  for (size_t i = 0; i < order.size(); ++i) {
    const EngineReport& e = sum[order[i]];
    const double v[] = {double(e.busy), double(e.memory_stall), double(e.token_stall),
                        double(e.idle)};
    const double total = std::max(1.0, v[0] + v[1] + v[2] + v[3]);
    double x = L;
    const int y = int(i) * rowH;
    o << "<text x='" << L - 6 << "' y='" << y + 17 << "' text-anchor='end'>" << esc(order[i])
      << "</text>";
    for (int k = 0; k < 4; ++k) {
      const double w = (W - L - 10) * v[k] / total;
      o << "<rect x='" << formatNumber("%.1f", x) << "' y='" << y + 4 << "' width='"
        << formatNumber("%.1f", w) << "' height='" << rowH - 8 << "' fill='" << colors[k]
        << "'><title>" << esc(order[i]) << " " << parts[k] << ": " << human(v[k]) << " cycles ("
        << formatNumber("%.1f", 100 * v[k] / total) << "%)</title></rect>";
      x += w;
    }
  }
  int lx = L;
  for (int k = 0; k < 4; ++k) {
    o << "<rect x='" << lx << "' y='" << order.size() * rowH + 10
      << "' width='12' height='12' fill='" << colors[k] << "'/><text x='" << lx + 16 << "' y='"
      << order.size() * rowH + 21 << "'>" << parts[k] << "</text>";
    lx += 130;
  }
  o << "</svg>";
  return o.str();
}

/// One row per layer: its figures, its roofline and its engines' stalls.
std::string layerTable(const std::vector<Row>& rows) {
  std::ostringstream o;
  o << "<table><tr><th>layer</th><th>cycles</th><th>MACs</th><th>DRAM bytes</th><th>bound</th>"
       "<th>MAC bound</th><th>DRAM bound</th><th>efficiency</th><th>most stalled</th>"
       "<th>load token / memory</th><th>compute token / memory</th>"
       "<th>store token / memory</th></tr>";
  for (const auto& r : rows) {
    const LayerReport& l = *r.layer;
    o << "<tr><td>" << esc(r.name) << "</td><td>" << l.cycles << "</td><td>"
      << human(double(l.macs)) << "</td><td>" << human(double(l.dram_bytes)) << "</td><td>"
      << esc(l.bound) << "</td><td>" << formatNumber("%.0f", l.mac_bound_cycles) << "</td><td>"
      << formatNumber("%.0f", l.dram_bound_cycles) << "</td><td>"
      << formatNumber("%.1f%%", 100.0 * l.roofline_efficiency) << "</td><td>" << esc(layerStall(l))
      << "</td>";
    for (const auto& e : l.engines)
      o << "<td>" << e.token_stall << " / " << e.memory_stall << "</td>";
    o << "</tr>";
  }
  o << "</table>";
  return o.str();
}

/// The roofline efficiency chart and the layer table.
std::string layerSections(const std::vector<Row>& rows) {
  std::vector<std::pair<std::string, double>> eff;
  std::vector<std::string> effNote;
  for (const auto& r : rows) {
    eff.push_back({r.name, 100.0 * r.layer->roofline_efficiency});
    effNote.push_back(formatNumber("%.1f%% of its ", 100.0 * r.layer->roofline_efficiency) +
                      r.layer->bound + " bound");
  }
  return "<h2>Roofline efficiency per layer</h2><p class='k'>Each layer's bound (the larger "
         "of its MACs at the array's peak and its DRAM bytes at the description's bandwidth) "
         "over its cycles.</p>" +
         barChart(eff, effNote, "#76b7b2", 100.0) +
         "<h2>Layers</h2><p class='k'>Per layer: its bound (mac, dram, or none without MACs "
         "or DRAM bytes), the two bounds in cycles, bound over cycles, and the token and "
         "memory stalls of its instructions on each engine; most stalled is the largest "
         "stall of the engines that carry the bound (compute for mac, load and store for "
         "dram).</p>" +
         layerTable(rows);
}

} // namespace

std::string htmlReportTitle(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.has_parent_path() ? p.parent_path().filename() / p.filename() : p.filename()).string() +
         " on the Ember NPU";
}

std::string toHtml(const std::vector<Report>& reports, const HtmlReportOptions& opt) {
  if (reports.empty())
    throw Error("HTML report", "no NPU run to report (the program ran nothing on the NPU)");
  for (const Report& r : reports)
    checkFinite(r);
  uint64_t cycles = 0, macs = 0;
  double energy = 0, seconds = 0;
  std::map<std::string, double> byComponent;
  std::vector<Row> rows;
  for (size_t s = 0; s < reports.size(); ++s) {
    const Report& r = reports[s];
    cycles += r.cycles;
    macs += r.macs;
    energy += r.energy_total_pj;
    seconds += r.seconds;
    for (const auto& e : r.energy)
      byComponent[e.component] += e.pj;
    for (const auto& l : r.layers)
      rows.push_back(
          {reports.size() > 1 ? "seg" + std::to_string(s) + " " + l.name : l.name, s, &l});
  }
  const Report& first = reports.front();
  const double peak = double(first.peak_macs_per_cycle);
  double dramBpc = 0;
  for (const auto& m : first.memories)
    if (m.name == "dram")
      dramBpc = m.peak_bytes_per_cycle;

  std::ostringstream o;
  o << "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" << esc(opt.title)
    << "</title><style>body{font:13px sans-serif;margin:24px;color:#222;max-width:1100px}"
       "h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}"
       "svg text{font:11px sans-serif;fill:#333}table{border-collapse:collapse}"
       "td,th{padding:2px 10px;text-align:right}th{background:#f3f3f3}td:first-child,"
       "th:first-child{text-align:left}pre{background:#f7f7f7;padding:8px;overflow:auto;"
       "max-height:360px}.k{color:#666}</style></head><body>";
  o << "<h1>" << esc(opt.title) << "</h1>";
  o << "<table><tr><th>description</th><th>cycles</th><th>time</th><th>MACs</th><th>MAC "
       "utilisation</th><th>energy</th><th>NPU segments</th></tr><tr><td>"
    << esc(first.isa_name) << "</td><td>" << cycles << "</td><td>"
    << formatNumber("%.3f", seconds * 1e3) << " ms</td><td>" << human(double(macs)) << "</td><td>"
    << formatNumber("%.1f%%", cycles && peak ? 100.0 * double(macs) / (double(cycles) * peak) : 0.0)
    << "</td><td>" << formatNumber("%.1f", energy * 1e-6) << " µJ</td><td>" << reports.size()
    << "</td></tr></table>";
  if (!opt.placement.empty())
    o << "<p class='k'>" << esc(opt.placement) << "</p>";

  std::vector<std::pair<std::string, double>> cyc, util, en;
  std::vector<std::string> cycNote, utilNote, enNote;
  for (const auto& r : rows) {
    cyc.push_back({r.name, double(r.layer->cycles)});
    cycNote.push_back(
        human(double(r.layer->cycles)) + " cycles (" +
        formatNumber("%.1f%%", cycles ? 100.0 * double(r.layer->cycles) / double(cycles) : 0) +
        ")");
    util.push_back({r.name, 100.0 * r.layer->mac_utilization});
    utilNote.push_back(formatNumber("%.1f%%", 100.0 * r.layer->mac_utilization));
    en.push_back({r.name, r.layer->energy_pj});
    enNote.push_back(formatNumber("%.2f µJ", r.layer->energy_pj * 1e-6));
  }
  o << "<h2>Cycles per layer</h2>" << barChart(cyc, cycNote, "#4e79a7");
  o << "<h2>MAC utilisation per layer</h2>" << barChart(util, utilNote, "#59a14f", 100.0);
  o << "<h2>Roofline</h2><p class='k'>Each layer with MACs: its MACs per DRAM byte against the "
       "MACs per cycle it achieved; the red line is the description's roof (DRAM bandwidth "
    << formatNumber("%.0f", dramBpc) << " B/cycle up to the ridge, then "
    << formatNumber("%.0f", peak) << " MACs/cycle).</p>" << roofline(rows, peak, dramBpc);
  o << layerSections(rows);
  std::vector<std::pair<std::string, double>> comp;
  std::vector<std::string> compNote;
  for (const auto& [name, pj] : byComponent) {
    comp.push_back({name, pj});
    compNote.push_back(formatNumber("%.2f µJ", pj * 1e-6) +
                       formatNumber(" (%.1f%%)", energy ? 100 * pj / energy : 0));
  }
  o << "<h2>Energy by component</h2>" << barChart(comp, compNote, "#f28e2b");
  o << "<h2>Energy by layer</h2>" << barChart(en, enNote, "#e15759");
  o << "<h2>Engines</h2><p class='k'>What each engine did with its cycles (all NPU segments).</p>"
    << engineChart(reports);
  if (!opt.placementTable.empty())
    o << "<h2>Placement</h2><pre>" << esc(opt.placementTable) << "</pre>";
  o << "<p class='k'>Written by Ember's simulator report (simulated " << cycles
    << " cycles).</p></body></html>\n";
  return o.str();
}

} // namespace ember::platform
