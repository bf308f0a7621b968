#pragma once
/// \file
/// Calibration profiles: what the float function computes on representative inputs,
/// and the choice of an activation range from it (docs/compiler/quantization.md).
///
/// A Profile holds, per tensor (placeholder name, node name, or "node:r" for result r >
/// 0): the minimum, the maximum and a histogram of 2048 bins over [-absmax, absmax]
/// merged across batches (re-binned when a later batch widens the range). It is built by
/// running the float function with the interpreter on calibration inputs, observing
/// every float result, and is saved/loaded as JSON so that a calibration can be reused.

#include "ember/backend/Backend.h"
#include "ember/graph/Graph.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ember {
namespace quant {

/// Statistics of one tensor over every calibration input.
struct TensorProfile {
  float min = 0, max = 0;
  float absMax = 0;                ///< the histogram covers [-absMax, absMax]
  uint64_t count = 0;              ///< elements recorded
  std::vector<uint64_t> histogram; ///< kBins counts (empty until the first record)
};

/// Per-tensor statistics of a calibration.
class Profile {
public:
  static constexpr int kBins = 2048;

  /// Merges the elements of a float tensor into the entry `name` (non-finite elements
  /// are ignored; a non-float tensor is an ember::Error).
  void record(const std::string& name, const Tensor& t);
  /// The entry of `name`, or nullptr.
  const TensorProfile* find(const std::string& name) const;
  const std::map<std::string, TensorProfile>& entries() const { return entries_; }
  /// Number of calibration inputs that were run.
  int64_t runs() const { return runs_; }
  void addRun() { ++runs_; }

  /// Writes the profile as JSON to `path` atomically.
  void save(const std::string& path) const;
  /// Reads a profile written by save(); ember::Error naming the file and the JSON path
  /// of anything malformed.
  static Profile load(const std::string& path);

private:
  std::map<std::string, TensorProfile> entries_;
  int64_t runs_ = 0;
};

/// The key under which result `r` of node `n` is profiled: its name, or "name:r".
std::string profileKey(const Node& n, unsigned r);

/// Runs `f` (float) with the interpreter on every input map and records every float
/// value it computes (inputs included).
Profile profileFunction(const Function& f, const std::vector<TensorMap>& inputs);

/// How an activation range is chosen from a profile entry.
enum class CalibrationMethod {
  MinMax,     ///< [min, max]
  Percentile, ///< the central `percentile` % of the histogram (equal tails dropped)
  KL,         ///< TensorRT-style entropy calibration: the threshold minimising KL(P || Q)
};

/// Parses "minmax" | "percentile" | "kl"; ember::Error listing them otherwise.
CalibrationMethod parseCalibrationMethod(const std::string& s);
const char* calibrationMethodName(CalibrationMethod m);

/// The real range [lo, hi] to quantize an entry with (always inside [min, max]).
/// `percentile` (in (0, 100]) is used by Percentile only.
std::pair<float, float> chooseRange(const TensorProfile& p, CalibrationMethod m,
                                    double percentile = 99.99);

/// Calibration inputs for the float function `f` from `spec`:
///   FILE.npy   one tensor: exactly the input's shape, or a batch along axis 0 split
///              into inputs of the placeholder's shape;
///   DIR        every .npy file of the folder, sorted by name, each as FILE.npy;
///   random:N   N inputs drawn from a seeded normal distribution (float inputs).
/// FILE and DIR need a function with one input (of the file's element kind); random:N
/// needs float32 inputs. Errors name the file.
std::vector<TensorMap> loadCalibration(const Function& f, const std::string& spec);

} // namespace quant
} // namespace ember
