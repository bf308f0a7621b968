#pragma once
/// \file
/// The simulator's report as one self-contained HTML page for architects: per-layer
/// cycles and MAC utilisation, a roofline (each layer's arithmetic intensity against the
/// MACs per cycle it achieved, with the description's peak and ridge), energy by
/// component and by layer, what each engine did with its cycles, and, for partitioned
/// programs, the placement. Charts are inline SVG drawn here: no script, no network, no
/// file beside it.

#include "ember/platform/Report.h"

#include <string>
#include <vector>

namespace ember::platform {

/// What the page shows besides the reports.
struct HtmlReportOptions {
  std::string title = "Ember NPU report"; ///< The page's heading (e.g. the model's name).
  std::string placement;                  ///< One line: what ran where ("" = none).
  std::string placementTable;             ///< The placement report, shown preformatted.
};

/// The heading for a run of the model (or binary, or package) at `path`: its file name
/// with its folder ("resnet18/model.onnx on the Ember NPU": the zoo's models are all
/// called model.onnx).
std::string htmlReportTitle(const std::string& path);

/// The page for the NPU segments' reports of one run, in order (one for a model the NPU
/// runs whole). Throws ember::Error when `reports` is empty.
std::string toHtml(const std::vector<Report>& reports, const HtmlReportOptions& options = {});

} // namespace ember::platform
