// Latency of a zoo model on the cpu backend: import, default pipeline, compile (codegen,
// O3, JIT timed apart) and the median of --iterations runs after two warm-up runs, for
// each thread count. Prints one parseable line per thread count; bench_cpu.py puts
// PyTorch beside it. A figure, never a pass/fail test.
#include "ember/cpu/CpuBackend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/passes/Pass.h"
#include "ember/quantization/Quantize.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void usage() {
  std::cout << "usage: ember-cpu-bench --model-dir DIR [--threads 1,2] [--iterations N] [--int8]\n"
               "  DIR holds model.onnx and input.npy (a folder of the zoo, tests/models);\n"
               "  --int8 also times the model quantized by ember::quant (calibrated on\n"
               "  input.npy)\n";
}

/// Compiles `f` for `threads` threads and prints its compile time and median latency.
void measure(const ember::Function& f, const ember::TensorMap& in, const char* precision,
             int threads, int iterations) {
  const double t0 = now();
  auto cf = ember::createCpuBackend(ember::CpuOptions{threads})->compile(f);
  const double compile = now() - t0;
  const auto& st = dynamic_cast<const ember::CpuCompiledFunction&>(*cf).stats();
  for (int w = 0; w < 2; ++w)
    cf->run(in);
  std::vector<double> times;
  for (int r = 0; r < iterations; ++r) {
    const double r0 = now();
    cf->run(in);
    times.push_back(now() - r0);
  }
  std::sort(times.begin(), times.end());
  std::printf("cpu-bench precision=%s threads=%d compile_s=%.3f codegen_s=%.3f optimize_s=%.3f "
              "jit_s=%.3f median_ms=%.3f min_ms=%.3f arena_kib=%zu nodes=%zu instances=%zu\n",
              precision, threads, compile, st.codegenSeconds, st.optimizeSeconds, st.jitSeconds,
              times[times.size() / 2] * 1e3, times.front() * 1e3, st.arenaBytes / 1024, st.nodes,
              st.kernelInstances);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  std::string dir;
  std::vector<int> threads = {1, 2};
  int iterations = 10;
  bool int8 = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    }
    if (a == "--int8") {
      int8 = true;
      continue;
    }
    if (i + 1 >= argc) {
      usage();
      return 2;
    }
    if (a == "--model-dir") {
      dir = argv[++i];
    } else if (a == "--iterations") {
      iterations = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--threads") {
      threads.clear();
      std::stringstream ss(argv[++i]);
      for (std::string t; std::getline(ss, t, ',');)
        threads.push_back(std::max(1, std::atoi(t.c_str())));
    } else {
      usage();
      return 2;
    }
  }
  if (dir.empty()) {
    usage();
    return 2;
  }
  try {
    std::unique_ptr<ember::Module> m = ember::importOnnxFile(dir + "/model.onnx");
    ember::Function& f = *m->functions().front();
    ember::runPipeline(f, ember::defaultPipeline());
    const ember::TensorMap in = {{f.inputs().at(0)->name(), ember::readNpy(dir + "/input.npy")}};
    std::vector<std::pair<const char*, const ember::Function*>> variants = {{"float32", &f}};
    if (int8)
      variants.emplace_back("int8", ember::quant::quantizeModel(f, {in}));
    for (const auto& [precision, fn] : variants)
      for (int t : threads)
        measure(*fn, in, precision, t, iterations);
  } catch (const ember::Error& e) {
    std::cerr << "ember-cpu-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
