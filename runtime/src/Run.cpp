// Running binaries from .npy files (Run.h): what ember-sim and ember-run --device sim|rtl
// do, .npy in, a job through a device's ring, .npy and reports out.
#include "ember/runtime/Run.h"
#include "ember/isa/roles.h"

#include "ember/isa/binary.h"
#include "ember/isa/dma.h"
#include "ember/isa/error.h"
#include "ember/platform/Io.h"
#include "ember/platform/Report.h"
#include "ember/runtime/Runtime.h"
#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"
#include "ember/support/Npy.h"
#include "ember/tensor/Tensor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <ostream>
#include <unistd.h>

namespace ember::runtime {

namespace {

using isa::DType;

/// True if `t`'s shape is entry `e`'s logical shape, or `e`'s with trailing 1s dropped
/// down to `t`'s rank (an [N, C] value for the [N, C, 1, 1] entry of a classifier), or a
/// [B, T, C] sequence for the [B * T, C, 1, 1] entry the NPU keeps it as.
bool shapeFits(const isa::IoEntry& e, const Tensor& t) {
  const auto& dims = t.dims();
  if (dims.size() == 3 && e.shape.size() == 4 && e.shape[0] == dims[0] * dims[1] &&
      e.shape[1] == dims[2] && e.shape[2] == 1 && e.shape[3] == 1)
    return true;
  if (dims.size() > e.shape.size())
    return false;
  for (std::size_t i = 0; i < e.shape.size(); ++i)
    if (i < dims.size() ? dims[i] != e.shape[i] : e.shape[i] != 1)
      return false;
  return true;
}

std::string shapeText(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// The element kinds an input file may hold for entry `e`: float32 (quantized for
/// integer entries) or the entry's own integer type.
bool kindFits(const isa::IoEntry& e, ElemKind k) {
  if (k == ElemKind::Float32)
    return true;
  switch (e.dtype) {
  case DType::Int8:
    return k == ElemKind::Int8;
  case DType::UInt8:
  case DType::Int32:
    return k == ElemKind::Int32;
  case DType::Float32:
    return false;
  }
  return false;
}

/// Elements of `t` as the bytes of `e.dtype` (float32 data for an integer input is
/// quantized with the entry's scale and zero point, docs/numerics.md section 2).
std::vector<std::uint8_t> elementsFor(const isa::IoEntry& e, const Tensor& t,
                                      const std::string& file) {
  const std::string where = file + " (input '" + e.name + "')";
  if (!shapeFits(e, t))
    throw Error(where, "holds shape " + shapeText(t.dims()) + ", the binary's input '" + e.name +
                           "' is " + shapeText(e.shape) + " (the logical shape, " +
                           "e.g. NCHW; the simulator blocks it into NCHWc itself)");
  if (!kindFits(e, t.kind()))
    throw Error(where, "holds " + std::string(elemKindName(t.kind())) + " data; input '" + e.name +
                           "' takes float32 or " +
                           (e.dtype == DType::Int8      ? "int8"
                            : e.dtype == DType::Float32 ? "nothing else"
                                                        : "int32") +
                           " (" + isa::toString(e.dtype) + " in the binary)");
  const std::int64_t want = t.size();
  std::vector<std::uint8_t> out(std::size_t(want) * isa::sizeOf(e.dtype));
  for (std::int64_t i = 0; i < want; ++i) {
    double v = t.getAsDouble(i);
    if (std::isnan(v))
      throw Error(where, "element " + std::to_string(i) + " is NaN, which has no " +
                             isa::toString(e.dtype) + " value");
    // As the interpreter's QuantizeLinear: the division in float32, then round half to
    // even, so that host-side quantization gives the same codes as the graph's.
    if (t.kind() == ElemKind::Float32 && (e.dtype == DType::Int8 || e.dtype == DType::UInt8))
      v = double(std::nearbyint(t.data<float>()[i] / static_cast<float>(e.scale))) + e.zero_point;
    else if (e.dtype == DType::UInt8 && (v < 0 || v > 255))
      throw Error(where, "element " + std::to_string(i) + " is " +
                             std::to_string(static_cast<long long>(v)) +
                             ", outside [0, 255] of the uint8 input");
    switch (e.dtype) {
    case DType::Int8:
      out[std::size_t(i)] = std::uint8_t(std::int8_t(std::clamp(v, -128.0, 127.0)));
      break;
    case DType::UInt8:
      out[std::size_t(i)] = std::uint8_t(std::clamp(v, 0.0, 255.0));
      break;
    case DType::Int32: {
      // Float32 data for an int32 entry saturates like QuantizeLinear's int32 form.
      std::int32_t x = std::int32_t(std::clamp(v, -2147483648.0, 2147483647.0));
      std::memcpy(out.data() + i * 4, &x, 4);
      break;
    }
    case DType::Float32: {
      float x = float(v);
      std::memcpy(out.data() + i * 4, &x, 4);
      break;
    }
    }
  }
  return out;
}

Tensor tensorOf(const isa::IoEntry& e, const std::vector<std::uint8_t>& elems) {
  ElemKind k = ElemKind::Int8;
  if (e.dtype == DType::Int32)
    k = ElemKind::Int32;
  else if (e.dtype == DType::Float32)
    k = ElemKind::Float32;
  Tensor t(k, Shape(e.shape.begin(), e.shape.end()));
  if (e.dtype == DType::UInt8) {
    // No uint8 in .npy support: widen to int32.
    Tensor w(ElemKind::Int32, Shape(e.shape.begin(), e.shape.end()));
    for (std::size_t i = 0; i < elems.size(); ++i) {
      std::int32_t v = elems[i];
      std::memcpy(w.raw() + i * 4, &v, 4);
    }
    return w;
  }
  std::memcpy(t.raw(), elems.data(), std::min(elems.size(), t.sizeInBytes()));
  return t;
}

} // namespace

void checkOutputs(const RunRequest& req) {
  std::vector<std::string> inputs{req.binary, isa::IsaDescription::resolvedPath(req.isa)};
  for (const auto& [name, file] : req.inputs)
    inputs.push_back(file);
  checkRunPaths(
      {{req.report_json, "--report"}, {req.trace_json, "--trace"}, {req.out_dir, "--out", true}},
      inputs);
}

std::pair<std::string, std::string> parseInputArg(const std::string& arg) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    throw isa::Error("--input", arg, "expected NAME=FILE.npy");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

namespace {
RunResult runLoaded(const isa::Binary& bin, isa::ElfFile* file, const isa::IsaDescription& desc,
                    const RunRequest& req, std::ostream& err);
} // namespace

RunResult runBinary(const RunRequest& req, std::ostream& err) {
  isa::IsaDescription desc = isa::IsaDescription::loadDefault(req.isa);
  // Read and checked once, its constants left in the file's bytes (isa::ElfFile): the
  // job's image goes into device DRAM straight from them (its pages moved there).
  isa::ElfFile file(req.binary, desc);
  return runLoaded(file.tables(), &file, desc, req, err);
}

namespace {

/// What every run of a binary is checked into before it reaches a device: its inputs in
/// DRAM layout and its DRAM window (jobWindowBytes).
struct CheckedJob {
  platform::JobInputs inputs;
  std::uint64_t window = 0;
};

/// The inputs of a run in DRAM layout, by name: the request's files and tensors, and the
/// missing ones filled (or warned about, `who` starting the line). ember::Error for a
/// name the binary has no input of, unless `onlyOwn` (ember-sim --jobs, where an input
/// feeds every binary that has it and runJobs checks that some binary does).
platform::JobInputs gatherInputs(const isa::Binary& bin, const RunRequest& req, unsigned lanes,
                                 bool onlyOwn, const std::string& who, std::ostream& err) {
  auto findInput = [&](const std::string& name) -> const isa::IoEntry* {
    for (const auto& io : bin.io)
      if (io.name == name && io.dir == isa::IoDir::Input)
        return &io;
    return nullptr;
  };
  auto inputEntry = [&](const std::string& name, const std::string& where) {
    if (const isa::IoEntry* e = findInput(name))
      return e;
    std::string known;
    for (const auto& io : bin.io)
      if (io.dir == isa::IoDir::Input)
        known += (known.empty() ? "" : ", ") + io.name;
    throw isa::Error(req.binary, where,
                     "the binary has no input named '" + name + "' (its inputs: " + known + ")");
  };
  platform::JobInputs inputs;
  for (const auto& [name, file] : req.inputs) {
    if (onlyOwn && !findInput(name))
      continue;
    const isa::IoEntry* entry = inputEntry(name, "--input " + name);
    inputs[name] = platform::packIo(*entry, elementsFor(*entry, readNpy(file), file), lanes);
  }
  for (const auto& [name, t] : req.input_tensors) {
    const isa::IoEntry* entry = inputEntry(name, "input " + name);
    inputs[name] = platform::packIo(*entry, elementsFor(*entry, t, "input " + name), lanes);
  }
  for (std::size_t i = 0; i < bin.io.size(); ++i) {
    const isa::IoEntry& io = bin.io[i];
    if (io.dir != isa::IoDir::Input || inputs.count(io.name))
      continue;
    if (req.fill_missing)
      inputs[io.name] =
          platform::packIo(io, elementsFor(io, req.fill_missing(io, i), "input " + io.name), lanes);
    else
      err << who << "warning: input '" << io.name << "' not given; it is all zeros\n";
  }
  return inputs;
}

/// Refuses output files (one per output of the binary under `req.out_dir`) that are
/// folders or equal an input, before the run.
void checkOutputFiles(const isa::Binary& bin, const RunRequest& req) {
  if (req.out_dir.empty())
    return;
  std::vector<std::string> outs, ins{req.binary, isa::IsaDescription::resolvedPath(req.isa)};
  for (const auto& io : bin.io)
    if (io.dir == isa::IoDir::Output) {
      outs.push_back(
          (std::filesystem::path(req.out_dir) / (npyFileStem(io.name) + ".npy")).string());
      checkOutputFile(outs.back(), "--out", true);
    }
  for (const auto& [name, file] : req.inputs)
    ins.push_back(file);
  checkNotSameFile(outs, ins);
}

/// The firmware's DMA_EXTENT rule (docs/firmware.md section 3), applied by the host to a
/// binary of a description this build has no firmware for: such a job runs on the engine
/// directly, and would otherwise fault (dram-out-of-range) where the firmware refuses.
void checkDmaExtent(const isa::Binary& bin, const isa::IsaDescription& desc, std::uint64_t window,
                    const std::string& file) {
  for (std::size_t i = 0; i < bin.code.size(); ++i)
    if (const auto end = isa::dmaDramEnd(desc, bin.code[i]); end && *end > window)
      throw isa::Error(file, "the host (no firmware build of this description)",
                       "refused the job: rule DMA_EXTENT (docs/firmware.md section 3): "
                       "instruction " +
                           std::to_string(i) + " (" + bin.code[i].name() + ") reaches DRAM byte " +
                           std::to_string(*end - 1) + ", past the job's DRAM window of " +
                           std::to_string(window) + " bytes");
}

/// The one check of every run, whatever runs it (ember-sim, each job of ember-sim
/// --jobs, ember-run's sim and rtl devices, the Python package through runLoadedBinary):
/// the inputs (names, shapes, element types, NaN), the output files, the window
/// (jobWindowBytes: --dram-window, else the memory map's extent) and the loader's check
/// of the memory map against it. The firmware's rules (docs/firmware.md section 3) then
/// run on the device, against the same window, for every run of a description with a
/// firmware build; the host applies the one rule the loader lacks (DMA_EXTENT) to the others.
/// Throws ember::Error naming the file and the place.
CheckedJob checkRun(const isa::Binary& bin, const isa::IsaDescription& desc, const RunRequest& req,
                    bool onlyOwnInputs, const std::string& who, std::ostream& err) {
  CheckedJob job;
  const unsigned lanes = unsigned(desc.memory(isa::mem::kAct).lanes());
  job.inputs = gatherInputs(bin, req, lanes, onlyOwnInputs, who, err);
  checkOutputFiles(bin, req);
  job.window = jobWindowBytes(bin, req.options.dram_window_bytes);
  platform::checkJob(desc, bin, job.inputs, job.window, req.binary);
  if (!firmwareSupports(desc))
    checkDmaExtent(bin, desc, job.window, req.binary);
  return job;
}

/// The device options of a run: the request's engine or platform, and each job started
/// with the run's options `opts` (the NPU's own cycle budget, progress) and `debug`'s
/// per-layer map when given. The firmware's watchdog is set to its maximum at submit
/// (submitChecked), so one budget rule holds for a single run and a job alike.
Device::Options deviceOptions(const RunRequest& req, const platform::Options& opts,
                              const std::vector<isa::DebugRange>* debug) {
  Device::Options d;
  d.engine = req.engine;
  d.platform = req.platform;
  d.prepare = [opts, debug](platform::Job& job, platform::Options& o) {
    if (debug)
      job.debug = *debug; // per-layer rows of the report
    o = opts;             // progress, the engine's own budget (the window is the job's)
  };
  return d;
}

std::uint32_t submitChecked(Session& session, const isa::Binary& bin, const CheckedJob& job) {
  return session.submit(bin, job.inputs, platform::kMaxCycleBudget, job.window);
}
std::uint32_t submitChecked(Session& session, isa::ElfFile&& file, const CheckedJob& job) {
  return session.submit(std::move(file), job.inputs, platform::kMaxCycleBudget, job.window);
}

/// Runs `bin` the way the hardware does: through the job ring of a runtime device, whose
/// control core runs the firmware (validation, registers, watchdog, completion) in front
/// of the engine (the SystemC model, or req.engine/req.platform). The result's DRAM
/// holds the outputs of a finished job. `file`, when given, is where `bin` (its tables)
/// was read from: the image comes from its bytes, which go (ElfFile::moveImage).
platform::Result runThroughRing(const isa::IsaDescription& desc, const isa::Binary& bin,
                                isa::ElfFile* file, const CheckedJob& job,
                                const platform::Options& opts, const RunRequest& req) {
  Device::Options dopts = deviceOptions(req, opts, &bin.debug);
  dopts.ring_slots = 1;
  // The ring, the image (at a huge page boundary for a file) and the window.
  dopts.dram_bytes = job.window + (file ? file->imageSize() : isa::elfImageSize(bin, desc)) +
                     (std::uint64_t(3) << 20);
  Device dev(desc, dopts);
  Session session(dev);
  const std::uint32_t id =
      file ? submitChecked(session, std::move(*file), job) : submitChecked(session, bin, job);
  std::optional<Completion> c;
  while (!(c = session.wait(id, std::chrono::hours(1)))) {
  }
  if (c->record.status == EMBER_JOB_REFUSED)
    throw isa::Error(req.binary, "the NPU firmware",
                     std::string("refused the job: rule ") + ruleName(c->record.detail) +
                         " (docs/firmware.md section 3)");
  if (!c->report)
    throw isa::Error(req.binary, "the NPU firmware", "ended the job with " + c->describe());
  platform::Result res;
  res.report = std::move(*c->report);
  res.report.platform =
      platform::JobCycles{c->platform_cycles, c->link_cycles, c->firmware_cycles, c->npu_cycles};
  for (const auto& io : bin.io)
    if (io.dir == isa::IoDir::Output && c->outputs.count(io.name))
      res.dram.write(io.dram_offset, c->outputs.at(io.name));
  return res;
}

void writeRunFiles(const RunRequest& req, const RunResult& out, const platform::Report& report) {
  // A faulted run's outputs are not results: none are written (report and trace are).
  if (!req.out_dir.empty() && !report.fault) {
    std::filesystem::create_directories(req.out_dir);
    for (const auto& [name, t] : out.outputs)
      writeNpy((std::filesystem::path(req.out_dir) / (npyFileStem(name) + ".npy")).string(), t);
  }
  if (!req.report_json.empty())
    platform::writeJsonFile(req.report_json, platform::toJson(report));
  if (!req.trace_json.empty())
    platform::writeJsonFile(req.trace_json, platform::toChromeTrace(report), -1);
}

/// Seconds before the first progress line: kProgressAfterSeconds, or $EMBER_PROGRESS_AFTER.
double progressAfterSeconds() {
  const char* env = std::getenv("EMBER_PROGRESS_AFTER");
  if (env && *env) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end && *end == '\0' && v >= 0 && v < 1e6)
      return v;
  }
  return kProgressAfterSeconds;
}

/// The progress callback of a run on a terminal: nothing for its first
/// progressAfterSeconds(), then "[DEVICE] cycle C, R/N instructions retired (P%)" at most
/// four times a second, overwriting itself; `printed` tells the caller to clear the line.
std::function<void(std::uint64_t, std::uint64_t, std::uint64_t)>
progressLine(const std::string& device, bool& printed) {
  const auto start = std::chrono::steady_clock::now();
  const auto after = std::chrono::duration<double>(progressAfterSeconds());
  auto last = start;
  return [=, &printed](std::uint64_t cycle, std::uint64_t retired, std::uint64_t total) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - start < after || (printed && now - last < std::chrono::milliseconds(250)))
      return;
    last = now;
    printed = true;
    std::fprintf(stderr, "\r[%s] cycle %llu, %llu/%llu instructions retired (%.0f%%)",
                 device.c_str(), (unsigned long long)cycle, (unsigned long long)retired,
                 (unsigned long long)total, total ? 100.0 * double(retired) / double(total) : 0.0);
    std::fflush(stderr);
  };
}

/// A --jobs run's request for job `k`: its binary, outputs under DIR/K/.
RunRequest jobRequest(const RunRequest& req, const std::string& file, std::size_t k) {
  RunRequest j = req;
  j.binary = file;
  if (!req.out_dir.empty())
    j.out_dir = (std::filesystem::path(req.out_dir) / std::to_string(k)).string();
  return j;
}

/// ember-sim --jobs: every --input name must be an input of at least one binary (a
/// single run refuses a name its binary lacks; a job ignores an input it has not).
void checkJobInputNames(const std::vector<isa::ElfFile>& bins, const RunRequest& req) {
  for (const auto& [name, file] : req.inputs) {
    std::string known;
    bool found = false;
    for (std::size_t k = 0; k < bins.size() && !found; ++k)
      for (const auto& io : bins[k].tables().io)
        if (io.dir == isa::IoDir::Input) {
          found = found || io.name == name;
          known += (known.empty() ? "" : ", ") + io.name + " (job " + std::to_string(k) + ")";
        }
    if (!found)
      throw Error("--input " + name + "=" + file,
                  "no binary of --jobs has an input named '" + name +
                      "' (their inputs: " + (known.empty() ? std::string("none") : known) + ")");
  }
}

/// Writes the outputs of finished job `k` to req.out_dir/K/.
void writeJobOutputs(const RunRequest& req, std::size_t k, const isa::Binary& bin,
                     const Completion& c, unsigned lanes) {
  if (req.out_dir.empty())
    return;
  const auto dir = std::filesystem::path(req.out_dir) / std::to_string(k);
  std::filesystem::create_directories(dir);
  for (const auto& io : bin.io)
    if (io.dir == isa::IoDir::Output)
      writeNpy((dir / (npyFileStem(io.name) + ".npy")).string(),
               tensorOf(io, platform::unpackIo(io, c.outputs.at(io.name).data(), lanes)));
}

/// runLoadedBinary, and runBinary with the file `file` the tables `loaded` were read from
/// (ElfFile::tables(): no code, no constants, enough for the job ring).
RunResult runLoaded(const isa::Binary& loaded, isa::ElfFile* file, const isa::IsaDescription& desc,
                    const RunRequest& req, std::ostream& err) {
  sim::Simulator simulator(desc);
  // Off the ring (a description without a firmware build) the host checks the code
  // (DMA_EXTENT) and builds the job itself: that takes the whole binary.
  const bool ring = firmwareSupports(desc);
  const isa::Binary whole = file && !ring ? file->binary(desc) : isa::Binary();
  const isa::Binary& bin = file && !ring ? whole : loaded;
  const unsigned lanes = unsigned(desc.memory(isa::mem::kAct).lanes());
  const CheckedJob job = checkRun(bin, desc, req, false, req.tool + ": ", err);
  platform::Options opts = req.options;
  opts.binary_name = req.binary;
  opts.dram_window_bytes = job.window;
  bool printed = false;
  if (req.progress && isatty(fileno(stderr)) && !opts.progress)
    opts.progress = progressLine(req.device, printed);
  // Through the job ring when the runtime has a firmware build of the description (the
  // shipped ones); another description's binary runs on the engine directly
  // (docs/firmware.md section 6), with the same window and budget.
  platform::Result res;
  if (ring) {
    res = runThroughRing(desc, bin, file, job, opts, req);
  } else {
    const platform::Job j = platform::makeJob(desc, bin, job.inputs, job.window, req.binary);
    res = req.engine ? req.engine(desc, j, opts) : simulator.run(j, opts);
  }
  if (printed)
    std::fprintf(stderr, "\r%70s\r", "");
  RunResult out;
  out.io = bin.io;
  for (const auto& io : bin.io)
    if (io.dir == isa::IoDir::Output)
      out.outputs.emplace_back(
          io.name,
          tensorOf(io, platform::unpackIo(io, res.dram.read(io.dram_offset, io.size_bytes).data(),
                                          lanes)));
  writeRunFiles(req, out, res.report);
  if (res.report.fault) {
    err << req.tool << ": " << req.binary << ": " << res.report.fault->message() << "\n";
    out.status = kExitNpuFault;
  }
  out.report = std::move(res.report);
  return out;
}

} // namespace

RunResult runLoadedBinary(const isa::Binary& bin, const isa::IsaDescription& desc,
                          const RunRequest& req, std::ostream& err) {
  return runLoaded(bin, nullptr, desc, req, err);
}

int runAndPrint(const RunRequest& req, std::ostream& out, std::ostream& err) {
  RunResult r = runBinary(req, err);
  if (req.table)
    out << platform::formatTable(r.report);
  return r.status;
}

int runJobs(const std::vector<std::string>& binaries, const RunRequest& req, std::ostream& out,
            std::ostream& err) {
  isa::IsaDescription desc = isa::IsaDescription::loadDefault(req.isa);
  const unsigned lanes = unsigned(desc.memory(isa::mem::kAct).lanes());
  auto jobName = [&](std::size_t k) {
    return "job " + std::to_string(k) + " (" + binaries[k] + ")";
  };
  // Every binary and input is read and checked, as a single run checks its own, before
  // the first job is submitted; an error names the job.
  std::vector<isa::ElfFile> bins;
  for (std::size_t k = 0; k < binaries.size(); ++k) {
    try {
      bins.emplace_back(binaries[k], desc);
    } catch (const Error& e) {
      throw Error(jobName(k), e.what());
    }
  }
  checkJobInputNames(bins, req);
  std::vector<CheckedJob> jobs;
  for (std::size_t k = 0; k < binaries.size(); ++k) {
    try {
      jobs.push_back(checkRun(bins[k].tables(), desc, jobRequest(req, binaries[k], k), true,
                              req.tool + ": " + jobName(k) + ": ", err));
    } catch (const Error& e) {
      throw Error(jobName(k), e.what());
    }
  }
  platform::Options opts = req.options;
  opts.progress = nullptr;
  Device dev(desc, deviceOptions(req, opts, nullptr));
  Session session(dev);
  std::vector<std::uint32_t> ids;
  int status = kExitOk;
  std::size_t next = 0, done = 0;
  // Keep the ring busy: submit while there is room, collect in order.
  while (done < bins.size()) {
    while (next < bins.size() && next - done < dev.ringSlots()) {
      try {
        ids.push_back(submitChecked(session, std::move(bins[next]), jobs[next]));
      } catch (const Error& e) {
        throw Error(jobName(next), e.what());
      }
      ++next;
    }
    std::optional<Completion> c;
    while (!(c = session.wait(ids[done], std::chrono::seconds(60))))
      err << req.tool << ": " << jobName(done) << " still running\n";
    out << "job " << done << " " << binaries[done] << ": " << c->describe() << ", "
        << c->npuCycles() << " cycles (" << c->platform_cycles << " on the platform: link "
        << c->link_cycles << " + firmware " << c->firmware_cycles << " + NPU " << c->npu_cycles
        << ")\n";
    if (c->report && c->report->fault)
      err << req.tool << ": " << jobName(done) << ": " << c->report->fault->message() << "\n";
    // The run's status is the first unfinished job's, as its single run's would be: 1 for
    // a job the firmware refused (bad input), 3 for a fault or a timeout.
    if (!c->ok() && status == kExitOk)
      status = c->record.status == EMBER_JOB_REFUSED ? kExitBadInput : kExitNpuFault;
    if (c->ok())
      writeJobOutputs(req, done, bins[done].tables(), *c, lanes);
    ++done;
  }
  return status;
}

} // namespace ember::runtime
