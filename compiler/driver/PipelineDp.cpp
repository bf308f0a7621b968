// The multi-device partitioner's core (ember/driver/Pipeline.h): stage figures and the
// dynamic program that cuts the items into one stage per device with the least
// bottleneck, within the devices' DRAMs.
#include "ember/driver/Pipeline.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <set>

namespace ember::partition {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kNone = std::numeric_limits<size_t>::max();

/// Stage figures of [begin, end) kept while `end` grows one item at a time: a value read
/// from before `begin` is counted once (stamped with `begin`), a value produced inside
/// leaves the outgoing bytes when its last reader joins.
class StageSweep {
public:
  StageSweep(const PipelineProblem& p, size_t begin, std::vector<size_t>& stamp)
      : p_(p), begin_(begin), stamp_(stamp) {}

  void add(size_t t) {
    const PipelineItem& it = p_.items[t];
    f_.weightBytes += it.weightBytes;
    f_.peakWorkBytes = std::max(f_.peakWorkBytes, it.workBytes);
    for (size_t v : it.inputs) {
      const PipelineValue& val = p_.values[v];
      if (val.producer < int(begin_)) {
        if (stamp_[v] != begin_) {
          stamp_[v] = begin_;
          (val.producer < 0 ? f_.inFromHost : f_.inFromStages) += val.bytes;
        }
      } else if (val.lastReader == t && !val.modelOutput) {
        f_.outToStages -= val.bytes;
      }
    }
    for (size_t v : it.results) {
      const PipelineValue& val = p_.values[v];
      if (val.modelOutput)
        f_.outToHost += val.bytes;
      else if (val.hasReader && val.lastReader > t)
        f_.outToStages += val.bytes;
    }
  }

  const StageFigures& figures() const { return f_; }

private:
  const PipelineProblem& p_;
  size_t begin_;
  std::vector<size_t>& stamp_;
  StageFigures f_;
};

/// Cycles prefix sums per device: pre[d][t] = cycles of items [0, t) on device d.
std::vector<std::vector<double>> prefixCycles(const PipelineProblem& p) {
  std::vector<std::vector<double>> pre(p.devices.size(), std::vector<double>(p.items.size() + 1));
  for (size_t d = 0; d < p.devices.size(); ++d)
    for (size_t t = 0; t < p.items.size(); ++t)
      pre[d][t + 1] = pre[d][t] + p.items[t].cycles.at(d);
  return pre;
}

PipelineStage makeStage(const PipelineProblem& p, size_t d, size_t b, size_t e) {
  PipelineStage s;
  s.device = d;
  s.begin = b;
  s.end = e;
  s.figures = stageFigures(p, b, e);
  s.computeCycles = stageComputeCycles(p, d, b, e);
  s.linkCycles = stageLinkCycles(p, d, s.figures);
  return s;
}

/// The DP: best[d][j] = least bottleneck of items [0, j) over devices 0..d, device d
/// taking a stage ending at j. `capacity`: stages must fit their device's DRAM. Returns
/// no stages when nothing fits.
PipelineAssignment runDp(const PipelineProblem& p, bool capacity) {
  const size_t n = p.items.size(), k = p.devices.size();
  const auto pre = prefixCycles(p);
  std::vector<std::vector<double>> best(k, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<size_t>> from(k, std::vector<size_t>(n + 1, kNone));
  std::vector<size_t> stamp(p.values.size(), kNone);
  for (size_t i = 0; i < n; ++i) {
    StageSweep sweep(p, i, stamp);
    for (size_t j = i + 1; j <= n; ++j) {
      sweep.add(j - 1);
      const StageFigures& f = sweep.figures();
      for (size_t d = 0; d < k && d <= i; ++d) {
        const double before = d == 0 ? (i == 0 ? 0.0 : kInf) : best[d - 1][i];
        if (before == kInf || n - j < k - 1 - d)
          continue;
        if (capacity && f.dramBytes() > p.devices[d].dramBytes)
          continue;
        const double cost = pre[d][j] - pre[d][i] + stageLinkCycles(p, d, f);
        const double v = std::max(before, cost);
        if (v < best[d][j]) {
          best[d][j] = v;
          from[d][j] = i;
        }
      }
    }
  }
  PipelineAssignment a;
  if (best[k - 1][n] == kInf)
    return a;
  a.bottleneck = best[k - 1][n];
  size_t end = n;
  for (size_t d = k; d-- > 0;) {
    const size_t begin = from[d][end];
    a.stages.push_back(makeStage(p, d, begin, end));
    end = begin;
  }
  std::reverse(a.stages.begin(), a.stages.end());
  return a;
}

std::string itemRange(const PipelineProblem& p, const PipelineStage& s) {
  return "layers '" + p.items[s.begin].name + "' .. '" + p.items[s.end - 1].name + "'";
}

/// No cut fits: names the first stage of the fastest cut without the limit that does
/// not fit its device.
[[noreturn]] void throwNoFit(const PipelineProblem& p) {
  const PipelineAssignment free = runDp(p, false);
  for (size_t k = 0; k < free.stages.size(); ++k) {
    const PipelineStage& s = free.stages[k];
    const PipelineDevice& dev = p.devices[s.device];
    if (s.figures.dramBytes() > dev.dramBytes)
      throw Error("pipeline",
                  "stage " + std::to_string(k) + " needs " + formatBytes(s.figures.dramBytes()) +
                      " of DRAM, device " + dev.name + " has " + formatBytes(dev.dramBytes) + " (" +
                      itemRange(p, s) + ", in the fastest cut without the limit): " +
                      "no cut of the " + std::to_string(p.items.size()) + " layers over the " +
                      std::to_string(p.devices.size()) + " devices fits their DRAMs");
  }
  throw Error("pipeline", "no cut of the layers fits the devices' DRAMs");
}

/// Stages on one shared DRAM must fit it together.
void checkSharedDrams(const PipelineProblem& p, const PipelineAssignment& a) {
  std::set<size_t> drams;
  for (const PipelineDevice& d : p.devices)
    drams.insert(d.dram);
  for (size_t dram : drams) {
    uint64_t need = 0;
    std::string stages, devices;
    uint64_t size = 0;
    for (size_t k = 0; k < a.stages.size(); ++k) {
      const PipelineDevice& dev = p.devices[a.stages[k].device];
      if (dev.dram != dram)
        continue;
      need += a.stages[k].figures.dramBytes();
      size = dev.dramBytes;
      stages += (stages.empty() ? "" : ", ") + std::to_string(k);
      devices += (devices.empty() ? "" : ", ") + dev.name;
    }
    if (need > size)
      throw Error("pipeline", "stages " + stages + " need " + formatBytes(need) +
                                  " of DRAM together, the DRAM devices " + devices + " share has " +
                                  formatBytes(size));
  }
}

} // namespace

bool PipelineProblem::chain() const {
  for (size_t t = 0; t < items.size(); ++t)
    for (size_t v : items[t].inputs) {
      const int producer = values[v].producer;
      if (producer >= 0 && size_t(producer) + 1 != t)
        return false;
    }
  return true;
}

StageFigures stageFigures(const PipelineProblem& p, size_t begin, size_t end) {
  StageFigures f;
  std::set<size_t> read;
  for (size_t t = begin; t < end; ++t) {
    f.weightBytes += p.items[t].weightBytes;
    f.peakWorkBytes = std::max(f.peakWorkBytes, p.items[t].workBytes);
    read.insert(p.items[t].inputs.begin(), p.items[t].inputs.end());
  }
  for (size_t v : read) {
    const PipelineValue& val = p.values[v];
    if (val.producer < 0)
      f.inFromHost += val.bytes;
    else if (size_t(val.producer) < begin)
      f.inFromStages += val.bytes;
  }
  for (const PipelineValue& val : p.values) {
    if (val.producer < int(begin) || val.producer >= int(end))
      continue;
    if (val.modelOutput)
      f.outToHost += val.bytes;
    else if (val.hasReader && val.lastReader >= end)
      f.outToStages += val.bytes;
  }
  return f;
}

double stageComputeCycles(const PipelineProblem& p, size_t device, size_t begin, size_t end) {
  double c = 0;
  for (size_t t = begin; t < end; ++t)
    c += p.items[t].cycles.at(device);
  return c;
}

double stageLinkCycles(const PipelineProblem& p, size_t device, const StageFigures& f) {
  const PipelineDevice& d = p.devices.at(device);
  const uint64_t in = f.inFromHost + (d.sharesWithPrev ? 0 : f.inFromStages);
  const uint64_t out = f.outToHost + (d.sharesWithNext ? 0 : f.outToStages);
  return double(d.link.transferCycles(in) + d.link.transferCycles(out));
}

PipelineAssignment optimalPipeline(const PipelineProblem& p) {
  if (p.devices.empty())
    throw Error("pipeline", "no devices to pipeline over");
  if (p.items.size() < p.devices.size())
    throw Error("pipeline", "the model has " + std::to_string(p.items.size()) +
                                " layer(s), fewer than the " + std::to_string(p.devices.size()) +
                                " devices: every device takes a stage of at least one layer");
  PipelineAssignment a = runDp(p, true);
  if (a.stages.empty())
    throwNoFit(p);
  checkSharedDrams(p, a);
  return a;
}

std::string formatBytes(uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  double v = double(bytes) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < 4) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  if (v == double(uint64_t(v)))
    std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

} // namespace ember::partition
