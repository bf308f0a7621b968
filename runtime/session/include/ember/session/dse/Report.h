#pragma once
/// \file
/// What a sweep prints and writes: the Pareto front of cycles against energy (and with
/// --area, of cycles against the NPU's logic and SRAM), the terminal table, the CSV file
/// and the self-contained HTML page (inline SVG charts).

#include "ember/session/dse/Area.h"
#include "ember/session/dse/Sweep.h"

#include <string>
#include <utility>
#include <vector>

namespace ember::dse {

/// For points (x, y) where smaller is better in both: true for the points no other point
/// dominates (another point at most as large in both and smaller in one). Equal points
/// are all on the front.
std::vector<bool> paretoFront(const std::vector<std::pair<double, double>>& points);

/// paretoFront in any number of dimensions: `points[i]` holds point i's values, all of one
/// length.
std::vector<bool> paretoFrontN(const std::vector<std::vector<double>>& points);

/// Sets `pareto` on the Ok rows of each model that are on its (cycles, energy) front.
void markPareto(std::vector<Result>& rows);

/// The logic of a synthesized NPU: generic cells plus flip-flops (Yosys' cell count).
std::uint64_t logicCells(const PointArea& a);

/// --area: sets `paretoArea` on the Ok rows whose point has an Ok area and that are on
/// their model's front of (cycles, logicCells, SRAM bits): no other such point is as fast
/// with as little logic and SRAM and better in one. `area` is indexed by point.
void markAreaPareto(std::vector<Result>& rows, const std::vector<PointArea>& area);

/// Everything the outputs show: the points (settings, description files), the rows, the
/// names of the settings' columns in order.
struct SweepData {
  std::string title;
  std::vector<Point> points;
  std::vector<Result> rows;
  std::vector<std::string> columns; ///< Setting names, in order of first appearance.
  std::vector<PointArea> area;      ///< --area: per point (by index); empty without it.
};

/// The setting names of `points`, in order of first appearance.
std::vector<std::string> settingColumns(const std::vector<Point>& points);

/// `message` cut to its first `lines` lines, with "(N more lines)" after them (the CSV
/// keeps every line: an unsupported model lists each of its nodes).
std::string shortMessage(const std::string& message, std::size_t lines = 4);

/// The terminal table: one line per row (point, settings, model, status, cycles, energy,
/// utilisation, largest SRAM peak, Pareto mark), then the messages of failed rows
/// (shortMessage).
std::string formatTable(const SweepData& d);

/// The CSV file (RFC 4180 quoting): point, settings, model, status, cycles, npu_us,
/// energy_uj, mac_utilization, per-SRAM peak and size in bytes, sram_peak_max_pct,
/// pareto, host_seconds, description, message; with --area, after sram_peak_max_pct:
/// area_status, npu_cells, npu_flip_flops, sram_bits, area_pareto, area_seconds,
/// area_cached, and area_message at the end.
std::string toCsv(const SweepData& d);

/// One HTML page with no external resource: per model, cycles against energy (marker
/// colour: MAC utilisation; the Pareto front joined and ringed), with --area cycles
/// against the NPU's logic cells (marker size: SRAM bits; the area front ringed),
/// utilisation per point, and the table of rows.
std::string toHtml(const SweepData& d);

} // namespace ember::dse
