// Range choice from a profile (minmax, percentile, KL) and the calibration inputs of
// the tools (FILE.npy, DIR, random:N). See ember/quantization/Profile.h.
#include "ember/quantization/Profile.h"

#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <random>
#include <sys/stat.h>

namespace ember {
namespace quant {

CalibrationMethod parseCalibrationMethod(const std::string& s) {
  if (s == "minmax")
    return CalibrationMethod::MinMax;
  if (s == "percentile")
    return CalibrationMethod::Percentile;
  if (s == "kl")
    return CalibrationMethod::KL;
  throw Error("calibration method '" + s + "'", "unknown (expected minmax, percentile or kl)");
}

const char* calibrationMethodName(CalibrationMethod m) {
  switch (m) {
  case CalibrationMethod::MinMax:
    return "minmax";
  case CalibrationMethod::Percentile:
    return "percentile";
  case CalibrationMethod::KL:
    return "kl";
  }
  return "?";
}

namespace {

/// Central `percentile` %: drop (100 - p) / 2 % of the elements at each end.
std::pair<float, float> percentileRange(const TensorProfile& p, double percentile) {
  if (!(percentile > 0 && percentile <= 100))
    throw Error("percentile " + std::to_string(percentile) + " is outside (0, 100]");
  const std::vector<uint64_t>& h = p.histogram;
  const double width = 2.0 * p.absMax / Profile::kBins;
  const double tail = double(p.count) * (100.0 - percentile) / 200.0;
  double acc = 0;
  size_t lo = 0;
  while (lo + 1 < h.size() && acc + double(h[lo]) <= tail)
    acc += double(h[lo++]);
  acc = 0;
  size_t hi = h.size() - 1;
  while (hi > lo && acc + double(h[hi]) <= tail)
    acc += double(h[hi--]);
  const float l = static_cast<float>(-p.absMax + double(lo) * width);
  const float r = static_cast<float>(-p.absMax + double(hi + 1) * width);
  return {std::max(p.min, l), std::min(p.max, r)};
}

/// KL(P || Q) of two unnormalised distributions over the same bins (Q smoothed where it
/// is 0 and P is not, as TensorRT's calibrator does).
double klDivergence(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0, sq = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    sp += p[i];
    sq += q[i];
  }
  if (sp <= 0 || sq <= 0)
    return INFINITY;
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0)
      continue;
    const double qi = q[i] > 0 ? q[i] / sq : 1e-12;
    kl += (p[i] / sp) * std::log((p[i] / sp) / qi);
  }
  return kl;
}

/// TensorRT-style entropy calibration over |x|: the histogram folded around 0 (1024
/// bins of |x|); for every threshold bin i >= levels, P = the first i bins with the
/// outliers added to the last, Q = P's bins merged into `levels` quantization bins and
/// expanded back over the non-empty bins; the threshold minimising KL(P || Q) wins.
/// `levels` = 128 for a tensor of both signs (one half of int8), 256 for a one-signed one.
std::pair<float, float> klRange(const TensorProfile& p) {
  const size_t half = Profile::kBins / 2;
  std::vector<double> folded(half, 0);
  for (size_t i = 0; i < half; ++i)
    folded[i] = double(p.histogram[half + i]) + double(p.histogram[half - 1 - i]);
  const size_t levels = (p.min < 0 && p.max > 0) ? 128 : 256;
  double best = INFINITY;
  size_t bestI = half;
  std::vector<double> ref, q;
  for (size_t i = levels; i <= half; ++i) {
    ref.assign(folded.begin(), folded.begin() + long(i));
    for (size_t t = i; t < half; ++t)
      ref[i - 1] += folded[t];
    q.assign(i, 0);
    const double merged = double(i) / double(levels);
    for (size_t j = 0; j < levels; ++j) {
      const size_t start = size_t(double(j) * merged);
      const size_t end = j + 1 == levels ? i : size_t(double(j + 1) * merged);
      double total = 0;
      size_t nonzero = 0;
      for (size_t t = start; t < end; ++t) {
        total += folded[t];
        nonzero += folded[t] > 0;
      }
      for (size_t t = start; t < end; ++t)
        q[t] = folded[t] > 0 ? total / double(nonzero) : 0;
    }
    const double kl = klDivergence(ref, q);
    if (kl < best) {
      best = kl;
      bestI = i;
    }
  }
  const float threshold = static_cast<float>((double(bestI) + 0.5) * p.absMax / double(half));
  return {std::max(p.min, -threshold), std::min(p.max, threshold)};
}

} // namespace

std::pair<float, float> chooseRange(const TensorProfile& p, CalibrationMethod m,
                                    double percentile) {
  if (p.histogram.size() != size_t(Profile::kBins) || p.count == 0 ||
      m == CalibrationMethod::MinMax)
    return {p.min, p.max};
  if (m == CalibrationMethod::Percentile)
    return percentileRange(p, percentile);
  return klRange(p);
}

// ---- calibration inputs ------------------------------------------------------------

namespace {

/// The one input of f (FILE / DIR specs).
Node* singleInput(const Function& f, const std::string& spec) {
  std::vector<Node*> ins = f.inputs();
  if (ins.size() != 1)
    throw Error("calibration '" + spec + "'",
                "a .npy calibration needs a function with exactly one input (this one has " +
                    std::to_string(ins.size()) + "); use random:N");
  return ins[0];
}

/// Splits the tensor of `file` into inputs of `ph`'s shape.
void appendFromFile(const std::string& file, const Node& ph, std::vector<TensorMap>& out) {
  Tensor t = readNpy(file);
  const Shape& want = ph.resultType().dims;
  if (t.kind() != ph.resultType().kind)
    throw Error(file, "calibration data is " + t.type().toString() + ", input '" + ph.name() +
                          "' expects " + elemKindName(ph.resultType().kind));
  const int64_t one = numElements(want);
  const Shape& d = t.dims();
  bool ok = d == want;
  if (!ok && d.size() == want.size() + 1)
    ok = Shape(d.begin() + 1, d.end()) == want;
  if (!ok && d.size() == want.size() && !want.empty() && want[0] > 0 &&
      Shape(d.begin() + 1, d.end()) == Shape(want.begin() + 1, want.end()))
    ok = d[0] % want[0] == 0;
  if (!ok || one == 0)
    throw Error(file, "shape " + shapeToString(d) + " is neither input '" + ph.name() +
                          "''s shape " + shapeToString(want) + " nor a batch of it along axis 0");
  // A NaN or infinity has no range to calibrate: the scales would come from nothing.
  if (t.kind() == ElemKind::Float32)
    for (int64_t k = 0; k < t.size(); ++k)
      if (!std::isfinite(t.data<float>()[k]))
        throw Error(file, "calibration data for input '" + ph.name() + "' holds " +
                              (std::isnan(t.data<float>()[k]) ? "NaN" : "an infinity") +
                              " (element " + std::to_string(k) +
                              "): calibration needs finite values");
  for (int64_t at = 0; at < t.size(); at += one) {
    Tensor piece(t.kind(), want);
    const size_t es = elemSize(t.kind());
    std::copy(t.raw() + size_t(at) * es, t.raw() + size_t(at + one) * es, piece.raw());
    out.push_back({{ph.name(), std::move(piece)}});
  }
}

std::vector<TensorMap> randomInputs(const Function& f, const std::string& spec, int64_t n) {
  std::vector<TensorMap> out;
  for (int64_t i = 0; i < n; ++i) {
    std::mt19937 gen(static_cast<uint32_t>(1234 + i));
    std::normal_distribution<float> normal(0.f, 1.f);
    TensorMap m;
    for (Node* p : f.inputs()) {
      if (p->resultType().kind != ElemKind::Float32)
        throw Error("calibration '" + spec + "'", "input '" + p->name() + "' is " +
                                                      p->resultType().toString() +
                                                      ": random calibration makes float32 only");
      Tensor t(ElemKind::Float32, p->resultType().dims);
      for (int64_t k = 0; k < t.size(); ++k)
        t.data<float>()[k] = normal(gen);
      m[p->name()] = std::move(t);
    }
    out.push_back(std::move(m));
  }
  return out;
}

} // namespace

std::vector<TensorMap> loadCalibration(const Function& f, const std::string& spec) {
  const std::string randomPrefix = "random:";
  if (spec.compare(0, randomPrefix.size(), randomPrefix) == 0) {
    const std::string num = spec.substr(randomPrefix.size());
    char* end = nullptr;
    const long long n = std::strtoll(num.c_str(), &end, 10);
    if (num.empty() || *end != '\0' || n < 1 || n > 100000)
      throw Error("calibration '" + spec + "'", "expected random:N with N in 1..100000");
    return randomInputs(f, spec, n);
  }
  struct stat st;
  if (stat(spec.c_str(), &st) != 0)
    throw Error(spec, "no such calibration file or folder");
  const Node* ph = singleInput(f, spec);
  std::vector<TensorMap> out;
  if (!S_ISDIR(st.st_mode)) {
    appendFromFile(spec, *ph, out);
    return out;
  }
  std::vector<std::string> files;
  if (DIR* dir = opendir(spec.c_str())) {
    while (dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
        files.push_back(spec + "/" + name);
    }
    closedir(dir);
  } else {
    throw Error(spec, "cannot open the calibration folder");
  }
  std::sort(files.begin(), files.end());
  if (files.empty())
    throw Error(spec, "the calibration folder holds no .npy file");
  for (const std::string& file : files)
    appendFromFile(file, *ph, out);
  return out;
}

} // namespace quant
} // namespace ember
