#pragma once
/// \file
/// Helpers shared by the interpreter's elementwise, reduction and data-movement kernels:
/// numpy-style broadcasting loops, row-major strides and element-kind dispatch.

#include "ember/graph/InferUtil.h"
#include "ember/graph/Node.h"
#include "ember/support/Error.h"
#include "ember/tensor/Tensor.h"

#include <array>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {
namespace kernels {

/// Row-major strides (in elements) of `dims`.
inline std::vector<int64_t> stridesOf(const Shape& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  // Wrapping (unsigned) products: an empty tensor may have huge extents beside its 0,
  // and its strides are never used; a non-empty one's are bounded by its element count.
  for (size_t i = dims.size(); i-- > 1;)
    s[i - 1] = static_cast<int64_t>(static_cast<uint64_t>(s[i]) * static_cast<uint64_t>(dims[i]));
  return s;
}

/// Strides of `in` seen through the broadcast to `out` (right-aligned; a dimension
/// of extent 1 that is broadcast gets stride 0).
inline std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0);
  const std::vector<int64_t> own = stridesOf(in);
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    s[off + i] = in[i] == 1 && out[off + i] != 1 ? 0 : own[i];
  return s;
}

/// Calls f(outIndex, offsets) for every element of `out`, in row-major order, where
/// offsets[k] = base[k] + sum over d of index[d] * strides[k][d]: a strided walk, the
/// common core of broadcasting, transposition, slicing and tiling. The innermost
/// dimension runs as a tight loop.
template <size_t N, typename F>
void forEachStrided(const Shape& out, const std::array<std::vector<int64_t>, N>& strides,
                    std::array<int64_t, N> base, F&& f) {
  const int64_t total = numElements(out);
  if (total == 0)
    return;
  if (out.empty()) {
    f(int64_t(0), base);
    return;
  }
  const size_t rank = out.size();
  const int64_t inner = out[rank - 1];
  std::vector<int64_t> counter(rank, 0);
  int64_t o = 0;
  while (o < total) {
    std::array<int64_t, N> idx = base;
    for (int64_t i = 0; i < inner; ++i) {
      f(o++, idx);
      for (size_t k = 0; k < N; ++k)
        idx[k] += strides[k][rank - 1];
    }
    // Advance the outer counter (dimensions 0..rank-2).
    for (size_t d = rank - 1; d-- > 0;) {
      for (size_t k = 0; k < N; ++k)
        base[k] += strides[k][d];
      if (++counter[d] < out[d])
        break;
      for (size_t k = 0; k < N; ++k)
        base[k] -= strides[k][d] * out[d];
      counter[d] = 0;
    }
  }
}

/// Calls f(outIndex, offsets) for every element of `out`, where offsets[k] is the flat
/// index of the element of input k (of shape ins[k], numpy-broadcast to `out`).
template <size_t N, typename F>
void forEachBroadcast(const Shape& out, const std::array<const Shape*, N>& ins, F&& f) {
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k)
    strides[k] = broadcastStrides(*ins[k], out);
  forEachStrided<N>(out, strides, std::array<int64_t, N>{}, std::forward<F>(f));
}

/// Type tag for kind dispatch.
template <typename T> struct TypeTag { using type = T; };

/// The core kinds (kNumeric, kAll) are what every backend handles; the "wide" masks add
/// the interpreter-only kinds (ElemKind after Bool). Float16 is widened to float by
/// runUnary/runBinary-style kernels (ember/tensor/Float16.h), so only kernels that
/// handle Float16 explicitly include kF16.
enum KindMask : unsigned {
  kF32 = 1,
  kI8 = 2,
  kI32 = 4,
  kI64 = 8,
  kBool = 16,
  kF64 = 32,
  kF16 = 64,
  kU8 = 128,
  kI16 = 256,
  kU16 = 512,
  kU32 = 1024,
  kU64 = 2048,
  kInts = kI8 | kI32 | kI64,
  kNumeric = kF32 | kInts,
  kAll = kNumeric | kBool,
  kWideInts = kInts | kU8 | kI16 | kU16 | kU32 | kU64,
  kWideNumeric = kF32 | kF64 | kWideInts,
  kWideAll = kWideNumeric | kBool,
};

/// Calls f(TypeTag<T>{}) with the C++ type of `k`. The `Kinds` bitmask restricts which
/// kinds are instantiated; others throw ember::Error naming `what`.
template <unsigned Kinds, typename F> auto dispatchKind(ElemKind k, const char* what, F&& f) {
  switch (k) {
  case ElemKind::Float32:
    if constexpr ((Kinds & kF32) != 0)
      return f(TypeTag<float>{});
    break;
  case ElemKind::Int8:
    if constexpr ((Kinds & kI8) != 0)
      return f(TypeTag<int8_t>{});
    break;
  case ElemKind::Int32:
    if constexpr ((Kinds & kI32) != 0)
      return f(TypeTag<int32_t>{});
    break;
  case ElemKind::Int64:
    if constexpr ((Kinds & kI64) != 0)
      return f(TypeTag<int64_t>{});
    break;
  case ElemKind::Bool:
    if constexpr ((Kinds & kBool) != 0)
      return f(TypeTag<bool>{});
    break;
  case ElemKind::Float64:
    if constexpr ((Kinds & kF64) != 0)
      return f(TypeTag<double>{});
    break;
  case ElemKind::Float16:
    if constexpr ((Kinds & kF16) != 0)
      return f(TypeTag<Float16>{});
    break;
  case ElemKind::UInt8:
    if constexpr ((Kinds & kU8) != 0)
      return f(TypeTag<uint8_t>{});
    break;
  case ElemKind::Int16:
    if constexpr ((Kinds & kI16) != 0)
      return f(TypeTag<int16_t>{});
    break;
  case ElemKind::UInt16:
    if constexpr ((Kinds & kU16) != 0)
      return f(TypeTag<uint16_t>{});
    break;
  case ElemKind::UInt32:
    if constexpr ((Kinds & kU32) != 0)
      return f(TypeTag<uint32_t>{});
    break;
  case ElemKind::UInt64:
    if constexpr ((Kinds & kU64) != 0)
      return f(TypeTag<uint64_t>{});
    break;
  }
  throw Error(std::string(what) + ": element kind " + elemKindName(k) + " is not supported");
}

/// Reads index i of an int32/int64 tensor, normalised into [0, extent); an index out of
/// [-extent, extent) is an ember::Error naming `what`.
inline int64_t indexAt(const Tensor& idx, int64_t i, int64_t extent, const char* what) {
  int64_t v = idx.getAsInt(i);
  if (v < -extent || v >= extent)
    throw Error(std::string(what) + " value " + std::to_string(v) +
                " is out of range for an axis of extent " + std::to_string(extent));
  return v < 0 ? v + extent : v;
}

/// Splits `dims` around `axis` into (outer, extent, inner) element counts (splitAtAxis,
/// as out-parameters).
inline void splitAround(const Shape& dims, size_t axis, int64_t* outer, int64_t* extent,
                        int64_t* inner) {
  const AxisSplit s = splitAtAxis(dims, int64_t(axis));
  *outer = s.outer;
  *extent = s.len;
  *inner = s.inner;
}

/// The output shape of a Reduce* node with attributes `a` on an input of shape `in`, with
/// the reduced axes kept as 1 (what the input broadcasts onto): attribute axes (possibly
/// negative), or every axis when they are empty unless noop_with_empty_axes.
inline Shape reducedKeptShape(const Attrs& a, const Shape& in) {
  const std::vector<bool> reduced = reducedAxes(a, in.size());
  Shape kept = in;
  for (size_t i = 0; i < in.size(); ++i)
    if (reduced[i])
      kept[i] = 1;
  return kept;
}

/// Converts a flat index into a multi-index of `dims`.
inline void unravel(int64_t flat, const Shape& dims, std::vector<int64_t>& idx) {
  idx.resize(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    idx[i] = dims[i] ? flat % dims[i] : 0;
    flat = dims[i] ? flat / dims[i] : 0;
  }
}

} // namespace kernels
} // namespace ember
