// The serving schedule (ember/session/Serve.h) against closed forms worked out by hand
// in each test: pipelines, replicas, host links, back-pressure, nothing lost.
#include "ember/session/Serve.h"
#include "ember/session/ServeHtml.h"

#include "ember/support/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

using namespace ember;
using namespace ember::session;

namespace {

/// `devices` devices with free links; stage k runs on `stageDevices[k]` and costs
/// `cycles[k]` NPU cycles, no bytes.
ServeProblem problem(size_t devices, std::vector<std::vector<size_t>> stageDevices,
                     std::vector<uint64_t> cycles) {
  ServeProblem p;
  for (size_t d = 0; d < devices; ++d)
    p.devices.push_back(ServeDevice{"npu" + std::to_string(d), isa::LinkDesc{1, 0}});
  p.stageDevices = std::move(stageDevices);
  p.cost = [cycles](size_t, size_t k) { return StageCost{cycles.at(k), 0, 0}; };
  return p;
}

ServeConfig load(size_t requests, size_t concurrency, size_t depth = 0,
                 WhenFull w = WhenFull::Block) {
  ServeConfig c;
  c.requests = requests;
  c.concurrency = concurrency;
  c.queueDepth = depth;
  c.whenFull = w;
  return c;
}

std::vector<uint64_t> latencies(const ServeResult& r) {
  std::vector<uint64_t> out;
  for (const RequestFigures& q : r.requests)
    out.push_back(q.refused ? 0 : q.latency());
  return out;
}

} // namespace

// Two stages of a = 100 and b = 60 cycles on two devices, 5 requests all at once: stage 0
// runs back to back (request r ends it at 100 (r + 1)), stage 1 follows at once (b <= a):
// done at 100 (r + 1) + 60, makespan N a + b = 560.
TEST(Serve, PipelineOfTwoStagesOverlapsRequests) {
  const ServeResult r = schedule(problem(2, {{0}, {1}}, {100, 60}), load(5, 5));
  EXPECT_EQ(r.completed, 5u);
  EXPECT_EQ(r.refused, 0u);
  EXPECT_EQ(r.makespan, 560u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{160, 260, 360, 460, 560}));
  EXPECT_EQ(r.p50, 360u); // nearest rank: the 3rd of 5
  EXPECT_EQ(r.p95, 560u);
  EXPECT_EQ(r.p99, 560u);
  EXPECT_EQ(r.devices[0].busyCycles, 500u);
  EXPECT_EQ(r.devices[1].busyCycles, 300u);
  EXPECT_EQ(r.devices[1].idleCycles, 260u);
  EXPECT_DOUBLE_EQ(r.devices[0].utilisation, 500.0 / 560.0);
  EXPECT_DOUBLE_EQ(r.throughputPerSecond, 5 * 1e9 / 560.0);
}

// One client: no overlap, N (a + b).
TEST(Serve, OneClientRunsRequestsOneAfterAnother) {
  const ServeResult r = schedule(problem(2, {{0}, {1}}, {100, 60}), load(5, 1));
  EXPECT_EQ(r.makespan, 800u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>(5, 160)));
}

// The slower second stage is the bottleneck: makespan a + N b = 60 + 4 * 100.
TEST(Serve, TheSlowestStageSetsTheRate) {
  const ServeResult r = schedule(problem(2, {{0}, {1}}, {60, 100}), load(4, 4));
  EXPECT_EQ(r.makespan, 460u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{160, 260, 360, 460}));
}

// A link of 4 bytes/cycle and 10 cycles latency: 40 bytes in take 10 + 10, 8 bytes out
// 10 + 2, so a stage of 100 NPU cycles holds its device 132 cycles; 3 requests, 396.
TEST(Serve, HostLinkTransfersHoldTheDevice) {
  ServeProblem p;
  p.devices.push_back(ServeDevice{"npu0", isa::LinkDesc{4, 10}});
  p.stageDevices = {{0}};
  p.cost = [](size_t, size_t) { return StageCost{100, 40, 8}; };
  const ServeResult r = schedule(p, load(3, 1));
  EXPECT_EQ(r.makespan, 396u);
  EXPECT_EQ(r.devices[0].npuCycles, 300u);
  EXPECT_EQ(r.devices[0].linkCycles, 96u);
  EXPECT_EQ(r.spans[1].start, 132u);
  EXPECT_EQ(r.spans[1].npuStart, 152u);
  EXPECT_EQ(r.spans[1].npuEnd, 252u);
  EXPECT_DOUBLE_EQ(r.devices[0].utilisation, 1.0);
}

// Replicas: one stage on four devices, 10 requests at once: rounds of four, ceil(10 / 4)
// rounds of 100 cycles; the least busy free device takes the next request (npu0, npu1
// run a third one).
TEST(Serve, ReplicasShareTheRequests) {
  const ServeResult r = schedule(problem(4, {{0, 1, 2, 3}}, {100}), load(10, 10));
  EXPECT_EQ(r.makespan, 300u);
  EXPECT_EQ(r.devices[0].runs, 3u);
  EXPECT_EQ(r.devices[1].runs, 3u);
  EXPECT_EQ(r.devices[2].runs, 2u);
  EXPECT_EQ(r.devices[3].runs, 2u);
  EXPECT_EQ(r.p50, 200u); // 100 x 4, 200 x 4, 300 x 2: the 5th
  EXPECT_EQ(r.p99, 300u);
}

// A queue of depth 1 with four clients that block: the device serves one request at a
// time; request k completes at 100 (k + 1). The first four are issued at 0; request
// k >= 4 is issued when request k - 4 completes, at 100 (k - 3): latency 400.
TEST(Serve, AFullQueueBlocksTheCaller) {
  const ServeResult r = schedule(problem(1, {{0}}, {100}), load(8, 4, 1, WhenFull::Block));
  EXPECT_EQ(r.completed, 8u);
  EXPECT_EQ(r.refused, 0u);
  EXPECT_EQ(r.maxAdmitted, 1u);
  EXPECT_EQ(r.waitedForSlot, 7u);
  EXPECT_EQ(r.makespan, 800u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{100, 200, 300, 400, 400, 400, 400, 400}));
}

// Depth 1, two clients, refusal: each completion lets the refused client in, and the
// completing client's next request is refused in turn: requests 1, 3, 5 refused.
TEST(Serve, AFullQueueRefusesAndLosesNothing) {
  const ServeResult r = schedule(problem(1, {{0}}, {100}), load(6, 2, 1, WhenFull::Refuse));
  EXPECT_EQ(r.completed, 3u);
  EXPECT_EQ(r.refused, 3u);
  EXPECT_EQ(r.makespan, 300u);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(r.requests[i].refused, i % 2 == 1) << "request " << i;
}

// Two stages on one device: the later stage goes first, so request 0 finishes before
// request 1 starts: makespan 2 (a + b), latencies 160 and 320.
TEST(Serve, StagesSharingADeviceFinishRequestsFirst) {
  const ServeResult r = schedule(problem(1, {{0}, {0}}, {100, 60}), load(2, 2));
  EXPECT_EQ(r.makespan, 320u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{160, 320}));
}

// 64 clients, 256 requests over a 4-stage pipeline of 100, 90, 90, 90 cycles: every
// request completes, at most 64 are admitted, stage 0 never waits for work (64
// outstanding), and the shorter stages follow at once: request r completes at
// 100 (r + 1) + 3 * 90, the last at 256 * 100 + 270.
TEST(Serve, SixtyFourOutstandingLoseNothing) {
  const ServeResult r =
      schedule(problem(4, {{0}, {1}, {2}, {3}}, {100, 90, 90, 90}), load(256, 64));
  EXPECT_EQ(r.completed, 256u);
  EXPECT_EQ(r.refused, 0u);
  EXPECT_EQ(r.maxAdmitted, 64u);
  EXPECT_EQ(r.makespan, 256u * 100 + 3 * 90);
}

TEST(Serve, RefusesBadProblems) {
  EXPECT_THROW(schedule(problem(1, {{0}}, {1}), load(1, 0)), UsageError);
  EXPECT_THROW(schedule(problem(1, {{}}, {1}), load(1, 1)), Error);
  EXPECT_THROW(schedule(problem(1, {}, {}), load(1, 1)), Error);
  EXPECT_THROW(parseWhenFull("drop"), UsageError);
}

TEST(Serve, NearestRankPercentiles) {
  std::vector<uint64_t> v{5, 1, 3, 2, 4};
  EXPECT_EQ(nearestRank(v, 50), 3u);
  EXPECT_EQ(nearestRank(v, 1), 1u);
  EXPECT_EQ(nearestRank(v, 100), 5u);
  std::vector<uint64_t> none;
  EXPECT_EQ(nearestRank(none, 50), 0u);
}

TEST(Serve, ReportJsonCarriesTheFigures) {
  const ServeResult r = schedule(problem(2, {{0}, {1}}, {100, 60}), load(5, 5));
  const nlohmann::json j = nlohmann::json::parse(serveResultJson(r, R"({"program": "x"})"));
  EXPECT_EQ(j.at("program"), "x");
  EXPECT_EQ(j.at("requests"), 5);
  EXPECT_EQ(j.at("completed"), 5);
  EXPECT_EQ(j.at("refused"), 0);
  EXPECT_EQ(j.at("latency_cycles").at("p50"), 360);
  EXPECT_EQ(j.at("latency_cycles").at("p99"), 560);
  EXPECT_DOUBLE_EQ(j.at("throughput_per_s").get<double>(), 5 * 1e9 / 560.0);
  ASSERT_EQ(j.at("devices").size(), 2u);
  EXPECT_EQ(j.at("devices")[1].at("busy_cycles"), 300);
  EXPECT_EQ(j.at("devices")[1].at("stalls").at("idle_cycles"), 260);
}

// The trace: per stage run its link-in, NPU and link-out slices on its device's track
// (the link of HostLinkTransfersHoldTheDevice: 20, 100 and 12 cycles); at 1 GHz request 1's
// NPU slice starts at 152 cycles = 0.152 us and lasts 0.1 us. A blocked request's wait
// is a slice on the "requests" track.
TEST(Serve, TraceHasASlicePerLinkAndNpuRun) {
  ServeProblem p;
  p.devices.push_back(ServeDevice{"npu0", isa::LinkDesc{4, 10}});
  p.stageDevices = {{0}};
  p.cost = [](size_t, size_t) { return StageCost{100, 40, 8}; };
  const nlohmann::json t = nlohmann::json::parse(serveTraceJson(schedule(p, load(3, 1))));
  const nlohmann::json& ev = t.at("traceEvents");
  ASSERT_EQ(ev.size(), 2u + 9u); // two track names, three slices per request
  EXPECT_EQ(ev[0].at("args").at("name"), "npu0");
  EXPECT_EQ(ev[1].at("args").at("name"), "requests");
  const nlohmann::json& npu1 = ev[2 + 3 + 1];
  EXPECT_EQ(npu1.at("name"), "r1 s0 npu");
  EXPECT_DOUBLE_EQ(npu1.at("ts").get<double>(), 0.152);
  EXPECT_DOUBLE_EQ(npu1.at("dur").get<double>(), 0.1);
  const nlohmann::json blocked = nlohmann::json::parse(serveTraceJson(schedule(p, load(2, 2, 1))));
  EXPECT_EQ(blocked.at("traceEvents").back().at("name"), "r1 waits for a slot");
  EXPECT_DOUBLE_EQ(blocked.at("traceEvents").back().at("dur").get<double>(), 0.132);
}

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + 1))
    ++n;
  return n;
}

/// The text of device `name`'s row on the page's timeline.
std::string deviceRow(const std::string& page, const std::string& name) {
  const size_t from = page.find("<g class='device' data-device='" + name + "'>");
  if (from == std::string::npos)
    return "";
  return page.substr(from, page.find("</g>", from) - from);
}

} // namespace

// The page's timeline for the link problem of HostLinkTransfersHoldTheDevice with three
// requests at once: npu0's row holds three link-in, NPU and link-out bars; request 1
// waits for request 0's whole run (132 cycles) and then runs its NPU from 152 to 252.
TEST(Serve, HtmlTimelineHasTheDevicesRuns) {
  ServeProblem p;
  p.devices.push_back(ServeDevice{"npu0", isa::LinkDesc{4, 10}});
  p.stageDevices = {{0}};
  p.cost = [](size_t, size_t) { return StageCost{100, 40, 8}; };
  const std::string page = serveHtml(schedule(p, load(3, 3)), "t <x>", "stage 0 on npu0");
  const std::string row = deviceRow(page, "npu0");
  EXPECT_EQ(count(row, "<rect class='in'"), 3u);
  EXPECT_EQ(count(row, "<rect class='npu'"), 3u);
  EXPECT_EQ(count(row, "<rect class='out'"), 3u);
  EXPECT_NE(row.find("r1 s0 npu: 100 cycles (152 .. 252); waited 132 cycles for npu0"),
            std::string::npos);
  EXPECT_NE(page.find("<h1>t &lt;x&gt;</h1>"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  // r1 waits 0..132 and r2 0..264 for the device: two at once at most, two waits.
  EXPECT_NE(page.find("waiting for a device: up to 2 at once, 2 waits"), std::string::npos);
  EXPECT_EQ(page.find("waiting for a slot: up to"), std::string::npos);
}

// A two-stage pipeline (100 and 60 cycles, five requests at once): npu0 runs stage 0 five
// times, npu1 stage 1 five times; requests 1..4 wait 100 r for npu0 (at most four at once),
// none waits for npu1 (r is ready at 100 (r + 1), npu1 is free from 100 r + 60). A queue
// of depth 1 makes request 1 wait for a slot.
TEST(Serve, HtmlTimelineHasARowPerDeviceAndTheQueue) {
  const std::string page =
      serveHtml(schedule(problem(2, {{0}, {1}}, {100, 60}), load(5, 5)), "pipe", "");
  EXPECT_EQ(count(deviceRow(page, "npu0"), "<rect class='npu'"), 5u);
  EXPECT_EQ(count(deviceRow(page, "npu1"), "<rect class='npu'"), 5u);
  EXPECT_NE(deviceRow(page, "npu1").find("r4 s1 npu: 60 cycles (500 .. 560); waited 0 cycles"),
            std::string::npos);
  EXPECT_NE(page.find("waiting for a device: up to 4 at once, 4 waits"), std::string::npos);
  const std::string queued =
      serveHtml(schedule(problem(1, {{0}}, {100}), load(2, 2, 1)), "queue", "");
  EXPECT_NE(queued.find("waiting for a slot: up to 1 at once, 1 waits"), std::string::npos);
  EXPECT_THROW(serveHtml(ServeResult{}, "none", ""), Error);
}

namespace {

ServeConfig batched(ServeConfig c, size_t batch, uint64_t deadline) {
  c.batch = batch;
  c.batchDeadline = deadline;
  return c;
}

} // namespace

// Batches of B = 4, no deadline, 8 requests at once on one device of 100 cycles a
// request: two batches of four back to back, 400 cycles each: four requests done at 400,
// four at 800.
TEST(Serve, BatchesRunTheirRequestsBackToBack) {
  const ServeResult r = schedule(problem(1, {{0}}, {100}), batched(load(8, 8), 4, 0));
  EXPECT_EQ(r.makespan, 800u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{400, 400, 400, 400, 800, 800, 800, 800}));
  EXPECT_EQ(r.batches, 2u);
  EXPECT_DOUBLE_EQ(r.meanBatchSize, 4.0);
  EXPECT_EQ(r.devices[0].runs, 8u);
  EXPECT_EQ(r.devices[0].batches, 2u);
  EXPECT_EQ(r.devices[0].npuCycles, 800u);
  const nlohmann::json j = nlohmann::json::parse(serveResultJson(r));
  EXPECT_EQ(j.at("batch"), 4);
  EXPECT_EQ(j.at("batches"), 2);
  EXPECT_DOUBLE_EQ(j.at("mean_batch_size").get<double>(), 4.0);
  EXPECT_EQ(j.at("devices")[0].at("batches"), 2);
}

// A batch of three over a link of 4 bytes/cycle and 10 cycles latency (40 bytes in, 8
// out, 100 NPU cycles a request): one transfer in, 10 + 120 / 4 = 40 cycles, 300 NPU
// cycles, one transfer out, 10 + 24 / 4 = 16: 356 cycles, against 3 x 132 = 396 one by
// one (HostLinkTransfersHoldTheDevice). The trace has one slice of each kind for it.
TEST(Serve, ABatchSharesOneLinkTransferEachWay) {
  ServeProblem p;
  p.devices.push_back(ServeDevice{"npu0", isa::LinkDesc{4, 10}});
  p.stageDevices = {{0}};
  p.cost = [](size_t, size_t) { return StageCost{100, 40, 8}; };
  const ServeResult r = schedule(p, batched(load(3, 3), 3, 0));
  EXPECT_EQ(r.makespan, 356u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{356, 356, 356}));
  EXPECT_EQ(r.devices[0].linkCycles, 56u);
  ASSERT_EQ(r.spans.size(), 3u);
  EXPECT_EQ(r.spans[2].npuStart, 40u);
  EXPECT_EQ(r.spans[2].npuEnd, 340u);
  EXPECT_EQ(r.spans[2].batchSize, 3u);
  const nlohmann::json ev = nlohmann::json::parse(serveTraceJson(r)).at("traceEvents");
  ASSERT_EQ(ev.size(), 2u + 3u);
  EXPECT_EQ(ev[3].at("name"), "r0+r1+r2 s0 npu");
  EXPECT_EQ(ev[3].at("args").at("batch"), nlohmann::json::array({0, 1, 2}));
  const std::string page = serveHtml(r, "batch", "");
  EXPECT_EQ(count(deviceRow(page, "npu0"), "<rect class='npu'"), 1u);
  EXPECT_NE(page.find("r0+r1+r2 s0 npu: 300 cycles (40 .. 340); the longest waited 0 cycles"),
            std::string::npos);
  EXPECT_NE(page.find("deadline 0 cycles: 1 batches, mean size 3.00"), std::string::npos);
  EXPECT_NE(page.find("<td>npu0</td><td>3</td><td>1</td><td>356</td>"), std::string::npos);
}

// One client, B = 4, deadline 50: each request is alone; it waits the deadline, then
// runs its 100 cycles: latency 150, makespan 3 x 150.
TEST(Serve, ALoneRequestWaitsForTheDeadline) {
  const ServeResult r = schedule(problem(1, {{0}}, {100}), batched(load(3, 1), 4, 50));
  EXPECT_EQ(r.makespan, 450u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{150, 150, 150}));
  EXPECT_EQ(r.spans[0].start, 50u);
  EXPECT_EQ(r.batches, 3u);
  EXPECT_DOUBLE_EQ(r.meanBatchSize, 1.0);
}

// B = 2, deadline 150, three requests at once: r0 and r1 run as a batch from 0 to 200;
// r2 has been ready since 0, so its deadline (150) has passed when the device frees at
// 200 and it runs alone, 200 to 300 (not at 350: the deadline counts from when the
// request is ready, not from when the device is free).
TEST(Serve, TheDeadlineCountsFromWhenTheRequestIsReady) {
  const ServeResult r = schedule(problem(1, {{0}}, {100}), batched(load(3, 3), 2, 150));
  EXPECT_EQ(r.makespan, 300u);
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{200, 200, 300}));
}

// Stage 0 on two replicas (r2 costs 30 cycles, the others 100), stage 1 (10 cycles) on
// npu2; B = 2, deadline 100, three requests at once. At 0 npu0 takes r0 + r1 (200
// cycles, to 200); r2 waits for its deadline, 100, and runs alone on npu1 to 130. At
// stage 1, r2 is ready at 130 (deadline 230); r0 and r1 arrive at 200, before it: r2 + r0
// run as a batch, 200 to 220. r1, ready at 200, waits to its deadline 300: 300 to 310.
// Latencies 220, 310, 220; four batches for six stage runs: mean 1.5.
TEST(Serve, ARequestArrivingBeforeTheDeadlineJoinsTheBatch) {
  ServeProblem p = problem(3, {{0, 1}, {2}}, {0, 10});
  p.cost = [](size_t r, size_t k) { return StageCost{k == 1 ? 10u : r == 2 ? 30u : 100u, 0, 0}; };
  const ServeResult r = schedule(p, batched(load(3, 3), 2, 100));
  EXPECT_EQ(latencies(r), (std::vector<uint64_t>{220, 310, 220}));
  EXPECT_EQ(r.makespan, 310u);
  EXPECT_EQ(r.batches, 4u);
  EXPECT_DOUBLE_EQ(r.meanBatchSize, 1.5);
  EXPECT_EQ(r.devices[2].batches, 2u);
  EXPECT_EQ(r.devices[2].runs, 3u);
  EXPECT_EQ(r.devices[1].busyCycles, 30u);
}

// Two replicas whose NPU cycles come from a joint simulation (a shared DRAM): device 0
// takes 100 cycles a run (10 of them waiting for the other device's transfers), device 1
// 150 (40); the cost alone (80) is not used. Six requests, two clients: device 0 runs
// r0 [0, 100), r2 [100, 200), r4 [200, 300); device 1 r1 [0, 150), r3 [150, 300); at 300
// both are free and equally busy, so r5 goes to device 0 (the lower index): [300, 400).
TEST(Serve, JointCyclesReplaceTheStageCostPerDevice) {
  ServeProblem p = problem(2, {{0, 1}}, {80});
  p.joint.npu = {{100}, {150}};
  p.joint.arbitration = {{10}, {40}};
  const ServeResult r = schedule(p, load(6, 2));
  EXPECT_EQ(r.makespan, 400u);
  EXPECT_EQ(r.devices[0].runs, 4u);
  EXPECT_EQ(r.devices[0].npuCycles, 400u);
  EXPECT_EQ(r.devices[0].arbitrationStallCycles, 40u);
  EXPECT_EQ(r.devices[1].runs, 2u);
  EXPECT_EQ(r.devices[1].npuCycles, 300u);
  EXPECT_EQ(r.devices[1].arbitrationStallCycles, 80u);
  const nlohmann::json j = nlohmann::json::parse(serveResultJson(r));
  EXPECT_EQ(j["devices"][1]["stalls"]["dram_arbitration_cycles"], 80u);
  EXPECT_NE(formatServeResult(r).find("DRAM arbitration stall"), std::string::npos);
  // Without joint cycles: the cost's, and no arbitration column.
  const ServeResult alone = schedule(problem(2, {{0, 1}}, {80}), load(6, 2));
  EXPECT_EQ(alone.makespan, 240u); // three rounds of two
  EXPECT_EQ(alone.devices[0].arbitrationStallCycles, 0u);
  EXPECT_EQ(formatServeResult(alone).find("DRAM arbitration stall"), std::string::npos);
}
