// The one report and the one trace of a partitioned run.
#include "ember/session/PlanReport.h"

#include <string>

namespace ember::session {

using nlohmann::json;

partition::PlanEstimate runEstimate(const partition::Plan& plan, const isa::IsaDescription& isa,
                                    const std::vector<partition::SegmentRun>& runs) {
  partition::PartitionOptions o;
  const partition::PlanEstimate& placed = plan.estimate;
  if (placed.hostMacsPerSecond > 0) {
    o.hostMacsPerSecond = placed.hostMacsPerSecond;
    o.hostElementsPerSecond = placed.hostElementsPerSecond;
    o.boundaryBytesPerSecond = placed.boundaryBytesPerSecond;
    o.npuLaunchSeconds = placed.npuLaunchSeconds;
  }
  std::vector<uint64_t> cycles;
  for (size_t s = 0; s < plan.segments.size(); ++s)
    cycles.push_back(
        s < runs.size() && plan.segments[s].npu
            ? runs[s].npuCycles
            : uint64_t(plan.segments[s].npu ? plan.segments[s].npu->summary.cycles : 0));
  return partition::estimatePlan(plan, isa, o, cycles);
}

namespace {

json estimateJson(const partition::PlanEstimate& e) {
  return {{"end_to_end_seconds", e.total()},
          {"npu_seconds", e.npu},
          {"host_seconds", e.host},
          {"host_link_seconds", e.link},
          {"npu_launch_seconds", e.launch},
          {"host_link_bytes", e.linkBytes},
          {"host_link_transfers", e.linkTransfers},
          {"host_share", e.hostShare()},
          {"rates",
           {{"host_macs_per_second", e.hostMacsPerSecond},
            {"host_elements_per_second", e.hostElementsPerSecond},
            {"boundary_bytes_per_second", e.boundaryBytesPerSecond},
            {"npu_launch_seconds", e.npuLaunchSeconds}}}};
}

json placementJson(const partition::Plan& plan) {
  return {{"nodes", plan.nodes.size()},
          {"npu_nodes", plan.npuNodes()},
          {"macs", plan.totalMacs()},
          {"npu_macs", plan.npuMacs()},
          {"segments", plan.segments.size()},
          {"npu_segments", plan.npuSegments()},
          {"boundary_bytes", plan.boundaryBytes()},
          {"summary", partition::placementSummaryLine(plan)}};
}

} // namespace

json planReportJson(const partition::Plan& plan, const isa::IsaDescription& isa,
                    const partition::PlanEstimate& e,
                    const std::vector<partition::SegmentRun>& runs,
                    const std::vector<platform::Report>& npuReports) {
  json segs = json::array();
  uint64_t cycles = 0;
  double energy = 0, hostWall = 0;
  size_t npuIndex = 0;
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const partition::Segment& seg = plan.segments[s];
    const partition::SegmentEstimate& se = e.segments[s];
    json j = {{"index", s},
              {"backend", seg.backend},
              {"nodes", seg.numNodes},
              {"macs", seg.macs},
              {"estimate",
               {{"seconds", se.total()},
                {"npu_seconds", se.npu},
                {"host_seconds", se.host},
                {"host_link_seconds", se.link},
                {"npu_launch_seconds", se.launch},
                {"host_link_bytes", se.linkBytes}}}};
    if (s < runs.size()) {
      j["in_bytes"] = runs[s].inBytes;
      j["out_bytes"] = runs[s].outBytes;
      j["wall_seconds"] = runs[s].seconds;
    }
    if (seg.npu && npuIndex < npuReports.size()) {
      const platform::Report& r = npuReports[npuIndex++];
      cycles += r.cycles;
      energy += r.energy_total_pj;
      j["npu"] = platform::toJson(r);
    } else if (!seg.npu && s < runs.size()) {
      hostWall += runs[s].seconds;
    }
    segs.push_back(std::move(j));
  }
  return {{"format", "ember-partitioned-run"},
          {"model", plan.source},
          {"function", plan.functionName},
          {"isa", isa.name()},
          {"placement", placementJson(plan)},
          {"estimate", estimateJson(e)},
          {"totals",
           {{"npu_cycles", cycles},
            {"npu_energy_pj", energy},
            {"host_wall_seconds", hostWall},
            {"end_to_end_seconds", e.total()}}},
          {"segments", segs}};
}

namespace {

/// The events of `r`'s trace moved to process `pid` and `offsetUs` later.
void appendShifted(json& events, const json& trace, int pid, double offsetUs) {
  for (json ev : trace.at("traceEvents")) {
    ev["pid"] = pid;
    if (ev.contains("ts"))
      ev["ts"] = ev["ts"].get<double>() + offsetUs;
    if (ev.value("name", "") == "process_name")
      continue; // named by the caller
    events.push_back(std::move(ev));
  }
}

json slice(int pid, int tid, const std::string& name, const char* cat, double tsUs, double durUs,
           json args) {
  return {{"ph", "X"},  {"pid", pid}, {"tid", tid},   {"name", name},
          {"cat", cat}, {"ts", tsUs}, {"dur", durUs}, {"args", std::move(args)}};
}

} // namespace

json planTrace(const partition::Plan& plan, const isa::IsaDescription& isa,
               const partition::PlanEstimate& e, const std::vector<partition::SegmentRun>& runs,
               const std::vector<platform::Report>& npuReports) {
  json events = json::array();
  double t = 0; // microseconds on the estimated end-to-end timeline
  size_t npuIndex = 0;
  for (size_t s = 0; s < plan.segments.size(); ++s) {
    const partition::Segment& seg = plan.segments[s];
    const partition::SegmentEstimate& se = e.segments[s];
    const int pid = int(s) + 1;
    const std::string name = "segment " + std::to_string(s) + ": " + seg.backend;
    events.push_back(
        {{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", name}}}});
    events.push_back(
        {{"ph", "M"}, {"pid", pid}, {"name", "process_sort_index"}, {"args", {{"sort_index", s}}}});
    const double wall = s < runs.size() ? runs[s].seconds : 0;
    if (seg.npu) {
      const double boundary = (se.link + se.launch + se.host) * 1e6;
      events.push_back(slice(pid, 5, "host link, conversion and job launch", "boundary", t,
                             boundary,
                             {{"host_link_bytes", se.linkBytes},
                              {"host_link_seconds", se.link},
                              {"conversion_seconds", se.host},
                              {"launch_seconds", se.launch}}));
      if (npuIndex < npuReports.size())
        appendShifted(events, platform::toChromeTrace(npuReports[npuIndex++]), pid, t + boundary);
    } else {
      events.push_back(slice(
          pid, 1, name + " (" + std::to_string(seg.numNodes) + " nodes)", "host", t, se.host * 1e6,
          {{"estimated_seconds", se.host}, {"wall_seconds", wall}, {"macs", seg.macs}}));
    }
    t += se.total() * 1e6;
  }
  return {{"traceEvents", events},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"isa", isa.name()}, {"model", plan.source}, {"end_to_end_seconds", e.total()}}}};
}

void writePlanReports(const DeviceOptions& opts, const partition::Plan& plan,
                      const isa::IsaDescription& isa,
                      const std::vector<partition::SegmentRun>& runs,
                      const std::vector<platform::Report>& npuReports) {
  if (opts.reportJson.empty() && opts.traceJson.empty())
    return;
  const partition::PlanEstimate e = runEstimate(plan, isa, runs);
  if (!opts.reportJson.empty())
    platform::writeJsonFile(opts.reportJson, planReportJson(plan, isa, e, runs, npuReports));
  if (!opts.traceJson.empty())
    platform::writeJsonFile(opts.traceJson, planTrace(plan, isa, e, runs, npuReports), -1);
}

} // namespace ember::session
