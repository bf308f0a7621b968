// Helpers of ember-run: output names, random inputs, summaries, comparisons.
#include "ember/session/RunUtil.h"

#include "ember/support/Error.h"
#include "ember/support/Npy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace ember::session {

std::string sanitizeOutputName(const std::string& name) {
  return npyFileStem(name);
}

namespace {
/// SplitMix64: tiny, fast and fully specified, so random inputs are the same everywhere.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
} // namespace

Tensor randomTensor(const Type& t, uint64_t seed, uint64_t index) {
  Tensor out(Type(t.kind, t.dims));
  uint64_t state = seed * 0x100000001B3ull + index;
  for (int64_t i = 0; i < out.size(); ++i) {
    uint64_t r = splitmix64(state);
    switch (t.kind) {
    case ElemKind::Float32:
      // 24 random bits -> [0, 1) exactly representable, then [-1, 1).
      out.data<float>()[i] = static_cast<float>(r >> 40) * (2.0f / 16777216.0f) - 1.0f;
      break;
    case ElemKind::Bool:
      out.data<bool>()[i] = (r >> 63) != 0;
      break;
    default:
      out.setFromDouble(i, static_cast<double>(r >> 60));
      break;
    }
  }
  return out;
}

std::string summarize(const Tensor& t) {
  std::ostringstream os;
  os << elemKindName(t.kind()) << shapeToString(t.dims());
  if (t.size() == 0)
    return os.str() + "  (empty)";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = t.getAsDouble(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  os.precision(6);
  os << "  min " << lo << "  max " << hi << "  mean " << sum / static_cast<double>(t.size())
     << "  first [";
  for (int64_t i = 0; i < std::min<int64_t>(t.size(), 5); ++i)
    os << (i ? ", " : "") << t.getAsDouble(i);
  os << (t.size() > 5 ? ", ...]" : "]");
  return os.str();
}

std::vector<std::pair<int64_t, double>> topK(const Tensor& t, size_t k) {
  std::vector<std::pair<int64_t, double>> all;
  all.reserve(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i)
    all.emplace_back(i, t.getAsDouble(i));
  k = std::min(k, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const auto& a, const auto& b) {
                      return a.second > b.second || (a.second == b.second && a.first < b.first);
                    });
  all.resize(k);
  return all;
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  const double inf = std::numeric_limits<double>::infinity();
  if (a.kind() != b.kind() || a.dims() != b.dims())
    return inf;
  double m = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    double x = a.getAsDouble(i), y = b.getAsDouble(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (!(std::isnan(x) && std::isnan(y)))
        return inf;
      continue;
    }
    m = std::max(m, std::fabs(x - y));
  }
  return m;
}

double maxAbs(const Tensor& a) {
  double m = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs(a.getAsDouble(i)));
  return m;
}

void refuseNaN(const std::vector<std::pair<std::string, std::string>>& files,
               const std::map<std::string, Tensor>& inputs) {
  for (const auto& [name, t] : inputs) {
    if (t.kind() != ElemKind::Float32)
      continue;
    const float* v = t.data<float>();
    for (int64_t i = 0; i < t.size(); ++i)
      if (std::isnan(v[i])) {
        std::string where = "input '" + name + "'";
        for (const auto& [n, file] : files)
          if (n == name)
            where = file + " (--input " + name + ")";
        throw Error(where, "element " + std::to_string(i) +
                               " is NaN, which has no int8 value (the model runs in int8)");
      }
  }
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace ember::session
