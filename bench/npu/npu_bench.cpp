// npu_bench: zoo CNNs quantized (random:8 calibration), compiled for each description and
// simulated; per model and description: compile time, simulated cycles, MAC utilisation,
// roofline efficiency, and the cost model's estimate beside the simulation.
//
//   npu_bench --models DIR [--isa FILE.json]... [--json FILE] [--layers] [--no-fuse-lut] MODEL...
//
// --json also writes the figures as an array with one object per model and description
// (model, description, compile_s, cycles, useful_mac_utilization, array_mac_utilization,
// roofline_efficiency, estimated_cycles, host_s; on a fault: model, description, fault),
// for bench/scoreboard/scoreboard.py. --layers also prints, per layer in program order, its
// simulated cycles beside its ideal cycles and what bounds them (the array or DRAM): where
// a model's roofline efficiency goes. --no-fuse-lut compiles every Lut as a layer of its own
// (CompileOptions::fuseLut), for comparisons.
//
// Roofline efficiency (issue 5): for each layer, ideal cycles = max(MACs / peak MACs per
// cycle, compulsory DRAM bytes / DRAM bytes per cycle), where the compulsory bytes are the
// layer's int8 inputs and result and its constants, each moved once (a fused layer, "conv +
// add" or "conv + lut", counts the inputs and results of its nodes but the value that
// passes between them, which never reaches DRAM); efficiency = sum of ideal cycles /
// simulated cycles. Figures only: nothing here fails on time. The bound is
// platform::roofline, the one the report's layer rows use; the report's rows apply it to
// the MACs the array did and the DRAM bytes the program moved, this bench to the model's
// useful MACs and its compulsory bytes.
#include "ember/importer/OnnxImporter.h"
#include "ember/isa/description.h"
#include "ember/npu/Compile.h"
#include "ember/platform/Io.h"
#include "ember/platform/Layers.h"
#include "ember/platform/Report.h"
#include "ember/quantization/Profile.h"
#include "ember/quantization/Quantize.h"
#include "ember/sim/Simulator.h"
#include "ember/support/Npy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace ember;

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The nodes of layer `name`: the node of that name, or the nodes a fused layer names
/// ("conv + add", a residual Add or a Lut fused into its producer); empty when any is
/// missing.
std::vector<const Node*> layerNodes(const Function& q, const std::string& name) {
  if (const Node* n = q.findNode(name))
    return {n};
  std::vector<const Node*> group;
  for (const std::string& part : npu::layerNodeNames(name)) {
    const Node* n = q.findNode(part);
    if (!n)
      return {};
    group.push_back(n);
  }
  return group;
}

/// Bytes a layer must move at least once: its non-constant inputs, its constants and its
/// result; for a fused layer, the inputs and results of its nodes that do not pass from
/// one of them to another (a fused producer's result never leaves the NPU).
double compulsoryBytes(const Function& q, const std::string& name) {
  const std::vector<const Node*> group = layerNodes(q, name);
  auto inGroup = [&](const Node* n) {
    return std::find(group.begin(), group.end(), n) != group.end();
  };
  double b = 0;
  for (const Node* n : group) {
    for (const auto& in : n->inputs())
      if (in && !inGroup(in.node))
        b += double(in.type().sizeInBytes());
    for (unsigned r = 0; r < n->numResults(); ++r) {
      bool internal = false;
      for (const Node* m : group)
        for (const auto& in : m->inputs())
          internal = internal || (in.node == n && in.resNo == r);
      if (!internal)
        b += double(n->resultType(r).sizeInBytes());
    }
  }
  return b;
}

/// Per layer: simulated cycles (first start to last end of its instructions, so
/// overlapping layers both count the overlap), ideal cycles and the bound.
void printLayers(const Function& q, const npu::CompileResult& c, const platform::Report& report,
                 double peak, double bw) {
  std::printf("  %-60s %10s %10s %5s %7s %10s\n", "layer", "sim cycles", "ideal", "bound", "eff.",
              "lost");
  std::map<std::string, uint64_t> macs;
  for (const auto& l : c.summary.layers)
    macs[l.name] = l.macs;
  for (const auto& l : report.layers) {
    const platform::Roofline rf = platform::roofline(
        double(macs[l.name]), compulsoryBytes(q, l.name), double(l.cycles), peak, bw);
    const std::string name =
        l.name.size() > 60 ? "..." + l.name.substr(l.name.size() - 57) : l.name;
    std::printf("  %-60s %10llu %10.0f %5s %6.1f%% %10.0f\n", name.c_str(),
                (unsigned long long)l.cycles, rf.bound, rf.kind, 100.0 * rf.efficiency,
                double(l.cycles) - rf.bound);
  }
}

void benchModel(const std::string& dir, const std::string& model,
                const std::vector<std::string>& isas, bool layers, const npu::CompileOptions& copts,
                nlohmann::json& json) {
  const std::string path = dir + "/" + model + "/model.onnx";
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Module> m = importOnnxFile(path);
  Function& f = *m->functions().front();
  Function* q = quant::quantizeModel(f, quant::loadCalibration(f, "random:8"));
  const double prepare = seconds(t0);
  const Tensor input = readNpy(dir + "/" + model + "/input.npy");
  for (const std::string& isaPath : isas) {
    isa::IsaDescription desc = isa::IsaDescription::loadDefault(isaPath);
    auto t1 = std::chrono::steady_clock::now();
    npu::CompileResult c = npu::compile(*q, desc, copts);
    const double compile = seconds(t1);
    // The input, quantized as the graph's QuantizeLinear does, blocked by the simulator.
    sim::Simulator simulator(desc);
    const isa::IoEntry* in = nullptr;
    for (const auto& io : c.binary.io)
      if (io.dir == isa::IoDir::Input)
        in = &io;
    std::map<std::string, std::vector<uint8_t>> inputs;
    if (in) {
      std::vector<uint8_t> codes(size_t(input.size()));
      for (int64_t i = 0; i < input.size(); ++i) {
        double v =
            double(std::nearbyint(input.data<float>()[i] / float(in->scale))) + in->zero_point;
        codes[size_t(i)] = uint8_t(int8_t(std::min(127.0, std::max(-128.0, v))));
      }
      inputs[in->name] = platform::packIo(*in, codes, unsigned(desc.memory("act").lanes()));
    }
    platform::Options opts;
    opts.record_slices = false;
    auto t2 = std::chrono::steady_clock::now();
    platform::Result r = simulator.run(c.binary, inputs, opts);
    const double host = seconds(t2);
    if (r.report.fault) {
      std::printf("%-14s %-16s FAULT %s\n", model.c_str(), desc.name().c_str(),
                  r.report.fault->message().c_str());
      json.push_back(
          {{"model", model}, {"description", desc.name()}, {"fault", r.report.fault->message()}});
      continue;
    }
    const double peak = double(desc.peakMacsPerCycle());
    const double bw = desc.dramBytesPerCycle();
    double ideal = 0;
    for (const auto& l : c.summary.layers)
      ideal += platform::roofline(double(l.macs), compulsoryBytes(*q, l.name), 0, peak, bw).bound;
    const double cycles = double(r.report.cycles);
    // Useful MACs (the model's) per cycle over the peak; the array's own count also holds
    // the zero MACs of depthwise (diagonal) weight blocks and channel padding.
    const double useful = double(c.summary.macs) / (cycles * peak);
    std::printf("%-14s %-16s %9.3f s %12.0f %7.1f%% %7.1f%% %9.1f%% %12.0f %6.2f %7.2f s "
                "%5.1f M/s\n",
                model.c_str(), desc.name().c_str(), compile, cycles, 100.0 * useful,
                100.0 * r.report.mac_utilization, 100.0 * ideal / cycles, c.summary.cycles,
                c.summary.cycles / cycles, host, cycles / host / 1e6);
    if (layers)
      printLayers(*q, c, r.report, peak, bw);
    json.push_back({{"model", model},
                    {"description", desc.name()},
                    {"compile_s", compile},
                    {"cycles", r.report.cycles},
                    {"useful_mac_utilization", useful},
                    {"array_mac_utilization", r.report.mac_utilization},
                    {"roofline_efficiency", ideal / cycles},
                    {"estimated_cycles", c.summary.cycles},
                    {"host_s", host}});
  }
  std::printf("%-14s (import + pipeline + calibration + quantize: %.2f s)\n", model.c_str(),
              prepare);
}

} // namespace

int main(int argc, char** argv) {
  std::string dir, jsonPath;
  std::vector<std::string> isas, models;
  bool layers = false;
  npu::CompileOptions copts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--models" || a == "--isa") && i + 1 < argc)
      (a == "--models" ? dir : (isas.emplace_back(), isas.back())) = argv[++i];
    else if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--layers")
      layers = true;
    else if (a == "--no-fuse-lut")
      copts.fuseLut = false;
    else if (!a.empty() && a[0] != '-')
      models.push_back(a);
    else {
      std::fprintf(stderr,
                   "usage: npu_bench --models DIR [--isa FILE.json]... [--json FILE] [--layers] "
                   "[--no-fuse-lut] MODEL...\n");
      return 1;
    }
  }
  if (isas.empty())
    isas.push_back("");
  std::printf("%-14s %-16s %11s %12s %8s %8s %10s %12s %6s %9s %7s\n", "model", "description",
              "compile", "sim cycles", "MAC use", "array", "roofline", "est. cycles", "est/sim",
              "sim host", "speed");
  std::printf("(MAC use: the model's MACs / (cycles x peak); array: MACs the array did, zero "
              "blocks of depthwise convolutions included)\n");
  nlohmann::json json = nlohmann::json::array();
  try {
    for (const auto& m : models)
      benchModel(dir, m, isas, layers, copts, json);
    if (!jsonPath.empty())
      platform::writeJsonFile(jsonPath, json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "npu_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
