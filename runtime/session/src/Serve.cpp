// Serving requests over devices in simulated time: the event-driven schedule.
#include "ember/session/Serve.h"

#include "ember/support/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <queue>
#include <set>
#include <tuple>

namespace ember::session {

const char* whenFullName(WhenFull w) {
  return w == WhenFull::Block ? "block" : "refuse";
}

WhenFull parseWhenFull(const std::string& s) {
  if (s == "block")
    return WhenFull::Block;
  if (s == "refuse")
    return WhenFull::Refuse;
  throw UsageError("--when-full " + s, "not 'block' or 'refuse'");
}

uint64_t nearestRank(std::vector<uint64_t>& values, double pct) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(pct / 100.0 * double(values.size()));
  const size_t i = rank < 1 ? 0 : std::min(values.size(), size_t(rank)) - 1;
  return values[i];
}

namespace {

/// The schedule's state: clients, the admission queue, the stages' ready queues, the
/// devices and the pending stage ends (a min-heap on cycle, then order of start).
class Scheduler {
public:
  Scheduler(const ServeProblem& p, const ServeConfig& c) : p_(p), c_(c) {
    r_.config = c;
    r_.clockHz = p.clockHz;
    ready_.resize(p.stageDevices.size());
    freeDevice_.assign(p.devices.size(), true);
    for (const ServeDevice& d : p.devices)
      r_.devices.push_back(DeviceFigures{d.name});
  }
  ServeResult run();

private:
  /// A batch's end: its spans are [span, span + count).
  struct End {
    uint64_t cycle;
    size_t order, span, count;
    bool operator>(const End& o) const {
      return std::tie(cycle, order) > std::tie(o.cycle, o.order);
    }
  };
  void issue(size_t client, uint64_t t);
  void admit(size_t request, uint64_t t);
  void complete(size_t request, uint64_t t);
  void dispatch(uint64_t t);
  void makeReady(size_t request, size_t stage, uint64_t t);
  bool takeBatch(size_t stage, uint64_t t, std::vector<size_t>& batch);
  void start(const std::vector<size_t>& batch, size_t stage, size_t device, uint64_t t);
  void finish();

  const ServeProblem& p_;
  const ServeConfig& c_;
  ServeResult r_;
  size_t next_ = 0, admitted_ = 0;
  std::deque<size_t> blocked_;        ///< Requests waiting for a slot (Block).
  std::deque<size_t> waitingClients_; ///< Clients refused, waiting for a slot (Refuse).
  std::vector<std::deque<size_t>> ready_;
  std::vector<bool> freeDevice_;
  std::vector<uint64_t> readySince_; ///< Per request: when it became ready for its stage.
  std::set<uint64_t> wakes_;         ///< Batch deadlines to dispatch at.
  std::priority_queue<End, std::vector<End>, std::greater<End>> ends_;
};

void Scheduler::issue(size_t client, uint64_t t) {
  const size_t request = next_++;
  r_.requests.push_back(RequestFigures{client, t, t, t, false});
  readySince_.push_back(t);
  admit(request, t);
}

void Scheduler::admit(size_t request, uint64_t t) {
  RequestFigures& q = r_.requests[request];
  if (admitted_ < c_.depth()) {
    ++admitted_;
    r_.maxAdmitted = std::max(r_.maxAdmitted, admitted_);
    q.admitted = t;
    if (t > q.issued)
      ++r_.waitedForSlot;
    makeReady(request, 0, t);
  } else if (c_.whenFull == WhenFull::Block) {
    blocked_.push_back(request);
  } else {
    q.refused = true;
    ++r_.refused;
    waitingClients_.push_back(q.client);
  }
}

/// A request leaves: its slot goes to the oldest blocked request, then the refused
/// clients retry in the order they were refused, then its own client issues its next.
void Scheduler::complete(size_t request, uint64_t t) {
  RequestFigures& q = r_.requests[request];
  q.done = t;
  ++r_.completed;
  --admitted_;
  if (!blocked_.empty()) {
    const size_t b = blocked_.front();
    blocked_.pop_front();
    admit(b, t);
  }
  std::deque<size_t> retry;
  retry.swap(waitingClients_);
  for (size_t client : retry)
    if (next_ < c_.requests)
      issue(client, t);
  if (next_ < c_.requests)
    issue(q.client, t);
}

void Scheduler::makeReady(size_t request, size_t stage, uint64_t t) {
  readySince_[request] = t;
  ready_[stage].push_back(request);
}

/// The next batch of `stage` (the oldest ready requests, up to ServeConfig::batch), or
/// false while fewer are ready and the oldest's deadline is still ahead (a wake-up is
/// set for it).
bool Scheduler::takeBatch(size_t stage, uint64_t t, std::vector<size_t>& batch) {
  std::deque<size_t>& q = ready_[stage];
  const size_t most = std::max<size_t>(1, c_.batch);
  const uint64_t since = readySince_[q.front()];
  const uint64_t deadline =
      c_.batchDeadline > UINT64_MAX - since ? UINT64_MAX : since + c_.batchDeadline;
  if (q.size() < most && t < deadline) {
    wakes_.insert(deadline);
    return false;
  }
  batch.assign(q.begin(), q.begin() + std::ptrdiff_t(std::min(most, q.size())));
  q.erase(q.begin(), q.begin() + std::ptrdiff_t(batch.size()));
  return true;
}

/// Later stages first (a request in flight finishes before a new one starts when they
/// share a device); within a stage, the oldest ready requests (a batch) on the free device
/// that has been busy least (then the lowest index): the replicas' load balance.
void Scheduler::dispatch(uint64_t t) {
  std::vector<size_t> batch;
  for (size_t k = ready_.size(); k-- > 0;) {
    while (!ready_[k].empty()) {
      size_t best = SIZE_MAX;
      for (size_t d : p_.stageDevices[k])
        if (freeDevice_[d] &&
            (best == SIZE_MAX || r_.devices[d].busyCycles < r_.devices[best].busyCycles))
          best = d;
      if (best == SIZE_MAX || !takeBatch(k, t, batch))
        break;
      start(batch, k, best, t);
    }
  }
}

/// A batch's run: its requests' NPU cycles back to back, their inputs in one transfer
/// over the device's link before, their outputs in one after.
void Scheduler::start(const std::vector<size_t>& batch, size_t stage, size_t device, uint64_t t) {
  StageCost cost{0, 0, 0};
  for (size_t request : batch) {
    const StageCost c = p_.cost(request, stage);
    cost.npuCycles += c.npuCycles;
    cost.inBytes += c.inBytes;
    cost.outBytes += c.outBytes;
  }
  uint64_t waited = 0;
  if (!p_.joint.empty()) {
    cost.npuCycles = batch.size() * p_.joint.npu.at(device).at(stage);
    waited = batch.size() * p_.joint.arbitration.at(device).at(stage);
  }
  const isa::LinkDesc& link = p_.devices[device].link;
  StageSpan s{batch.front(), stage, device, t};
  s.npuStart = t + link.transferCycles(cost.inBytes);
  s.npuEnd = s.npuStart + cost.npuCycles;
  s.end = s.npuEnd + link.transferCycles(cost.outBytes);
  s.batch = r_.batches++;
  s.batchSize = batch.size();
  DeviceFigures& d = r_.devices[device];
  d.busyCycles += s.end - s.start;
  d.npuCycles += cost.npuCycles;
  d.arbitrationStallCycles += waited;
  d.linkCycles += (s.end - s.start) - cost.npuCycles;
  d.runs += batch.size();
  ++d.batches;
  freeDevice_[device] = false;
  ends_.push(End{s.end, r_.spans.size(), r_.spans.size(), batch.size()});
  for (size_t request : batch) {
    s.request = request;
    r_.spans.push_back(s);
  }
}

/// Makespan, latency percentiles, throughput and the devices' idle time.
void Scheduler::finish() {
  std::vector<uint64_t> lat;
  double sum = 0;
  for (const RequestFigures& q : r_.requests)
    if (!q.refused) {
      lat.push_back(q.latency());
      sum += double(q.latency());
      r_.makespan = std::max(r_.makespan, q.done);
    }
  if (!lat.empty())
    r_.meanLatency = sum / double(lat.size());
  r_.p50 = nearestRank(lat, 50);
  r_.p95 = nearestRank(lat, 95);
  r_.p99 = nearestRank(lat, 99);
  r_.maxLatency = lat.empty() ? 0 : lat.back();
  if (r_.makespan > 0)
    r_.throughputPerSecond = double(r_.completed) * double(p_.clockHz) / double(r_.makespan);
  r_.meanBatchSize = r_.batches ? double(r_.spans.size()) / double(r_.batches) : 0;
  for (DeviceFigures& d : r_.devices) {
    d.idleCycles = r_.makespan - std::min(r_.makespan, d.busyCycles);
    d.utilisation = r_.makespan ? double(d.busyCycles) / double(r_.makespan) : 0;
  }
}

ServeResult Scheduler::run() {
  for (size_t client = 0; client < c_.concurrency && next_ < c_.requests; ++client)
    issue(client, 0);
  dispatch(0);
  while (!ends_.empty() || !wakes_.empty()) {
    uint64_t t = wakes_.empty() ? UINT64_MAX : *wakes_.begin();
    if (!ends_.empty())
      t = std::min(t, ends_.top().cycle);
    wakes_.erase(wakes_.begin(), wakes_.upper_bound(t));
    while (!ends_.empty() && ends_.top().cycle == t) {
      const End e = ends_.top();
      ends_.pop();
      freeDevice_[r_.spans[e.span].device] = true;
      for (size_t i = e.span; i < e.span + e.count; ++i) {
        const StageSpan s = r_.spans[i];
        if (s.stage + 1 < ready_.size())
          makeReady(s.request, s.stage + 1, t);
        else
          complete(s.request, t);
      }
    }
    dispatch(t);
  }
  if (r_.completed + r_.refused != c_.requests || !blocked_.empty())
    throw InternalError("serve", "the schedule lost a request: " + std::to_string(r_.completed) +
                                     " completed + " + std::to_string(r_.refused) + " refused of " +
                                     std::to_string(c_.requests));
  finish();
  return std::move(r_);
}

std::string cyclesText(uint64_t cycles, uint64_t clockHz) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%llu cycles (%.3f ms)", static_cast<unsigned long long>(cycles),
                clockHz ? double(cycles) * 1e3 / double(clockHz) : 0.0);
  return buf;
}

} // namespace

ServeResult schedule(const ServeProblem& p, const ServeConfig& c) {
  if (c.concurrency == 0)
    throw UsageError("--concurrency", "at least one client issues requests");
  if (p.stageDevices.empty())
    throw Error("serve", "the program has no stage to run");
  for (size_t k = 0; k < p.stageDevices.size(); ++k) {
    if (p.stageDevices[k].empty())
      throw Error("serve: stage " + std::to_string(k), "no device runs it");
    for (size_t d : p.stageDevices[k])
      if (d >= p.devices.size())
        throw InternalError("serve: stage " + std::to_string(k),
                            "device " + std::to_string(d) + " is not a device of the schedule");
  }
  return Scheduler(p, c).run();
}

std::string formatServeResult(const ServeResult& r) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "serve: %zu requests, %zu clients, queue depth %zu (%s when full): %zu completed, "
                "%zu refused, %zu waited for a slot\n",
                r.config.requests, r.config.concurrency, r.config.depth(),
                whenFullName(r.config.whenFull), r.completed, r.refused, r.waitedForSlot);
  out += buf;
  std::snprintf(buf, sizeof buf, "throughput: %.1f inferences/s at %.0f MHz (makespan %s)\n",
                r.throughputPerSecond, double(r.clockHz) / 1e6,
                cyclesText(r.makespan, r.clockHz).c_str());
  out += buf;
  out += "latency: p50 " + cyclesText(r.p50, r.clockHz) + ", p95 " + cyclesText(r.p95, r.clockHz) +
         ", p99 " + cyclesText(r.p99, r.clockHz) + "\n";
  if (r.config.batch > 1) {
    std::snprintf(buf, sizeof buf,
                  "batching: up to %zu requests, deadline %llu cycles: %zu batches, mean size "
                  "%.2f\n",
                  r.config.batch, static_cast<unsigned long long>(r.config.batchDeadline),
                  r.batches, r.meanBatchSize);
    out += buf;
  }
  bool waits = false;
  for (const DeviceFigures& d : r.devices)
    waits = waits || d.arbitrationStallCycles > 0;
  std::snprintf(buf, sizeof buf, "  %-10s %6s %14s %14s %12s %14s %8s%s\n", "device", "runs",
                "busy cycles", "NPU cycles", "link cycles", "idle cycles", "util %",
                waits ? "  DRAM arbitration stall" : "");
  out += buf;
  for (const DeviceFigures& d : r.devices) {
    std::snprintf(buf, sizeof buf, "  %-10s %6zu %14llu %14llu %12llu %14llu %8.1f", d.name.c_str(),
                  d.runs, static_cast<unsigned long long>(d.busyCycles),
                  static_cast<unsigned long long>(d.npuCycles),
                  static_cast<unsigned long long>(d.linkCycles),
                  static_cast<unsigned long long>(d.idleCycles), 100.0 * d.utilisation);
    out += buf;
    if (waits)
      out += "  " + std::to_string(d.arbitrationStallCycles);
    out += "\n";
  }
  return out;
}

std::string serveResultJson(const ServeResult& r, const std::string& extra) {
  nlohmann::json j = extra.empty() ? nlohmann::json::object() : nlohmann::json::parse(extra);
  j["requests"] = r.config.requests;
  j["completed"] = r.completed;
  j["refused"] = r.refused;
  j["concurrency"] = r.config.concurrency;
  j["queue_depth"] = r.config.depth();
  j["when_full"] = whenFullName(r.config.whenFull);
  j["waited_for_slot"] = r.waitedForSlot;
  j["max_admitted"] = r.maxAdmitted;
  j["clock_hz"] = r.clockHz;
  j["makespan_cycles"] = r.makespan;
  j["throughput_per_s"] = r.throughputPerSecond;
  j["batch"] = r.config.batch;
  j["batch_deadline_cycles"] = r.config.batchDeadline;
  j["batches"] = r.batches;
  j["mean_batch_size"] = r.meanBatchSize;
  j["latency_cycles"] = {{"p50", r.p50},
                         {"p95", r.p95},
                         {"p99", r.p99},
                         {"mean", r.meanLatency},
                         {"max", r.maxLatency}};
  nlohmann::json devs = nlohmann::json::array();
  for (const DeviceFigures& d : r.devices)
    devs.push_back(
        {{"name", d.name},
         {"runs", d.runs},
         {"batches", d.batches},
         {"busy_cycles", d.busyCycles},
         {"npu_cycles", d.npuCycles},
         {"link_cycles", d.linkCycles},
         {"utilisation", d.utilisation},
         {"stalls",
          {{"idle_cycles", d.idleCycles}, {"dram_arbitration_cycles", d.arbitrationStallCycles}}}});
  j["devices"] = devs;
  return j.dump(1) + "\n";
}

std::string serveTraceJson(const ServeResult& r) {
  const double us = r.clockHz ? 1e6 / double(r.clockHz) : 1e-3;
  nlohmann::json events = nlohmann::json::array();
  auto slice = [&](const std::string& name, size_t tid, uint64_t from, uint64_t to,
                   const nlohmann::json& args) {
    if (to > from)
      events.push_back({{"name", name},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", tid},
                        {"ts", double(from) * us},
                        {"dur", double(to - from) * us},
                        {"args", args}});
  };
  for (size_t d = 0; d <= r.devices.size(); ++d)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", d},
                      {"args", {{"name", d < r.devices.size() ? r.devices[d].name : "requests"}}}});
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const StageSpan& s = r.spans[i];
    if (i > 0 && r.spans[i - 1].batch == s.batch)
      continue; // one slice per batch, named by its requests
    std::string id = "r" + std::to_string(s.request);
    nlohmann::json args = {{"request", s.request}, {"stage", s.stage}};
    if (s.batchSize > 1) {
      args["batch"] = nlohmann::json::array();
      for (size_t j = i; j < i + s.batchSize; ++j) {
        id += j > i ? "+r" + std::to_string(r.spans[j].request) : "";
        args["batch"].push_back(r.spans[j].request);
      }
    }
    id += " s" + std::to_string(s.stage);
    slice(id + " link in", s.device, s.start, s.npuStart, args);
    slice(id + " npu", s.device, s.npuStart, s.npuEnd, args);
    slice(id + " link out", s.device, s.npuEnd, s.end, args);
  }
  for (size_t q = 0; q < r.requests.size(); ++q) {
    const RequestFigures& f = r.requests[q];
    slice("r" + std::to_string(q) + " waits for a slot", r.devices.size(), f.issued, f.admitted,
          {{"request", q}});
  }
  return nlohmann::json({{"traceEvents", events}, {"displayTimeUnit", "ns"}}).dump() + "\n";
}

} // namespace ember::session
