// The serving page: the report's figures and a per-device timeline in inline SVG.
#include "ember/session/ServeHtml.h"

#include "ember/support/Error.h"
#include "ember/support/Format.h"
#include "ember/support/Html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace ember::session {

namespace {

const char* kStageColors[] = {"#4e79a7", "#e15759", "#59a14f", "#b07aa1",
                              "#edc948", "#76b7b2", "#ff9da7", "#f28e2b"};
const char* kLinkIn = "#bab0ac";
const char* kLinkOut = "#9c755f";

/// The timeline's geometry: x of a cycle, rows of `rowH` below the axis.
struct Frame {
  double makespan;
  int left = 170, width = 1080, right = 12, top = 28, rowH = 26;
  double x(uint64_t t) const {
    return left + double(width - left - right) * double(t) / std::max(1.0, makespan);
  }
  int rowY(size_t row) const { return top + int(row) * rowH; }
};

/// Cycle `t` as milliseconds at the clock ("1.25 ms"), or cycles without one.
std::string timeText(uint64_t t, uint64_t clockHz) {
  if (!clockHz)
    return std::to_string(t) + " cycles";
  return formatNumber("%.6g ms", double(t) * 1e3 / double(clockHz));
}

/// The time axis: about eight ticks at 1, 2 or 5 times a power of ten cycles.
std::string axis(const Frame& f, size_t rows, uint64_t clockHz) {
  const double raw = std::max(1.0, f.makespan / 8);
  const double p = std::pow(10, std::floor(std::log10(raw)));
  const double step = raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
  std::ostringstream o;
  const int bottom = f.rowY(rows);
  for (double t = 0; t <= f.makespan + 0.5; t += step) {
    const double x = f.x(uint64_t(t));
    o << "<line x1='" << formatNumber("%.1f", x) << "' x2='" << formatNumber("%.1f", x) << "' y1='"
      << f.top - 4 << "' y2='" << bottom << "' stroke='#e4e4e4'/><text x='"
      << formatNumber("%.1f", x) << "' y='" << f.top - 8 << "' text-anchor='middle'>"
      << timeText(uint64_t(t), clockHz) << "</text>";
  }
  return o.str();
}

/// Per span (by index into r.spans): the cycle its request was ready for its stage (the
/// admission for stage 0, the end of its previous stage's run otherwise).
std::vector<uint64_t> readyCycles(const ServeResult& r) {
  std::map<std::pair<size_t, size_t>, uint64_t> endOf;
  for (const StageSpan& s : r.spans)
    endOf[{s.request, s.stage}] = s.end;
  std::vector<uint64_t> ready;
  for (const StageSpan& s : r.spans)
    ready.push_back(s.stage == 0 ? r.requests.at(s.request).admitted
                                 : endOf.at({s.request, s.stage - 1}));
  return ready;
}

/// One bar with its tooltip.
void bar(std::ostringstream& o, const Frame& f, size_t row, const char* cls, const char* color,
         uint64_t from, uint64_t to, const std::string& tip) {
  if (to <= from)
    return;
  const double x0 = f.x(from), w = std::max(0.6, f.x(to) - x0);
  o << "<rect class='" << cls << "' x='" << formatNumber("%.2f", x0) << "' y='" << f.rowY(row) + 3
    << "' width='" << formatNumber("%.2f", w) << "' height='" << f.rowH - 6 << "' fill='" << color
    << "'><title>" << htmlEscape(tip) << "</title></rect>";
}

/// The devices' rows: every stage run (a batch: one, up to kServeHtmlMaxRuns) as its
/// three bars.
std::string deviceRows(const ServeResult& r, const Frame& f) {
  const std::vector<uint64_t> ready = readyCycles(r);
  std::vector<std::ostringstream> rows(r.devices.size());
  const size_t drawn = std::min(r.spans.size(), kServeHtmlMaxRuns);
  for (size_t i = 0; i < drawn; i += r.spans[i].batchSize) {
    const StageSpan& s = r.spans[i];
    std::string id = "r" + std::to_string(s.request);
    uint64_t waited = 0;
    for (size_t j = i; j < i + s.batchSize && j < r.spans.size(); ++j) {
      id += j > i ? "+r" + std::to_string(r.spans[j].request) : "";
      waited = std::max(waited, s.start - ready[j]);
    }
    id += " s" + std::to_string(s.stage);
    auto cycles = [](uint64_t a, uint64_t b) {
      return std::to_string(b - a) + " cycles (" + std::to_string(a) + " .. " + std::to_string(b) +
             ")";
    };
    std::ostringstream& o = rows.at(s.device);
    bar(o, f, s.device, "in", kLinkIn, s.start, s.npuStart,
        id + " link in: " + cycles(s.start, s.npuStart));
    bar(o, f, s.device, "npu", kStageColors[s.stage % 8], s.npuStart, s.npuEnd,
        id + " npu: " + cycles(s.npuStart, s.npuEnd) + "; " +
            (s.batchSize > 1 ? "the longest waited " : "waited ") + std::to_string(waited) +
            " cycles for " + r.devices[s.device].name);
    bar(o, f, s.device, "out", kLinkOut, s.npuEnd, s.end,
        id + " link out: " + cycles(s.npuEnd, s.end));
  }
  std::ostringstream out;
  for (size_t d = 0; d < r.devices.size(); ++d)
    out << "<g class='device' data-device='" << htmlEscape(r.devices[d].name) << "'><text x='"
        << f.left - 8 << "' y='" << f.rowY(d) + f.rowH / 2 + 4 << "' text-anchor='end'>"
        << htmlEscape(r.devices[d].name) << "</text>" << rows[d].str() << "</g>";
  return out.str();
}

/// A row counting the intervals `waits` open at each cycle, as a step area scaled to its
/// largest count.
std::string countRow(const Frame& f, size_t row, const std::string& label, const char* cls,
                     const std::vector<std::pair<uint64_t, uint64_t>>& waits) {
  std::map<uint64_t, long> delta;
  size_t count = 0;
  for (const auto& [from, to] : waits)
    if (to > from) {
      ++delta[from];
      --delta[to];
      ++count;
    }
  long n = 0, most = 0;
  for (const auto& [t, d] : delta)
    most = std::max(most, n += d);
  const int base = f.rowY(row) + f.rowH - 3, h = f.rowH - 6;
  std::ostringstream o;
  o << "<g class='" << cls << "'><text x='" << f.left - 8 << "' y='" << f.rowY(row) + f.rowH / 2 + 4
    << "' text-anchor='end'>" << htmlEscape(label) << " (max " << most << ")</text>";
  if (most > 0) {
    o << "<path fill='#f1ce63' stroke='#b6992d' d='M" << formatNumber("%.2f", f.x(0)) << ","
      << base;
    n = 0;
    for (const auto& [t, d] : delta) {
      const double x = f.x(t);
      o << " L" << formatNumber("%.2f", x) << ","
        << formatNumber("%.1f", base - double(h) * double(n) / double(most));
      n += d;
      o << " L" << formatNumber("%.2f", x) << ","
        << formatNumber("%.1f", base - double(h) * double(n) / double(most));
    }
    o << " Z'><title>" << htmlEscape(label) << ": up to " << most << " at once, " << count
      << " waits</title></path>";
  }
  o << "<line x1='" << f.left << "' x2='" << f.x(uint64_t(f.makespan)) << "' y1='" << base
    << "' y2='" << base << "' stroke='#999'/></g>";
  return o.str();
}

/// The timeline: the axis, a row per device, then the two waiting rows.
std::string timeline(const ServeResult& r) {
  Frame f;
  f.makespan = double(std::max<uint64_t>(r.makespan, 1));
  const size_t rows = r.devices.size() + 2;
  std::vector<std::pair<uint64_t, uint64_t>> slot, device;
  for (const RequestFigures& q : r.requests)
    if (q.admitted > q.issued && !q.refused)
      slot.emplace_back(q.issued, q.admitted);
  const std::vector<uint64_t> ready = readyCycles(r);
  for (size_t i = 0; i < r.spans.size(); ++i)
    device.emplace_back(ready[i], r.spans[i].start);
  std::ostringstream o;
  o << "<svg class='timeline' width='" << f.width << "' height='" << f.rowY(rows) + 8
    << "' role='img'>" << axis(f, rows, r.clockHz) << deviceRows(r, f)
    << countRow(f, r.devices.size(), "waiting for a slot", "wait-slot", slot)
    << countRow(f, r.devices.size() + 1, "waiting for a device", "wait-device", device) << "</svg>";
  return o.str();
}

/// The legend: the link bars and each stage's NPU colour.
std::string legend(size_t stages) {
  std::ostringstream o;
  auto key = [&](const char* color, const std::string& text) {
    o << "<span style='display:inline-block;width:12px;height:12px;background:" << color
      << ";margin:0 4px 0 14px;vertical-align:middle'></span>" << htmlEscape(text);
  };
  key(kLinkIn, "link in");
  for (size_t k = 0; k < stages; ++k)
    key(kStageColors[k % 8], "stage " + std::to_string(k) + " NPU");
  key(kLinkOut, "link out");
  return "<p class='k'>" + o.str() + "</p>";
}

/// The load and the figures, then one row per device.
std::string tables(const ServeResult& r) {
  std::ostringstream o;
  o << "<table><tr><th>requests</th><th>clients</th><th>queue depth</th><th>completed</th>"
       "<th>refused</th><th>throughput</th><th>p50</th><th>p95</th><th>p99</th><th>makespan"
       "</th></tr><tr><td>"
    << r.config.requests << "</td><td>" << r.config.concurrency << "</td><td>" << r.config.depth()
    << " (" << whenFullName(r.config.whenFull) << ")</td><td>" << r.completed << "</td><td>"
    << r.refused << "</td><td>" << formatNumber("%.1f", r.throughputPerSecond)
    << " inferences/s</td><td>" << timeText(r.p50, r.clockHz) << "</td><td>"
    << timeText(r.p95, r.clockHz) << "</td><td>" << timeText(r.p99, r.clockHz) << "</td><td>"
    << r.makespan << " cycles</td></tr></table>";
  if (r.config.batch > 1)
    o << "<p class='batching'>Batches of up to " << r.config.batch << " requests, deadline "
      << r.config.batchDeadline << " cycles: " << r.batches << " batches, mean size "
      << formatNumber("%.2f", r.meanBatchSize) << ".</p>";
  o << "<h2>Devices</h2><table><tr><th>device</th><th>runs</th><th>batches</th><th>busy "
       "cycles</th><th>NPU "
       "cycles</th><th>link cycles</th><th>idle cycles</th><th>utilisation</th></tr>";
  for (const DeviceFigures& d : r.devices)
    o << "<tr><td>" << htmlEscape(d.name) << "</td><td>" << d.runs << "</td><td>" << d.batches
      << "</td><td>" << d.busyCycles << "</td><td>" << d.npuCycles << "</td><td>" << d.linkCycles
      << "</td><td>" << d.idleCycles << "</td><td>" << formatNumber("%.1f%%", 100 * d.utilisation)
      << "</td></tr>";
  o << "</table>";
  return o.str();
}

} // namespace

std::string serveHtml(const ServeResult& r, const std::string& title, const std::string& stages) {
  if (r.spans.empty())
    throw Error("HTML report", "the schedule ran no stage (no request was served)");
  size_t stageCount = 0;
  for (const StageSpan& s : r.spans)
    stageCount = std::max(stageCount, s.stage + 1);
  std::ostringstream o;
  o << "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>" << htmlEscape(title)
    << "</title><style>body{font:13px sans-serif;margin:24px;color:#222}h1{font-size:20px}"
       "h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}svg text{font:11px "
       "sans-serif;fill:#333}table{border-collapse:collapse}td,th{padding:2px 10px;text-align:"
       "right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}pre{background:"
       "#f7f7f7;padding:8px;overflow:auto}.k{color:#666}</style></head><body><h1>"
    << htmlEscape(title) << "</h1>" << tables(r);
  o << "<h2>Timeline</h2><p class='k'>Simulated time at "
    << formatNumber("%.0f", double(r.clockHz) / 1e6)
    << " MHz. Each device's stage runs: its input over the host link, the NPU, its output "
       "over the link (hover a bar for the request, the stage, the cycles and the request's "
       "wait for the device). Below, how many requests wait for a queue slot and how many "
       "admitted requests wait for a device.";
  if (r.spans.size() > kServeHtmlMaxRuns)
    o << " The first " << kServeHtmlMaxRuns << " of " << r.spans.size()
      << " stage runs are drawn; the waiting rows count them all.";
  o << "</p>" << legend(stageCount) << timeline(r);
  if (!stages.empty())
    o << "<h2>Stages</h2><pre>" << htmlEscape(stages) << "</pre>";
  o << "<p class='k'>Written by ember-run --requests (the schedule in simulated time; "
       "docs/systems.md section 4).</p></body></html>\n";
  return o.str();
}

} // namespace ember::session
