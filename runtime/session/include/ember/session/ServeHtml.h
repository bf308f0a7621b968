#pragma once
/// \file
/// The serving schedule as one self-contained HTML page (`ember-run --requests N --html
/// R.html`, docs/systems.md section 4): the figures of the report and a per-device
/// timeline over simulated time. Each device is a row; each of its stage runs is drawn as
/// its link-in, NPU and link-out bars (the NPU bar in its stage's colour), with the
/// request(s), the stage, the cycles and the request's wait for the device in the bar's
/// tooltip; two rows below count the requests waiting for a queue slot and those admitted
/// but waiting for a device. Inline SVG: no script, no network, no file beside it.

#include "ember/session/Serve.h"

#include <cstddef>
#include <string>

namespace ember::session {

/// At most this many stage runs are drawn on the timeline (the first ones, in start
/// order; the page says how many were left out): a page stays a few MiB.
constexpr size_t kServeHtmlMaxRuns = 5000;

/// The page for schedule `r`: `title` as its heading, `stages` (the stages' table
/// ember-run prints) shown preformatted. Throws ember::Error when nothing was scheduled.
std::string serveHtml(const ServeResult& r, const std::string& title, const std::string& stages);

} // namespace ember::session
