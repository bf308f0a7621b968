// The end-to-end estimate of a plan: NPU cycles, host work, host-link transfers, jobs.
#include "ember/driver/Estimate.h"

#include "ember/isa/timing.h"

#include <cstdio>

namespace ember::partition {

double transferSeconds(const isa::IsaDescription& isa, const PartitionOptions& o, uint64_t bytes) {
  if (bytes == 0)
    return 0;
  return double(isa::timing::hostLinkCycles(isa, bytes)) / double(isa.hw().clock_hz) +
         double(bytes) / o.boundaryBytesPerSecond;
}

double hostSeconds(const PartitionOptions& o, int64_t macs, int64_t elements) {
  return double(macs) / o.hostMacsPerSecond + double(elements) / o.hostElementsPerSecond;
}

namespace {

/// An NPU segment: its binary's I/O entries cross the host link one transfer each.
SegmentEstimate npuSegment(const Segment& s, const isa::IsaDescription& isa,
                           const PartitionOptions& o, double cycles) {
  SegmentEstimate e;
  e.backend = s.backend;
  const double clock = double(isa.hw().clock_hz);
  e.npu = cycles / clock;
  e.launch = o.npuLaunchSeconds;
  for (const isa::IoEntry& io : s.npu->binary.io) {
    e.linkBytes += io.size_bytes;
    e.link += double(isa::timing::hostLinkCycles(isa, io.size_bytes)) / clock;
    e.host += double(io.size_bytes) / o.boundaryBytesPerSecond;
  }
  return e;
}

} // namespace

PlanEstimate estimatePlan(const Plan& p, const isa::IsaDescription& isa, const PartitionOptions& o,
                          const std::vector<uint64_t>& npuCycles) {
  PlanEstimate out;
  out.hostMacsPerSecond = o.hostMacsPerSecond;
  out.hostElementsPerSecond = o.hostElementsPerSecond;
  out.boundaryBytesPerSecond = o.boundaryBytesPerSecond;
  out.npuLaunchSeconds = o.npuLaunchSeconds;
  for (size_t i = 0; i < p.segments.size(); ++i) {
    const Segment& s = p.segments[i];
    SegmentEstimate e;
    if (s.npu) {
      const double cycles = i < npuCycles.size() ? double(npuCycles[i]) : s.npu->summary.cycles;
      e = npuSegment(s, isa, o, cycles);
      out.linkTransfers += s.npu->binary.io.size();
    } else {
      e.backend = s.backend;
      e.host = hostSeconds(o, s.macs, s.elements);
    }
    out.npu += e.npu;
    out.host += e.host;
    out.link += e.link;
    out.launch += e.launch;
    out.linkBytes += e.linkBytes;
    out.segments.push_back(std::move(e));
  }
  return out;
}

std::string formatEstimate(const PlanEstimate& e) {
  size_t jobs = 0;
  for (const SegmentEstimate& s : e.segments)
    jobs += s.backend == "npu";
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "end to end (estimated): %.3f ms = NPU %.3f ms + host %.3f ms + host link %.3f ms "
                "(%zu transfer(s), %llu bytes) + %zu NPU job(s) %.3f ms; host share %.1f%%\n",
                e.total() * 1e3, e.npu * 1e3, e.host * 1e3, e.link * 1e3, e.linkTransfers,
                static_cast<unsigned long long>(e.linkBytes), jobs, e.launch * 1e3,
                100.0 * e.hostShare());
  return buf;
}

} // namespace ember::partition
