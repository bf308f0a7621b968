#include "ember/graph/Einsum.h"

#include "ember/support/Error.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace ember {

namespace {

[[noreturn]] void bad(const std::string& equation, const std::string& why) {
  throw Error("Einsum equation '" + equation + "': " + why);
}

/// One operand's term: letters, with kEllipsis where "..." stands.
constexpr int kEllipsis = -1;

std::vector<int> parseTerm(const std::string& eq, const std::string& term) {
  std::vector<int> out;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == ' ')
      continue;
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0)
        bad(eq, "a '.' that is not part of '...'");
      if (std::count(out.begin(), out.end(), kEllipsis))
        bad(eq, "two ellipses in one term");
      out.push_back(kEllipsis);
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)))
      bad(eq, std::string("unexpected character '") + c + "'");
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> splitTerms(const std::string& s) {
  std::vector<std::string> terms(1);
  for (char c : s) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  return terms;
}

} // namespace

EinsumPlan planEinsum(const std::string& equation, const std::vector<Shape>& shapes) {
  const size_t arrow = equation.find("->");
  const std::vector<std::string> terms = splitTerms(equation.substr(0, arrow));
  if (terms.size() != shapes.size())
    bad(equation, std::to_string(terms.size()) + " operand terms for " +
                      std::to_string(shapes.size()) + " operands");
  // Letters keep their character code as label; ellipsis dimensions get labels from 256
  // up, the last ellipsis dimension being 256.
  std::vector<std::vector<int>> parsed;
  std::vector<size_t> covered; // dimensions each operand's ellipsis stands for
  size_t ellipsisRank = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    parsed.push_back(parseTerm(equation, terms[i]));
    const size_t letters = static_cast<size_t>(
        std::count_if(parsed[i].begin(), parsed[i].end(), [](int l) { return l != kEllipsis; }));
    const bool hasEllipsis = letters != parsed[i].size();
    if (letters > shapes[i].size() || (!hasEllipsis && letters != shapes[i].size()))
      bad(equation, "term '" + terms[i] + "' does not match operand " + std::to_string(i) +
                        " of shape " + shapeToString(shapes[i]));
    covered.push_back(shapes[i].size() - letters);
    if (hasEllipsis)
      ellipsisRank = std::max(ellipsisRank, covered.back());
  }
  auto ellipsisLabels = [](size_t count) {
    std::vector<int> l;
    for (size_t k = count; k > 0; --k)
      l.push_back(256 + static_cast<int>(k - 1));
    return l;
  };
  EinsumPlan plan;
  std::map<int, int64_t> extent;
  std::map<int, int> uses;
  for (size_t i = 0; i < parsed.size(); ++i) {
    std::vector<int> labels;
    for (int l : parsed[i]) {
      if (l != kEllipsis) {
        labels.push_back(l);
        continue;
      }
      for (int e : ellipsisLabels(covered[i]))
        labels.push_back(e);
    }
    for (size_t d = 0; d < labels.size(); ++d) {
      const int64_t n = shapes[i][d];
      auto [it, fresh] = extent.emplace(labels[d], n);
      if (!fresh && it->second != n) {
        if (it->second == 1 && labels[d] >= 256)
          it->second = n;
        else if (!(n == 1 && labels[d] >= 256))
          bad(equation, "label '" + (labels[d] < 256 ? std::string(1, char(labels[d])) : "...") +
                            "' has extents " + std::to_string(it->second) + " and " +
                            std::to_string(n));
      }
    }
    for (int l : labels)
      ++uses[l];
    plan.operandLabels.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    for (int l : parseTerm(equation, equation.substr(arrow + 2))) {
      if (l == kEllipsis) {
        for (int e : ellipsisLabels(ellipsisRank))
          plan.outputLabels.push_back(e);
        continue;
      }
      if (!extent.count(l))
        bad(equation, std::string("output label '") + char(l) + "' is in no operand");
      if (std::count(plan.outputLabels.begin(), plan.outputLabels.end(), l))
        bad(equation, std::string("output label '") + char(l) + "' appears twice");
      plan.outputLabels.push_back(l);
    }
  } else {
    // Implicit output: the ellipsis dimensions, then the letters used once, sorted.
    plan.outputLabels = ellipsisLabels(ellipsisRank);
    for (const auto& [l, n] : uses)
      if (l < 256 && n == 1)
        plan.outputLabels.push_back(l);
  }
  int maxLabel = 0;
  for (const auto& [l, n] : extent)
    maxLabel = std::max(maxLabel, l);
  plan.extents.assign(static_cast<size_t>(maxLabel) + 1, 0);
  for (const auto& [l, n] : extent) {
    plan.extents[static_cast<size_t>(l)] = n;
    if (std::find(plan.outputLabels.begin(), plan.outputLabels.end(), l) == plan.outputLabels.end())
      plan.summedLabels.push_back(l);
  }
  return plan;
}

} // namespace ember
