// The multi-device partitioner's front (ember/driver/Pipeline.h): the problem built from a
// quantized function and its NPU compiles, the pipelined plan, and its report.
#include "ember/driver/Pipeline.h"

#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace ember::partition {

namespace {

/// Bytes a value moves over a link: a float value crosses as the int8 codes the NPU
/// reads or writes (the host quantizes), as in the single-NPU partitioner.
uint64_t linkBytes(const Type& t) {
  return t.kind == ElemKind::Float32 ? uint64_t(t.size()) : t.sizeInBytes();
}

std::string valueKey(const Node* n, unsigned r) {
  return r == 0 ? n->name() : n->name() + ":" + std::to_string(r);
}

std::vector<PipelineDevice> problemDevices(const isa::SystemDescription& sys) {
  std::vector<PipelineDevice> out;
  const auto& devs = sys.devices();
  for (size_t d = 0; d < devs.size(); ++d) {
    PipelineDevice pd;
    pd.name = devs[d].name;
    pd.link = devs[d].host_link;
    pd.dram = devs[d].dram;
    pd.dramBytes = sys.drams()[pd.dram].size_bytes;
    pd.sharesWithPrev = d > 0 && devs[d - 1].dram == pd.dram;
    pd.sharesWithNext = d + 1 < devs.size() && devs[d + 1].dram == pd.dram;
    out.push_back(std::move(pd));
  }
  return out;
}

/// Every item's cycles on one device: its layer's cycles (by name; a layer the compiler
/// fused, "PRODUCER + ADD", counts for its producer) plus a share of the cycles no layer
/// names, by result elements (as Partitioner::npuNodeSeconds).
void assignCycles(PipelineProblem& p, const std::vector<const Node*>& nodes, size_t device,
                  const npu::CompileSummary& s) {
  const std::map<std::string, double> byName = npu::cyclesByNode(s);
  double named = 0, elems = 0;
  for (size_t t = 0; t < nodes.size(); ++t) {
    auto it = byName.find(nodes[t]->name());
    p.items[t].cycles[device] = it == byName.end() ? 0 : it->second;
    named += p.items[t].cycles[device];
    elems += double(nodes[t]->resultType().size());
  }
  const double rest = std::max(0.0, s.cycles - named);
  for (size_t t = 0; t < nodes.size(); ++t)
    p.items[t].cycles[device] +=
        elems > 0 ? rest * double(nodes[t]->resultType().size()) / elems : 0;
}

/// Items and values of `f` (nodes in order; placeholders become values without a
/// producer; constants count as their readers' weights).
void buildItems(PipelineProblem& p, const Function& f, std::vector<const Node*>& nodes) {
  std::map<NodeValue, size_t> valueIndex;
  std::map<const Node*, size_t> itemIndex;
  auto valueOf = [&](const NodeValue& v, int producer) {
    auto [it, fresh] = valueIndex.emplace(v, p.values.size());
    if (fresh) {
      PipelineValue pv;
      pv.key = valueKey(v.node, v.resNo);
      pv.producer = producer;
      pv.bytes = linkBytes(v.type());
      p.values.push_back(std::move(pv));
    }
    return it->second;
  };
  for (const auto& up : f.nodes()) {
    const Node* n = up.get();
    const size_t t = p.items.size();
    itemIndex[n] = t;
    nodes.push_back(n);
    PipelineItem item;
    item.name = n->name();
    item.kind = n->kindName();
    for (const NodeValue& in : n->inputs()) {
      if (!in)
        continue;
      if (in.node->kind() == NodeKind::Constant) {
        item.weightBytes += in.type().sizeInBytes();
        continue;
      }
      const int producer =
          in.node->kind() == NodeKind::Placeholder ? -1 : int(itemIndex.at(in.node));
      const size_t v = valueOf(in, producer);
      if (std::find(item.inputs.begin(), item.inputs.end(), v) != item.inputs.end())
        continue;
      item.inputs.push_back(v);
      item.workBytes += p.values[v].bytes;
      p.values[v].lastReader = t;
      p.values[v].hasReader = true;
    }
    for (unsigned r = 0; r < n->numResults(); ++r) {
      const size_t v = valueOf(NodeValue(const_cast<Node*>(n), r), int(t));
      item.results.push_back(v);
      item.workBytes += p.values[v].bytes;
    }
    p.items.push_back(std::move(item));
  }
  for (const auto& o : f.outputs())
    if (auto it = valueIndex.find(o.value); it != valueIndex.end())
      p.values[it->second].modelOutput = true;
}

double pct(double a, double b) {
  return b > 0 ? 100.0 * (a / b - 1.0) : 0.0;
}

/// Cut points where the device-0 cycles' prefix first reaches k/K of the total (every
/// stage non-empty): the split a balancer without the DP would take.
PipelineAssignment greedySplit(const PipelineProblem& p) {
  const size_t n = p.items.size(), k = p.devices.size();
  double total = stageComputeCycles(p, 0, 0, n), acc = 0;
  std::vector<size_t> cuts{0};
  for (size_t t = 0; t < n && cuts.size() < k; ++t) {
    acc += p.items[t].cycles[0];
    const size_t left = n - (t + 1);
    if ((acc >= total * double(cuts.size()) / double(k) || left == k - cuts.size()) &&
        t + 1 > cuts.back())
      cuts.push_back(t + 1);
  }
  cuts.push_back(n);
  PipelineAssignment a;
  for (size_t d = 0; d + 1 < cuts.size(); ++d) {
    PipelineStage s;
    s.device = d;
    s.begin = cuts[d];
    s.end = cuts[d + 1];
    s.figures = stageFigures(p, s.begin, s.end);
    s.computeCycles = stageComputeCycles(p, d, s.begin, s.end);
    s.linkCycles = stageLinkCycles(p, d, s.figures);
    a.bottleneck = std::max(a.bottleneck, s.cycles());
    a.stages.push_back(s);
  }
  return a;
}

/// The first DRAM that `a`'s stages overfill (their bytes summed per DRAM: a private
/// DRAM holds one stage), as "npu1's DRAM: 9.1 MiB of 8 MiB", or "" when all fit.
std::string overfilledDram(const PipelineProblem& p, const PipelineAssignment& a) {
  std::map<size_t, uint64_t> need;
  for (const PipelineStage& s : a.stages)
    need[p.devices[s.device].dram] += s.figures.dramBytes();
  for (const PipelineStage& s : a.stages) {
    const PipelineDevice& dev = p.devices[s.device];
    if (need[dev.dram] > dev.dramBytes)
      return dev.name + "'s DRAM: " + formatBytes(need[dev.dram]) + " of " +
             formatBytes(dev.dramBytes);
  }
  return "";
}

} // namespace

std::vector<std::string> PipelinePlan::stageNodes(size_t k) const {
  std::vector<std::string> out;
  const PipelineStage& s = assignment.stages.at(k);
  for (size_t t = s.begin; t < s.end; ++t)
    out.push_back(problem.items[t].name);
  return out;
}

PipelineProblem pipelineProblem(const Function& f, const isa::SystemDescription& sys,
                                const std::vector<const npu::CompileSummary*>& summaries) {
  PipelineProblem p;
  p.devices = problemDevices(sys);
  std::vector<const Node*> nodes;
  buildItems(p, f, nodes);
  for (PipelineItem& it : p.items)
    it.cycles.assign(p.devices.size(), 0.0);
  for (size_t d = 0; d < p.devices.size(); ++d)
    assignCycles(p, nodes, d, *summaries.at(d));
  return p;
}

MeasuredCycles readMeasuredCycles(const std::string& reportPath) {
  MeasuredCycles m;
  m.file = reportPath;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(readFileBytes(reportPath));
  } catch (const nlohmann::json::exception& e) {
    throw Error(reportPath, std::string("not a simulation report (JSON): ") + e.what());
  }
  auto need = [&](const char* key, bool (nlohmann::json::*is)() const) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key) || !(j.at(key).*is)())
      throw Error(reportPath, std::string("not a simulation report: no valid '") + key +
                                  "' (write one with ember-sim BIN.elf --report R.json)");
    return j.at(key);
  };
  m.isaName = need("isa", &nlohmann::json::is_string).get<std::string>();
  m.total = need("cycles", &nlohmann::json::is_number).get<double>();
  const nlohmann::json& layers = need("layers", &nlohmann::json::is_array);
  for (size_t i = 0; i < layers.size(); ++i) {
    const nlohmann::json& l = layers[i];
    if (!l.is_object() || !l.contains("name") || !l.at("name").is_string() ||
        !l.contains("cycles") || !l.at("cycles").is_number())
      throw Error(reportPath, "/layers/" + std::to_string(i) + ": no name and cycles");
    m.layers[l.at("name").get<std::string>()] += l.at("cycles").get<double>();
  }
  return m;
}

namespace {

/// The summary of `s`'s description with the measured cycles in place of its estimates.
npu::CompileSummary measuredSummary(const npu::CompileSummary& s, const MeasuredCycles& m) {
  npu::CompileSummary out = s;
  out.layers.clear();
  for (const auto& [name, cycles] : m.layers) {
    npu::LayerSummary l;
    l.name = name;
    l.cycles = cycles;
    out.layers.push_back(l);
  }
  out.cycles = m.total;
  return out;
}

} // namespace

PipelinePlan pipelineModel(const Function& quantized, const Plan& plan,
                           const isa::SystemDescription& sys, const npu::CompileOptions& opts,
                           const MeasuredCycles* measured) {
  if (!plan.whole)
    throw Error(plan.source.empty() ? plan.functionName : plan.source,
                "--system pipelines a model the NPU runs whole, but on " + plan.isaName +
                    " it runs in " + std::to_string(plan.segments.size()) + " segments (" +
                    std::to_string(plan.nodes.size() - plan.npuNodes()) +
                    " node(s) on the host; --partition-report without --system lists them)");
  // One compile per distinct description; the plan's is device 0's.
  std::map<std::string, std::shared_ptr<npu::CompileResult>> compiled;
  compiled[sys.devices().front().isa.hashHex()] = plan.segments.front().npu;
  std::vector<const npu::CompileSummary*> summaries;
  npu::CompileSummary fromRun;
  bool used = false;
  for (const isa::SystemDevice& d : sys.devices()) {
    auto& r = compiled[d.isa.hashHex()];
    if (!r)
      r = std::make_shared<npu::CompileResult>(npu::compile(quantized, d.isa, opts));
    summaries.push_back(&r->summary);
    if (measured && d.isa.name() == measured->isaName) {
      if (!used)
        fromRun = measuredSummary(r->summary, *measured);
      used = true;
      summaries.back() = &fromRun;
    }
  }
  if (measured && !used)
    throw Error(measured->file, "was simulated on '" + measured->isaName +
                                    "', which no device of " + sys.file() + " runs");
  PipelinePlan out;
  out.systemName = sys.name();
  out.functionName = quantized.name();
  out.clockHz = sys.clockHz();
  out.problem = pipelineProblem(quantized, sys, summaries);
  try {
    out.assignment = optimalPipeline(out.problem);
  } catch (const Error& e) { // name the system the stages do not fit
    throw Error(sys.file(), e.reason());
  }
  const size_t n = out.problem.items.size();
  const StageFigures whole = stageFigures(out.problem, 0, n);
  double inverse = 0;
  for (size_t d = 0; d < sys.devices().size(); ++d) {
    const double compute = stageComputeCycles(out.problem, d, 0, n);
    out.singleDeviceCycles.push_back(compute + stageLinkCycles(out.problem, d, whole));
    inverse += compute > 0 ? 1.0 / compute : 0.0;
  }
  out.idealCycles = inverse > 0 ? 1.0 / inverse : 0.0;
  return out;
}

std::string formatPipelineReport(const PipelinePlan& p) {
  const PipelineProblem& pr = p.problem;
  const PipelineAssignment& a = p.assignment;
  std::string o;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "pipeline of '%s' over system %s: %zu layers on %zu devices; the schedule is %s\n",
                p.functionName.c_str(), p.systemName.c_str(), pr.items.size(), pr.devices.size(),
                pr.chain() ? "a chain: the cut is the exact optimum"
                           : "a DAG: the cut is the optimum over its topological order");
  o += buf;
  o += "stage  device  layers  layer cycles   link cycles  stage cycles  % of slowest  bytes "
       "in    bytes out   DRAM        first .. last layer\n";
  size_t slowest = 0;
  double fastest = a.stages.empty() ? 0 : a.stages.front().cycles();
  for (size_t k = 0; k < a.stages.size(); ++k) {
    const PipelineStage& s = a.stages[k];
    if (s.cycles() > a.stages[slowest].cycles())
      slowest = k;
    fastest = std::min(fastest, s.cycles());
    const StageFigures& f = s.figures;
    std::snprintf(buf, sizeof buf,
                  "%-6zu %-7s %-7zu %-14.0f %-12.0f %-13.0f %-13.1f %-11s %-11s %-11s %s .. %s\n",
                  k, pr.devices[s.device].name.c_str(), s.end - s.begin, s.computeCycles,
                  s.linkCycles, s.cycles(), 100.0 * s.cycles() / a.bottleneck,
                  formatBytes(f.inFromHost + f.inFromStages).c_str(),
                  formatBytes(f.outToHost + f.outToStages).c_str(),
                  formatBytes(f.dramBytes()).c_str(), pr.items[s.begin].name.c_str(),
                  pr.items[s.end - 1].name.c_str());
    o += buf;
  }
  const double clock = double(p.clockHz);
  std::snprintf(buf, sizeof buf,
                "bottleneck: stage %zu on %s, %.0f cycles (%.3f ms): %.1f inferences/s, %.2fx "
                "one %s alone (%.0f cycles with the model's input and output over its link)\n",
                slowest, pr.devices[a.stages[slowest].device].name.c_str(), a.bottleneck,
                1e3 * a.bottleneck / clock, clock / a.bottleneck,
                p.singleDeviceCycles.front() / a.bottleneck, pr.devices.front().name.c_str(),
                p.singleDeviceCycles.front());
  o += buf;
  std::snprintf(buf, sizeof buf,
                "imbalance: the bottleneck is %+.1f%% over the ideal %.0f cycles (the layer "
                "cycles shared by the devices in proportion to their speed, no transfers; "
                "total/%zu for equal devices); slowest / fastest stage %.3f\n",
                pct(a.bottleneck, p.idealCycles), p.idealCycles, pr.devices.size(),
                fastest > 0 ? a.bottleneck / fastest : 0.0);
  o += buf;
  const PipelineAssignment g = greedySplit(pr);
  const std::string over = overfilledDram(pr, g);
  std::snprintf(buf, sizeof buf,
                "the optimum vs a greedy split at equal shares of %s's cycles: %.0f cycles, ",
                pr.devices.front().name.c_str(), g.bottleneck);
  o += buf;
  if (over.empty()) {
    std::snprintf(buf, sizeof buf, "%+.1f%% over the optimum\n", pct(g.bottleneck, a.bottleneck));
    o += buf;
  } else {
    o += "which does not fit (" + over + ")\n";
  }
  return o;
}

} // namespace ember::partition
