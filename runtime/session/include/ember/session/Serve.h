#pragma once
/// \file
/// Serving concurrent requests over NPU devices, in simulated time (docs/systems.md
/// section 4). A request goes through a pipeline of stages; each stage runs on one of
/// the devices given for it (one device per stage: a pipeline; several: replicas,
/// load-balanced). The schedule is event-driven over simulated cycles: clients issue
/// requests, a bounded queue admits them (back-pressure: a client blocks, or gets a
/// "busy" refusal naming the queue depth), a free device takes the oldest request ready
/// for its stage, and a stage occupies its device for its input's transfer over the
/// device's host link, the NPU's cycles and its output's transfer. The NPU cycles come
/// from the caller (the simulation of each stage's binary); this file only schedules.

#include "ember/isa/system.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::session {

/// A device as the schedule sees it: its name and its host link.
struct ServeDevice {
  std::string name;
  isa::LinkDesc link;
};

/// What stage k of request r costs: the NPU's cycles, and the bytes it reads from and
/// writes to the host over its device's link.
struct StageCost {
  uint64_t npuCycles = 0;
  uint64_t inBytes = 0, outBytes = 0;
};

/// What a client is told when the queue is full.
enum class WhenFull {
  Block,  ///< it waits until a request leaves (its latency counts the wait)
  Refuse, ///< it is refused ("busy") and issues its next request when one leaves
};

/// "block" or "refuse".
const char* whenFullName(WhenFull w);
/// Parses "block" / "refuse" (ember::UsageError naming the choices otherwise).
WhenFull parseWhenFull(const std::string& s);

/// The load: `concurrency` clients, each with one request outstanding at a time (a
/// client issues its next request the cycle its previous one completes), `requests` in
/// all; at most `queueDepth` requests admitted (waiting for a stage or running) at once.
struct ServeConfig {
  size_t requests = 1;
  size_t concurrency = 1;
  size_t queueDepth = 0; ///< 0: as many as `concurrency` (nothing ever waits for a slot).
  WhenFull whenFull = WhenFull::Block;
  /// Batching: a free device takes up to `batch` requests ready for its stage at once;
  /// with fewer ready it waits until `batchDeadline` cycles after the oldest of them
  /// became ready, then takes what is ready. A batch runs as `batch` back-to-back runs of
  /// the stage's binary whose inputs cross the host link in one transfer and whose
  /// outputs cross in one (one link latency each way instead of one per request).
  size_t batch = 1;
  uint64_t batchDeadline = 0;
  size_t depth() const { return queueDepth ? queueDepth : concurrency; }
};

/// A stage's NPU cycles on each device measured with every device of the system in one
/// simulation (sim::runTogether: contention on shared DRAMs, docs/systems.md section 4).
struct JointCycles {
  /// [device][stage]: the stage's NPU cycles on that device and the cycles its DMAs
  /// waited for another device's transfer (rule M4); unused where the device does not
  /// run the stage.
  std::vector<std::vector<uint64_t>> npu, arbitration;
  bool empty() const { return npu.empty(); }
};

/// Devices, stages (the devices each stage may run on) and the cost of every stage run.
struct ServeProblem {
  std::vector<ServeDevice> devices;
  std::vector<std::vector<size_t>> stageDevices; ///< Per stage: indices into `devices`.
  std::function<StageCost(size_t request, size_t stage)> cost;
  uint64_t clockHz = 1000000000;
  /// When not empty, a stage run on device d takes joint.npu[d][stage] NPU cycles instead
  /// of cost()'s (its bytes stay cost()'s) and adds joint.arbitration[d][stage] to the
  /// device's arbitration stall.
  JointCycles joint;
};

/// One request's stage run: request, stage, device and its cycles (link in, NPU, link
/// out). The requests of one batch have one span each, with the batch's cycles.
struct StageSpan {
  size_t request = 0, stage = 0, device = 0;
  uint64_t start = 0, npuStart = 0, npuEnd = 0, end = 0;
  size_t batch = 0;     ///< The batch's index (in start order over the schedule).
  size_t batchSize = 1; ///< Requests in the batch.
};

/// One request: issued by `client` at `issued`, admitted at `admitted`, done at `done`.
struct RequestFigures {
  size_t client = 0;
  uint64_t issued = 0, admitted = 0, done = 0;
  bool refused = false;
  uint64_t latency() const { return done - issued; }
};

/// What one device did over the schedule.
struct DeviceFigures {
  std::string name;
  uint64_t busyCycles = 0; ///< Link and NPU cycles of its stage runs.
  uint64_t npuCycles = 0, linkCycles = 0;
  uint64_t idleCycles = 0; ///< Makespan minus busy: waiting for a request's stage.
  /// Of its NPU cycles, those its DMAs waited for another device on a shared DRAM
  /// (ServeProblem::joint; 0 without it).
  uint64_t arbitrationStallCycles = 0;
  size_t runs = 0;        ///< Stage runs of requests (a batch of B counts B).
  size_t batches = 0;     ///< Batches it ran (each a run of one request without batching).
  double utilisation = 0; ///< busyCycles / makespan.
};

/// The schedule and its figures.
struct ServeResult {
  ServeConfig config;
  uint64_t clockHz = 0;
  size_t completed = 0, refused = 0;
  size_t maxAdmitted = 0;   ///< Most requests admitted at once (never above the depth).
  size_t waitedForSlot = 0; ///< Requests that waited for a queue slot (WhenFull::Block).
  uint64_t makespan = 0;    ///< Cycle the last request completes.
  /// Latency (issue to completion) of the completed requests, nearest-rank percentiles.
  uint64_t p50 = 0, p95 = 0, p99 = 0, maxLatency = 0;
  double meanLatency = 0;
  double throughputPerSecond = 0; ///< completed / (makespan / clockHz)
  size_t batches = 0;             ///< Batches run over every stage.
  double meanBatchSize = 0;       ///< Stage runs of requests / batches.
  std::vector<RequestFigures> requests;
  std::vector<StageSpan> spans; ///< In start order.
  std::vector<DeviceFigures> devices;
};

/// Schedules `c.requests` requests of `p` (ember::Error for a stage without devices, a
/// device index out of range, zero clients). Every request is completed or refused:
/// completed + refused == requests.
ServeResult schedule(const ServeProblem& p, const ServeConfig& c);

/// The nearest-rank percentile `pct` (0 < pct <= 100) of `values` (sorted in place): the
/// smallest value with at least pct% of the values at or below it; 0 for none.
uint64_t nearestRank(std::vector<uint64_t>& values, double pct);

/// The human summary: throughput, latency percentiles, one line per device.
std::string formatServeResult(const ServeResult& r);

/// The serving report as JSON text (docs/systems.md section 4): requests, completed,
/// refused, throughput_per_s, latency_cycles {p50, p95, p99, mean, max}, makespan, the
/// load, and per device busy / NPU / link / idle cycles, utilisation and stalls.
/// `extra` (a JSON object's text, or empty) is merged in (the program and its stages).
std::string serveResultJson(const ServeResult& r, const std::string& extra = "");

/// The schedule as a Chrome / Perfetto trace (JSON text): one track per device, each
/// stage run as its link-in, NPU and link-out slices ("r12 s0 npu"), times in
/// microseconds at the clock; a "requests" track holds each request's wait for a slot.
std::string serveTraceJson(const ServeResult& r);

} // namespace ember::session
