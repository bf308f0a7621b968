// ember-run --requests: a program served over one NPU or a system, in simulated time.
#include "ember/session/ServeTool.h"

#include "ember/driver/Driver.h"
#include "ember/driver/Execute.h"
#include "ember/driver/Package.h"
#include "ember/driver/Pipeline.h"
#include "ember/isa/binary.h"
#include "ember/isa/system.h"
#include "ember/runtime/Run.h"
#include "ember/runtime/Runtime.h"
#include "ember/session/Devices.h"
#include "ember/session/RunTool.h"
#include "ember/session/RunUtil.h"
#include "ember/session/Serve.h"
#include "ember/session/ServeHtml.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include "ServeJoint.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <tuple>

namespace ember::session {

namespace {

using Outputs = std::vector<std::pair<std::string, Tensor>>;
using Decls = std::vector<std::pair<std::string, Type>>;

/// One distinct input's run: every stage's cost and the model's outputs.
struct Sample {
  std::vector<StageCost> stages;
  Outputs outputs;
};

uint64_t dtypeBytes(isa::DType t) {
  return t == isa::DType::Int32 || t == isa::DType::Float32 ? 4 : 1;
}

/// The bytes a binary's inputs or outputs take over the host link: their logical
/// elements in the I/O entry's type (int8 codes for int8 entries), as the partitioner counts.
uint64_t ioBytes(const isa::Binary& bin, isa::IoDir dir) {
  uint64_t bytes = 0;
  for (const isa::IoEntry& e : bin.io)
    if (e.dir == dir) {
      uint64_t n = 1;
      for (int64_t d : e.shape)
        n *= uint64_t(d);
      bytes += n * dtypeBytes(e.dtype);
    }
  return bytes;
}

runtime::RunRequest quietRequest(const std::string& label) {
  runtime::RunRequest req = npuEngine("sim");
  req.tool = "ember-run";
  req.device = "sim";
  req.binary = label;
  req.table = false;
  req.progress = false;
  return req;
}

/// The program served: an NPU binary (one stage), a package (one stage per NPU segment;
/// its host segments, the quantization of float inputs and dequantization of float
/// outputs, run on the host between them and are not timed), or an ONNX model compiled
/// for the description as ember-run's sim device compiles it (whole: one binary; else its
/// plan's segments, as a package's).
class Program {
public:
  Program(const RunOptions& o, const isa::IsaDescription& desc)
      : path_(o.model), desc_(desc), budget_(o.cycleBudget) {
    if (isNpuBinaryFile(path_)) {
      useBinary(isa::readElf(path_, desc_));
    } else if (partition::isPackageFile(path_)) {
      // A pipeline over unequal devices holds binaries of the system's other descriptions.
      std::vector<isa::IsaDescription> others;
      if (!o.serve.system.empty()) {
        const isa::SystemDescription sys = isa::SystemDescription::loadFile(o.serve.system);
        for (const isa::SystemDevice& d : sys.devices())
          others.push_back(d.isa);
      }
      owned_ = std::make_unique<partition::Plan>(partition::loadPackage(path_, desc_, others));
      usePlan(*owned_);
    } else {
      driver::QuantizeRequest q;
      q.calibrate = o.calibrate;
      q.calibration = o.calibration;
      model_ = std::make_unique<driver::CompiledModel>(
          driver::compileModel(path_, desc_, q, o.partition, o.modelInputs));
      if (model_->plan.whole)
        useBinary(model_->plan.segments.front().npu->binary);
      else
        usePlan(model_->plan);
    }
  }
  size_t stages() const { return stages_; }
  /// Each stage's DRAM: its job window (runtime::jobWindowBytes: constants, I/O, scratch).
  std::vector<uint64_t> stageDramBytes() const {
    if (bin_)
      return {runtime::jobWindowBytes(*bin_)};
    std::vector<uint64_t> out;
    for (const partition::Segment& s : plan_->segments)
      if (s.npu)
        out.push_back(runtime::jobWindowBytes(s.npu->binary));
    return out;
  }
  const Decls& inputs() const { return inputs_; }
  /// Each stage's NPU description: a package segment's own (unequal devices), else the
  /// program's.
  std::vector<const isa::IsaDescription*> stageDescriptions() const {
    if (bin_)
      return {&desc_};
    std::vector<const isa::IsaDescription*> out;
    for (const partition::Segment& s : plan_->segments)
      if (s.npu)
        out.push_back(s.isa ? s.isa.get() : &desc_);
    return out;
  }
  /// Each stage's NPU binary.
  std::vector<const isa::Binary*> stageBinaries() const {
    if (bin_)
      return {&*bin_};
    std::vector<const isa::Binary*> out;
    for (const partition::Segment& s : plan_->segments)
      if (s.npu)
        out.push_back(&s.npu->binary);
    return out;
  }
  Sample run(const TensorMap& in);
  /// Each stage's bytes in and out over its link when a value between neighbouring stages
  /// whose devices share a DRAM (`sharesWithNext[k]`: stage k's with stage k + 1's) stays
  /// in that DRAM, as the partitioner counts (docs/systems.md section 3).
  std::vector<std::pair<uint64_t, uint64_t>>
  linkBytes(const std::vector<bool>& sharesWithNext) const;

private:
  void useBinary(isa::Binary bin) {
    bin_ = std::move(bin);
    for (const isa::IoEntry& e : bin_->io)
      if (e.dir == isa::IoDir::Input)
        inputs_.emplace_back(e.name,
                             Type(ElemKind::Float32, Shape(e.shape.begin(), e.shape.end())));
    stages_ = 1;
  }
  void usePlan(const partition::Plan& plan) {
    plan_ = &plan;
    DeviceOptions dopts;
    dopts.cycleBudget = budget_;
    exec_ = std::make_unique<partition::PlanExecutor>(
        plan, npuSegmentRunner("sim", npuEngine("sim"), desc_, dopts, path_, false, reports_));
    inputs_ = plan.inputs;
    stages_ = plan.npuSegments();
    if (stages_ == 0)
      throw Error(path_, "runs no segment on the NPU: nothing to serve on NPUs");
  }

  std::string path_;
  isa::IsaDescription desc_;
  uint64_t budget_;
  std::optional<isa::Binary> bin_;
  std::unique_ptr<driver::CompiledModel> model_; ///< An ONNX model's compile.
  std::unique_ptr<partition::Plan> owned_;       ///< A package's plan.
  const partition::Plan* plan_ = nullptr;
  std::unique_ptr<partition::PlanExecutor> exec_;
  std::vector<platform::Report> reports_;
  Decls inputs_;
  size_t stages_ = 0;
};

Sample Program::run(const TensorMap& in) {
  Sample s;
  if (bin_) {
    runtime::RunRequest req = quietRequest(path_);
    req.input_tensors = in;
    req.options.cycle_budget = budget_;
    runtime::RunResult r = runtime::runLoadedBinary(*bin_, desc_, req, std::cerr);
    if (r.status != 0)
      throw NpuFault(path_, "the NPU program faulted: " +
                                (r.report.fault ? r.report.fault->message()
                                                : "status " + std::to_string(r.status)));
    s.stages.push_back(StageCost{r.report.cycles, ioBytes(*bin_, isa::IoDir::Input),
                                 ioBytes(*bin_, isa::IoDir::Output)});
    s.outputs = std::move(r.outputs);
    return s;
  }
  reports_.clear();
  std::vector<partition::SegmentRun> runs;
  TensorMap out = exec_->run(in, &runs);
  for (const partition::SegmentRun& r : runs)
    if (r.backend == "npu")
      s.stages.push_back(StageCost{r.npuCycles, r.inBytes, r.outBytes});
  for (const auto& [name, index] : plan_->outputs)
    s.outputs.emplace_back(name, out.at(name));
  return s;
}

std::vector<std::pair<uint64_t, uint64_t>>
Program::linkBytes(const std::vector<bool>& sharesWithNext) const {
  std::vector<int> stageOf(plan_->segments.size(), -1);
  int k = 0;
  for (size_t s = 0; s < plan_->segments.size(); ++s)
    if (plan_->segments[s].npu)
      stageOf[s] = k++;
  auto stays = [&](int from, int to) {
    return from >= 0 && to == from + 1 && sharesWithNext.at(size_t(from));
  };
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t s = 0; s < plan_->segments.size(); ++s) {
    if (stageOf[s] < 0)
      continue;
    const partition::Segment& seg = plan_->segments[s];
    uint64_t in = 0, o = 0;
    for (size_t i : seg.inputs) {
      const int producer = plan_->values[i].producer;
      if (!(producer >= 0 && stays(stageOf[size_t(producer)], stageOf[s])))
        in += plan_->values[i].bytes();
    }
    for (size_t i : seg.outputs) {
      bool host = false;
      for (const auto& [name, v] : plan_->outputs)
        host = host || v == i;
      for (size_t r = 0; r < plan_->segments.size(); ++r)
        for (size_t j : plan_->segments[r].inputs)
          host = host || (j == i && !stays(stageOf[s], stageOf[r]));
      o += host ? plan_->values[i].bytes() : 0;
    }
    out.emplace_back(in, o);
  }
  return out;
}

/// The inputs of distinct input `k`: the --input files (the same for every k), else
/// deterministic random values from --random-input SEED + k.
TensorMap inputsFor(const RunOptions& o, const Decls& decls, size_t k) {
  TensorMap in;
  for (size_t i = 0; i < decls.size(); ++i) {
    const auto& [name, type] = decls[i];
    bool given = false;
    for (const auto& [n, file] : o.inputs)
      if (n == name) {
        Tensor t = readNpy(file);
        if (t.dims() != type.dims)
          throw Error("--input " + name + "=" + file, "the file holds " + t.type().toString() +
                                                          ", the program's input is " +
                                                          type.toString());
        in.emplace(name, std::move(t));
        given = true;
      }
    if (!given && !o.randomSeed)
      throw Error(o.model, "no value for input '" + name + "' (" + type.toString() +
                               "): give --input NAME=FILE.npy or --random-input SEED");
    if (!given)
      in.emplace(name, randomTensor(type, *o.randomSeed + k, i));
  }
  return in;
}

/// Whether output `got` is bit for bit the reference's `ref`: the same tensor, or the
/// dequantized value of the reference's int8 codes as a DequantizeLinear computes it.
std::string compareOutput(const Tensor& got, const Tensor& ref, const isa::IoEntry* io) {
  Tensor want = ref;
  if (got.kind() == ElemKind::Float32 && ref.kind() != ElemKind::Float32 && io)
    want = partition::dequantizeCodes(ref, float(io->scale), io->zero_point, got.dims());
  if (want.kind() != got.kind() || want.size() != got.size())
    return "the reference holds " + want.type().toString() + ", the program " +
           got.type().toString();
  const size_t n = size_t(got.sizeInBytes()) / size_t(got.size() ? got.size() : 1);
  int64_t diff = 0, first = -1;
  for (int64_t i = 0; i < got.size(); ++i)
    if (std::memcmp(got.raw() + size_t(i) * n, want.raw() + size_t(i) * n, n) != 0) {
      ++diff;
      first = first < 0 ? i : first;
    }
  if (diff == 0)
    return "";
  return std::to_string(diff) + " of " + std::to_string(got.size()) +
         " elements differ (first at flat index " + std::to_string(first) + ": " +
         std::to_string(got.getAsDouble(first)) + " vs " + std::to_string(want.getAsDouble(first)) +
         ")";
}

/// --reference BIN.elf: distinct input `k`'s outputs against one NPU's whole binary.
void checkReference(const RunOptions& o, const isa::IsaDescription& desc, const TensorMap& in,
                    const Sample& s, size_t k) {
  const isa::Binary bin = isa::readElf(o.serve.reference, desc);
  runtime::RunRequest req = quietRequest(o.serve.reference);
  req.input_tensors = in;
  runtime::RunResult r = runtime::runLoadedBinary(bin, desc, req, std::cerr);
  if (r.status != 0)
    throw NpuFault("--reference " + o.serve.reference, "the NPU program faulted");
  for (const auto& [name, got] : s.outputs) {
    const Tensor* ref = nullptr;
    for (const auto& [n, t] : r.outputs)
      ref = n == name ? &t : ref;
    const isa::IoEntry* io = nullptr;
    for (const isa::IoEntry& e : r.io)
      io = e.name == name && e.dir == isa::IoDir::Output ? &e : io;
    if (!ref)
      throw Error("--reference " + o.serve.reference, "the binary has no output '" + name + "'");
    if (std::string why = compareOutput(got, *ref, io); !why.empty())
      throw Error("--reference " + o.serve.reference,
                  "input " + std::to_string(k) + ", output '" + name + "': not bit-exact: " + why);
  }
}

/// Refuses stages that do not fit their devices' DRAMs: a device holds every stage it
/// may run (a replica: the whole program), the devices on one DRAM hold theirs together.
void checkDrams(const isa::SystemDescription& sys, const ServeProblem& p,
                const std::vector<uint64_t>& stageBytes) {
  std::vector<uint64_t> perDram(sys.drams().size(), 0);
  for (size_t d = 0; d < p.devices.size(); ++d) {
    uint64_t need = 0;
    size_t last = 0;
    for (size_t k = 0; k < p.stageDevices.size(); ++k)
      for (size_t dev : p.stageDevices[k])
        if (dev == d) {
          need += stageBytes.at(k);
          last = k;
        }
    const isa::SystemDram& dram = sys.dramOf(d);
    if (need > dram.size_bytes)
      throw Error(sys.file(), "stage " + std::to_string(last) + " needs " +
                                  partition::formatBytes(need) + " of DRAM, device " +
                                  p.devices[d].name + " has " +
                                  partition::formatBytes(dram.size_bytes));
    perDram[sys.devices()[d].dram] += need;
  }
  for (size_t i = 0; i < perDram.size(); ++i)
    if (perDram[i] > sys.drams()[i].size_bytes)
      throw Error(sys.file(), "the stages on DRAM '" + sys.drams()[i].id + "' need " +
                                  partition::formatBytes(perDram[i]) + " together, it has " +
                                  partition::formatBytes(sys.drams()[i].size_bytes));
}

/// The devices and each stage's devices: a system's (K stages on K devices, or one
/// stage replicated over all), else one NPU of the program's description. Device k must
/// run stage k's description (`stageIsa`; every device the replicated stage's).
/// Returns, for a pipeline, whether each stage's device shares its DRAM with the next
/// stage's (empty otherwise).
std::vector<bool> placeStages(const RunOptions& o, const isa::IsaDescription& desc,
                              const std::vector<const isa::IsaDescription*>& stageIsa,
                              const std::vector<uint64_t>& stageBytes, ServeProblem& p) {
  const size_t stages = stageBytes.size();
  if (o.serve.system.empty()) {
    const auto& l = desc.hw().host_link;
    p.devices.push_back(ServeDevice{"npu0", isa::LinkDesc{l.bytes_per_cycle, l.latency_cycles}});
    p.stageDevices.assign(stages, std::vector<size_t>{0});
    p.clockHz = desc.hw().clock_hz;
    return {};
  }
  const isa::SystemDescription sys = isa::SystemDescription::loadFile(o.serve.system);
  const size_t n = sys.devices().size();
  for (size_t d = 0; d < n; ++d) {
    const isa::SystemDevice& dev = sys.devices()[d];
    const size_t k = stages == n ? d : 0;
    const isa::IsaDescription& want = *stageIsa.at(k);
    if ((stages == n || stages == 1) && dev.isa.hash() != want.hash())
      throw Error(o.serve.system + ": device " + dev.name,
                  "runs '" + dev.isa.name() + "', stage " + std::to_string(k) + " of " + o.model +
                      " is built for '" + want.name() +
                      "' (stage k runs on device k; a replicated stage on every device)");
    p.devices.push_back(ServeDevice{dev.name, dev.host_link});
  }
  p.clockHz = sys.clockHz();
  if (stages == n) {
    for (size_t k = 0; k < n; ++k)
      p.stageDevices.push_back({k});
  } else if (stages == 1) {
    p.stageDevices.push_back({});
    for (size_t d = 0; d < n; ++d)
      p.stageDevices[0].push_back(d);
  } else {
    throw Error(o.model, "has " + std::to_string(stages) + " NPU stages, system '" + sys.name() +
                             "' has " + std::to_string(n) +
                             " devices: a pipeline takes one stage per device (emberc --system " +
                             o.serve.system + " -o OUT.pkg), a binary is replicated over all");
  }
  checkDrams(sys, p, stageBytes);
  std::vector<bool> shares;
  for (size_t k = 0; stages == n && n > 1 && k < n; ++k)
    shares.push_back(k + 1 < n && sys.devices()[k].dram == sys.devices()[k + 1].dram);
  return shares;
}

/// The stages' table and the report's "stages" entry.
std::string describeStages(const ServeProblem& p, const std::vector<Sample>& samples,
                           nlohmann::json& j) {
  std::string out;
  j = nlohmann::json::array();
  for (size_t k = 0; k < p.stageDevices.size(); ++k) {
    const StageCost c = p.cost(0, k);
    std::string names;
    nlohmann::json devs = nlohmann::json::array(), cycles = nlohmann::json::array();
    for (size_t d : p.stageDevices[k]) {
      names += (names.empty() ? "" : " ") + p.devices[d].name;
      devs.push_back(p.devices[d].name);
    }
    for (const Sample& s : samples)
      cycles.push_back(s.stages[k].npuCycles);
    const isa::LinkDesc& l = p.devices[p.stageDevices[k].front()].link;
    const uint64_t link = l.transferCycles(c.inBytes) + l.transferCycles(c.outBytes);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "stage %zu on %s: %llu NPU cycles (input 0), %llu bytes in, %llu bytes out, "
                  "%llu link cycles\n",
                  k, names.c_str(), static_cast<unsigned long long>(c.npuCycles),
                  static_cast<unsigned long long>(c.inBytes),
                  static_cast<unsigned long long>(c.outBytes),
                  static_cast<unsigned long long>(link));
    out += buf;
    j.push_back({{"index", k},
                 {"devices", devs},
                 {"npu_cycles", cycles},
                 {"in_bytes", c.inBytes},
                 {"out_bytes", c.outBytes},
                 {"link_cycles", link}});
  }
  return out;
}

void writeOutputs(const std::string& dir, size_t k, const Outputs& outs) {
  const std::filesystem::path d = std::filesystem::path(dir) / std::to_string(k);
  std::filesystem::create_directories(d);
  for (const auto& [name, t] : outs)
    writeNpy((d / (npyFileStem(name) + ".npy")).string(), t);
}

} // namespace

void checkServeOptions(const RunOptions& o) {
  const ServeOptions& so = o.serve;
  if (so.requests == 0) {
    if (!so.system.empty() || !so.reference.empty() || so.queueDepth || so.distinctInputs ||
        so.concurrency != 1 || so.whenFull != "block" || so.batch != 1 || so.batchDeadline)
      throw UsageError("--concurrency, --queue-depth, --when-full, --system, --distinct-inputs, "
                       "--batch, --batch-deadline and --reference go with --requests N (serving)");
    return;
  }
  using L = ServeLimits;
  const struct {
    const char* option;
    uint64_t value, least, most;
  } ranges[] = {{"--requests", so.requests, 1, L::maxRequests},
                {"--concurrency", so.concurrency, 1, L::maxConcurrency},
                {"--queue-depth", so.queueDepth, 0, L::maxQueueDepth}, // 0: the default
                {"--batch", so.batch, 1, L::maxBatch},
                {"--batch-deadline", so.batchDeadline, 0, L::maxBatchDeadline},
                {"--distinct-inputs", so.distinctInputs, 0, L::maxDistinctInputs}};
  for (const auto& r : ranges)
    if (r.value < r.least || r.value > r.most)
      throw UsageError(r.option, std::to_string(r.value) + " is outside " +
                                     std::to_string(r.least) + ".." + std::to_string(r.most));
  if (so.batchDeadline && so.batch < 2)
    throw UsageError("--batch-deadline", "is how long a device waits to fill a batch: it goes "
                                         "with --batch B, B >= 2");
  if (!o.compare.empty() || (o.deviceGiven && o.device != "sim"))
    throw UsageError("--requests", "serves on the SystemC model (sim): not with --compare or "
                                   "--device " +
                                       o.device);
}

ServeOutcome serve(const RunOptions& o) {
  const ServeOptions& so = o.serve;
  checkRunPaths({{o.reportJson, "--report"},
                 {o.traceJson, "--trace"},
                 {o.html, "--html"},
                 {o.outDir, "--out", true}},
                {o.model, so.reference, so.system});
  const isa::IsaDescription desc =
      so.system.empty() ? isa::IsaDescription::loadDefault(o.isa)
                        : isa::SystemDescription::loadFile(so.system).devices().front().isa;
  Program prog(o, desc);
  ServeProblem p;
  const std::vector<bool> shares =
      placeStages(o, desc, prog.stageDescriptions(), prog.stageDramBytes(), p);
  std::vector<std::pair<uint64_t, uint64_t>> link;
  if (std::find(shares.begin(), shares.end(), true) != shares.end())
    link = prog.linkBytes(shares);
  size_t distinct = so.distinctInputs ? so.distinctInputs : std::min<size_t>(so.requests, 4);
  if (!o.randomSeed)
    distinct = 1; // every input comes from a file: one input
  std::vector<Sample> samples;
  for (size_t k = 0; k < distinct; ++k) {
    const TensorMap in = inputsFor(o, prog.inputs(), k);
    samples.push_back(prog.run(in));
    if (!so.reference.empty())
      checkReference(o, desc, in, samples.back(), k);
    if (!o.outDir.empty())
      writeOutputs(o.outDir, k, samples.back().outputs);
  }
  p.cost = [&](size_t r, size_t k) {
    StageCost c = samples[r % samples.size()].stages.at(k);
    if (!link.empty())
      std::tie(c.inBytes, c.outBytes) = link.at(k);
    return c;
  };
  // A shared DRAM: the stages' NPU cycles with every device running at once.
  nlohmann::json contentionJson;
  std::string contention;
  if (!so.system.empty()) {
    const isa::SystemDescription sys = isa::SystemDescription::loadFile(so.system);
    if (detail::hasSharedDram(sys)) {
      p.joint = detail::jointStageCycles(sys, prog.stageBinaries(), p.stageDevices, o.cycleBudget,
                                         o.model);
      std::vector<uint64_t> alone;
      for (const StageCost& k : samples.front().stages)
        alone.push_back(k.npuCycles);
      contention = detail::describeContention(sys, p.joint, p.stageDevices, alone, contentionJson);
    }
  }
  ServeConfig c;
  c.requests = so.requests;
  c.concurrency = so.concurrency;
  c.queueDepth = so.queueDepth;
  c.whenFull = parseWhenFull(so.whenFull);
  c.batch = so.batch;
  c.batchDeadline = so.batchDeadline;
  const ServeResult r = schedule(p, c);
  nlohmann::json extra = {{"program", o.model},
                          {"system", so.system},
                          {"distinct_inputs", distinct},
                          {"reference", so.reference}};
  if (!contentionJson.is_null())
    extra["dram_contention"] = contentionJson;
  ServeOutcome out;
  out.stages = describeStages(p, samples, extra["stages"]);
  if (!so.reference.empty())
    out.summary = "reference: the outputs of " + std::to_string(distinct) +
                  " distinct input(s) are bit-exact with " + so.reference + " (one NPU)\n";
  out.summary += contention + formatServeResult(r);
  out.reportJson = serveResultJson(r, extra.dump());
  if (!o.traceJson.empty())
    out.traceJson = serveTraceJson(r);
  if (!o.html.empty())
    out.html = serveHtml(r,
                         "Serving " + std::filesystem::path(o.model).filename().string() +
                             (so.system.empty() ? "" : " over " + so.system),
                         out.stages);
  return out;
}

int serveTool(const RunOptions& o) {
  const ServeOutcome r = serve(o);
  if (!o.quiet)
    std::fputs(r.stages.c_str(), stdout);
  std::fputs(r.summary.c_str(), stdout);
  if (!o.reportJson.empty())
    writeFileAtomic(o.reportJson, r.reportJson);
  if (!o.traceJson.empty())
    writeFileAtomic(o.traceJson, r.traceJson);
  if (!o.html.empty()) {
    writeFileAtomic(o.html, r.html);
    if (!o.quiet)
      std::printf("html report: %s\n", o.html.c_str());
  }
  return 0;
}

} // namespace ember::session
