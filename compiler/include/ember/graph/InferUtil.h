#pragma once
/// \file
/// Small helpers shared by the type inference functions of compiler/graph/ops.

#include "ember/graph/Node.h"
#include "ember/support/Error.h"

namespace ember {

/// Numpy-style broadcast of two shapes; throws ember::Error when incompatible.
Shape broadcastShapes(const Shape& a, const Shape& b);

/// The axes a Reduce* node with attributes `a` reduces on an input of rank `rank`:
/// attribute axes (possibly negative); absent or empty means all axes unless
/// noop_with_empty_axes. Throws for an axis out of range or listed twice.
std::vector<bool> reducedAxes(const Attrs& a, size_t rank);

/// Whether a MatMul of `a` [..., M, K] by `b` has one of the two forms without batch
/// broadcasting that the int8 MatMul kernels take: b [K, N] (a's batch dimensions fold
/// into rows), or b [..., K, N] with exactly a's batch dimensions.
bool isUnbroadcastMatMul(const Shape& a, const Shape& b);

/// Whether `s` broadcasts to `target` unidirectionally (numpy rules, right-aligned).
bool broadcastsTo(const Shape& s, const Shape& target);

/// Maps a possibly negative axis into [0, rank); throws when out of range.
int64_t normalizeAxis(int64_t axis, size_t rank, const char* what = "axis");

/// A shape seen as outer x len x inner around one axis: the lines an operator along
/// that axis (Softmax, ...) walks, `len` elements at stride `inner`.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
/// The split of `dims` at `axis` (possibly negative; throws when out of range).
AxisSplit splitAtAxis(const Shape& dims, int64_t axis);

/// The lines a LayerNormalization or ChannelLayerNormalization node of kind `kind` and
/// attributes `a` normalises on an input of shape `x`, each `len` elements at stride
/// `inner` (docs/compiler/passes.md, "Layout regions"): LayerNormalization the dimensions
/// from its axis on, one contiguous line (inner 1) per index of the dimensions before;
/// ChannelLayerNormalization axis 1, one line per (n, d...) position (the split at axis
/// 1). The one place both kinds' kernels, quantizer rules and layers take them from.
AxisSplit layerNormLines(NodeKind kind, const Shape& x, const Attrs& a);

/// Throws unless v's element kind is one of `kinds`.
void requireKind(const NodeValue& v, const std::vector<ElemKind>& kinds, const char* operand);

/// Every numeric kind but Float16 (which only Cast, Max/Min/Mod, comparisons and data
/// movement take): what the interpreter's arithmetic computes on.
const std::vector<ElemKind>& wideNumericKinds();
/// Float32 and Float64.
const std::vector<ElemKind>& wideFloatKinds();

/// Throws unless v has the given rank.
void requireRank(const NodeValue& v, size_t rank, const char* operand);

/// Throws with "REASON" built from parts.
[[noreturn]] void inferError(const std::string& reason);

/// a + b and a * b of sizes computed from attributes; throw "WHAT overflows" instead of
/// wrapping around.
int64_t checkedAdd(int64_t a, int64_t b, const std::string& what);
int64_t checkedMul(int64_t a, int64_t b, const std::string& what);

} // namespace ember
