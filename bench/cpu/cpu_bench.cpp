// Latency of a zoo model on the cpu backend: import, default pipeline, compile (codegen,
// O3, JIT timed apart) and the median of --iterations runs after two warm-up runs, for
// each thread count. Prints one parseable line per thread count; bench_cpu.py puts
// PyTorch beside it. With --compile-times, the JIT compile time alone: cold (no cache)
// with one and with every hardware thread, then warm from the disk cache and from the
// memory cache, phase by phase, beside issue 15's goal. Figures, never a pass/fail test.
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
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The CPU time of every thread of the process, in seconds: at one thread the run's own
/// time on a core, which other processes on a loaded host do not add to (at two threads it
/// also counts what a member spins at a barrier).
double cpuNow() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

void usage() {
  std::cout << "usage: ember-cpu-bench --model-dir DIR [--threads 1,2] [--iterations N] [--int8]\n"
               "       ember-cpu-bench --compile-times --model-dir DIR [--int8] [--goal S]\n"
               "  DIR holds model.onnx and input.npy (a folder of the zoo, tests/models);\n"
               "  --int8 also times the model quantized by ember::quant (calibrated on\n"
               "  input.npy); --compile-times prints the JIT compile time alone (cold,\n"
               "  then from the disk and memory caches) beside the goal S (3 s)\n";
}

/// A cold compile: no memory cache, no disk cache.
ember::CpuOptions coldOptions(int threads, int compileThreads) {
  ember::CpuOptions o;
  o.threads = threads;
  o.compileThreads = compileThreads;
  o.memoryCache = false;
  o.cacheDir = "off";
  return o;
}

/// Compiles `f` with `o` and prints the compile time phase by phase.
void compileOnce(const ember::Function& f, const char* precision, const char* mode,
                 const ember::CpuOptions& o, double goal) {
  const double t0 = now();
  auto cf = ember::createCpuBackend(o)->compile(f);
  const double total = now() - t0;
  const auto& st = dynamic_cast<const ember::CpuCompiledFunction&>(*cf).stats();
  std::printf("  %-8s %-24s %7.2f %8.2f %7.2f %9.2f %9.2f %8.2f %6.2f %5zu/%-5zu %7d %s\n",
              precision, mode, total, st.codegenSeconds, st.splitSeconds, st.optimizeSeconds,
              st.jitSeconds, st.compileSeconds, st.linkSeconds, st.cachedPartitions, st.partitions,
              st.compileThreads,
              goal > 0 ? ("<= " + std::to_string(goal).substr(0, 4) + " s").c_str() : "");
  std::fflush(stdout);
}

/// --compile-times: cold with 1 and every hardware thread, warm from disk and memory.
void compileTimes(const ember::Function& f, const char* precision, double goal) {
  const int hw = std::max(1, int(std::thread::hardware_concurrency()));
  compileOnce(f, precision, "cold, 1 compile thread", coldOptions(1, 1), goal);
  if (hw > 1)
    compileOnce(f, precision, ("cold, " + std::to_string(hw) + " compile threads").c_str(),
                coldOptions(1, hw), goal);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ember-cpu-bench-cache-" + std::to_string(::getpid()));
  ember::CpuOptions disk = coldOptions(1, hw);
  disk.cacheDir = dir.string();
  ember::createCpuBackend(disk)->compile(f); // fills the folder
  compileOnce(f, precision, "disk cache", disk, 0);
  std::filesystem::remove_all(dir);
  ember::CpuOptions memory = coldOptions(1, hw);
  memory.memoryCache = true;
  ember::createCpuBackend(memory)->compile(f); // fills the memory cache
  compileOnce(f, precision, "memory cache", memory, 0);
}

/// Compiles `f` for `threads` threads and prints its compile time and median latency.
void measure(const ember::Function& f, const ember::TensorMap& in, const char* precision,
             int threads, int iterations) {
  const double t0 = now();
  auto cf = ember::createCpuBackend(coldOptions(threads, 0))->compile(f);
  const double compile = now() - t0;
  const auto& st = dynamic_cast<const ember::CpuCompiledFunction&>(*cf).stats();
  for (int w = 0; w < 2; ++w)
    cf->run(in);
  std::vector<double> times, cpu;
  for (int r = 0; r < iterations; ++r) {
    const double r0 = now(), c0 = cpuNow();
    cf->run(in);
    times.push_back(now() - r0);
    cpu.push_back(cpuNow() - c0);
  }
  std::sort(times.begin(), times.end());
  std::sort(cpu.begin(), cpu.end());
  std::printf("cpu-bench precision=%s threads=%d compile_s=%.3f codegen_s=%.3f optimize_s=%.3f "
              "jit_s=%.3f median_ms=%.3f min_ms=%.3f cpu_median_ms=%.3f arena_kib=%zu nodes=%zu "
              "instances=%zu partitions=%zu compile_threads=%d\n",
              precision, threads, compile, st.codegenSeconds, st.optimizeSeconds, st.jitSeconds,
              times[times.size() / 2] * 1e3, times.front() * 1e3, cpu[cpu.size() / 2] * 1e3,
              st.arenaBytes / 1024, st.nodes, st.kernelInstances, st.partitions, st.compileThreads);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  std::string dir;
  std::vector<int> threads = {1, 2};
  int iterations = 10;
  bool int8 = false;
  bool compile = false;
  double goal = 3.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    }
    if (a == "--int8" || a == "--compile-times") {
      (a == "--int8" ? int8 : compile) = true;
      continue;
    }
    if (i + 1 >= argc) {
      usage();
      return 2;
    }
    if (a == "--model-dir") {
      dir = argv[++i];
    } else if (a == "--goal") {
      goal = std::atof(argv[++i]);
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
    if (compile) {
      std::printf("JIT compile of %s (s; optimise and machine code summed over the compile "
                  "threads; issue 15's goal for a cold compile: <= %.1f s)\n",
                  dir.c_str(), goal);
      std::printf("  %-8s %-24s %7s %8s %7s %9s %9s %8s %6s %11s %7s %s\n", "", "", "total",
                  "codegen", "split", "optimise", "mach.code", "parallel", "link", "cached/all",
                  "threads", "goal");
    }
    for (const auto& [precision, fn] : variants) {
      if (compile) {
        compileTimes(*fn, precision, goal);
        continue;
      }
      for (int t : threads)
        measure(*fn, in, precision, t, iterations);
    }
  } catch (const ember::Error& e) {
    std::cerr << "ember-cpu-bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
