#pragma once
/// \file
/// Element kinds, shapes, quantization parameters and tensor types of the graph IR.
///
/// Every value in a graph is strongly typed: element kind + static shape + (for int8
/// and int32 quantized values) the quantization parameters, so that the numerics
/// contract of docs/numerics.md can be checked on the type alone.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

/// Element kinds the IR knows. Float32 is the float reference; Int8/Int32 carry
/// quantization parameters when quantized; Int64 and Bool exist for shape arithmetic,
/// indices and masks as ONNX uses them. The kinds after Bool (float64, float16 and the
/// other integer widths) are the rest of ONNX's numeric types: the importer and the
/// interpreter take them; the cpu and NPU backends refuse nodes that use them.
enum class ElemKind : uint8_t {
  Float32,
  Int8,
  Int32,
  Int64,
  Bool,
  Float64,
  Float16,
  UInt8,
  Int16,
  UInt16,
  UInt32,
  UInt64,
};

/// Whether `k` is one of the kinds every backend handles (Float32, Int8, Int32, Int64,
/// Bool), as opposed to the interpreter-only ones.
bool isCoreElemKind(ElemKind k);
/// Whether `k` is a floating-point kind (Float32, Float64, Float16).
bool isFloatElemKind(ElemKind k);
/// Whether `k` is an integer kind, signed or not (not Bool).
bool isIntElemKind(ElemKind k);
/// Every kind but Bool, in enum order.
const std::vector<ElemKind>& numericElemKinds();

/// Size in bytes of one element of `k`.
size_t elemSize(ElemKind k);
/// Lower-case name ("float32", "int8", ...), as printed in dumps and errors.
const char* elemKindName(ElemKind k);
/// Parses a name produced by elemKindName; returns false if unknown.
bool parseElemKind(const std::string& s, ElemKind* out);

using Shape = std::vector<int64_t>;

/// Number of elements of a shape (1 for a scalar). Throws ember::Error when a dimension
/// is negative or the count overflows int64 (shapes can come from attacker-controlled
/// attributes).
int64_t numElements(const Shape& s);
/// The most elements a value may have (8 GiB of float32): a node whose inferred result
/// is larger is an error when it is created, before anything is allocated.
constexpr int64_t kMaxTensorElements = int64_t(1) << 31;
/// "[1, 3, 224, 224]".
std::string shapeToString(const Shape& s);

/// Quantization of a tensor: real = scale * (q - zeroPoint).
/// Empty `scales` means "not quantized". One scale = per tensor; several = per channel
/// along `axis` (weights: symmetric, zero points all 0).
struct QuantParams {
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
  int axis = -1;

  bool isQuantized() const { return !scales.empty(); }
  bool isPerChannel() const { return scales.size() > 1 || axis >= 0; }
  bool operator==(const QuantParams& o) const {
    return scales == o.scales && zeroPoints == o.zeroPoints && axis == o.axis;
  }
  bool operator!=(const QuantParams& o) const { return !(*this == o); }
};

/// The type of one value: element kind, shape, quantization.
struct Type {
  ElemKind kind = ElemKind::Float32;
  Shape dims;
  QuantParams quant;

  Type() = default;
  Type(ElemKind k, Shape d) : kind(k), dims(std::move(d)) {}
  Type(ElemKind k, Shape d, QuantParams q) : kind(k), dims(std::move(d)), quant(std::move(q)) {}

  size_t rank() const { return dims.size(); }
  /// Int8 with one scale and one zero point (what the int8 activations kernels take).
  bool isPerTensorInt8() const {
    return kind == ElemKind::Int8 && quant.scales.size() == 1 && quant.zeroPoints.size() == 1 &&
           quant.axis < 0;
  }
  int64_t size() const { return numElements(dims); }
  size_t sizeInBytes() const { return static_cast<size_t>(size()) * elemSize(kind); }
  /// "float32[1, 3, 224, 224]" or "int8[1, 64]{s=0.1,zp=-3}".
  std::string toString() const;

  bool operator==(const Type& o) const {
    return kind == o.kind && dims == o.dims && quant == o.quant;
  }
  bool operator!=(const Type& o) const { return !(*this == o); }
};

} // namespace ember
