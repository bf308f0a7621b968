#pragma once
/// \file
/// The cross-check of `ember-run --compare`: every device's outputs against the first
/// device's, as one table. Quantized runs must agree bit for bit and are also compared
/// with the float interpreter (cosine similarity, top-1 agreement), so a user sees both
/// "is the NPU exact?" and "how much did int8 cost?".

#include "ember/platform/Report.h"
#include "ember/tensor/Tensor.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ember::session {

/// The outputs of one device.
struct DeviceOutputs {
  std::string device;
  std::map<std::string, Tensor> outputs;
  double runSeconds = 0;               ///< Median wall time of a run.
  std::optional<platform::Report> npu; ///< Cycles and energy when the device is the NPU.
};

/// Cosine similarity of two float tensors of equal size (1 when both are zero; 0 when
/// only one is).
double cosineSimilarity(const Tensor& a, const Tensor& b);

/// Fraction of rows (last axis = classes) whose largest element is at the same index.
double top1Agreement(const Tensor& a, const Tensor& b);

/// What the comparison found.
struct CompareResult {
  std::string table;                 ///< The printed table.
  std::vector<std::string> mismatch; ///< "output 'y' on sim" for every disagreement.
};

/// Compares every device with `runs[0]` for each output in `outputNames`. `exact`:
/// quantized outputs must be equal bit for bit; otherwise within 1e-4 * max(1, max|ref|).
/// `floatRef` (optional): the float interpreter's outputs, for cosine and top-1.
CompareResult compareRuns(const std::vector<std::string>& outputNames,
                          const std::vector<DeviceOutputs>& runs, bool exact,
                          const std::map<std::string, Tensor>* floatRef);

/// Compares the NPU reports of two runs of one binary (the SystemC model and the RTL):
/// total cycles, every instruction's dispatch, take, start and end cycle, the per-engine
/// counters, fetch stalls, MACs, DRAM bytes, the energy (every component and the total,
/// to a relative 1e-9) and the fault record; two runs that fault alike compare their fault
/// records and the energy of what retired before the fault. Returns "" when equal,
/// else the first difference ("instr 1234 gemm: sim 5012-6085, rtl 5013-6086").
std::string compareNpuReports(const platform::Report& a, const std::string& an,
                              const platform::Report& b, const std::string& bn);

/// compareNpuReports over the NPU segments of two runs of one model, in order ("" when
/// every segment agrees).
std::string compareNpuRuns(const std::vector<platform::Report>& a, const std::string& an,
                           const std::vector<platform::Report>& b, const std::string& bn);

/// "timing A vs B: equal: N cycles, every instruction's ..." when `diff` is empty (N: the
/// cycles of `a`'s segments), else "timing A vs B: DIFF".
std::string timingVerdict(const std::vector<platform::Report>& a, const std::string& an,
                          const std::string& bn, const std::string& diff);

/// Every pair of runs that used the NPU (a non-empty `reports[i]`; `devices[i]` names run
/// i) compared with compareNpuRuns: one timingVerdict line per pair appended to `lines`,
/// every difference appended to `mismatch`.
void compareNpuPairs(const std::vector<std::string>& devices,
                     const std::vector<std::vector<platform::Report>>& reports, std::string& lines,
                     std::vector<std::string>& mismatch);

/// Throws one ember::Error for `--compare LIST` listing every disagreement (none: returns).
void throwIfDisagreements(const std::string& compare, const std::vector<std::string>& mismatch);

} // namespace ember::session
