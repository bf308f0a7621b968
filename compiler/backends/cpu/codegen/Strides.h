#pragma once
// Index boxes for the strided kernels (binary broadcast, strided copy, reductions): a
// shape walked with one stride list per operand, simplified to at most six dimensions.

#include "ember/support/Error.h"
#include "ember/tensor/Type.h"

#include <array>
#include <vector>

namespace ember::cpu {

/// Row-major strides (in elements) of a shape.
inline std::vector<int64_t> contiguousStrides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;)
    st[i - 1] = st[i] * s[i];
  return st;
}

/// Strides of `in` read as the numpy broadcast onto `out` (0 along broadcast axes).
inline std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  const std::vector<int64_t> c = contiguousStrides(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    st[off + i] = in[i] == 1 && out[off + i] != 1 ? 0 : c[i];
  return st;
}

/// A box of six dimensions (outermost first) and N stride lists.
template <size_t N> struct Box6 {
  std::vector<int64_t> dims;                   ///< 6 extents
  std::array<std::vector<int64_t>, N> strides; ///< 6 strides each
};

/// Drops extent-1 dimensions, merges neighbours that are contiguous for every operand,
/// and pads to six dimensions on the left; ember::Error if more than six remain.
template <size_t N>
Box6<N> simplifyBox(const Shape& dims, const std::array<std::vector<int64_t>, N>& strides) {
  std::vector<int64_t> d;
  std::array<std::vector<int64_t>, N> s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1)
      continue;
    bool merge = !d.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = s[k].back() == strides[k][i] * dims[i];
    if (merge) {
      d.back() *= dims[i];
      for (size_t k = 0; k < N; ++k)
        s[k].back() = strides[k][i];
      continue;
    }
    d.push_back(dims[i]);
    for (size_t k = 0; k < N; ++k)
      s[k].push_back(strides[k][i]);
  }
  if (d.size() > 6)
    throw Unsupported("more than six non-mergeable dimensions");
  Box6<N> box;
  box.dims.assign(6 - d.size(), 1);
  box.dims.insert(box.dims.end(), d.begin(), d.end());
  for (size_t k = 0; k < N; ++k) {
    box.strides[k].assign(6 - s[k].size(), 0);
    box.strides[k].insert(box.strides[k].end(), s[k].begin(), s[k].end());
  }
  return box;
}

} // namespace ember::cpu
