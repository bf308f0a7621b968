#pragma once
/// \file
/// A dense, owning, row-major (C order) tensor: the payload of constants, the values
/// the interpreter computes, and what .npy files hold.

#include "ember/tensor/Float16.h"
#include "ember/tensor/Type.h"

#include <cstring>
#include <string>
#include <vector>

namespace ember {

/// Maps a C++ element type to its ElemKind (bool is stored as one byte).
template <typename T> struct ElemKindOf;
template <> struct ElemKindOf<float> { static constexpr ElemKind value = ElemKind::Float32; };
template <> struct ElemKindOf<int8_t> { static constexpr ElemKind value = ElemKind::Int8; };
template <> struct ElemKindOf<int32_t> { static constexpr ElemKind value = ElemKind::Int32; };
template <> struct ElemKindOf<int64_t> { static constexpr ElemKind value = ElemKind::Int64; };
template <> struct ElemKindOf<bool> { static constexpr ElemKind value = ElemKind::Bool; };
template <> struct ElemKindOf<double> { static constexpr ElemKind value = ElemKind::Float64; };
template <> struct ElemKindOf<Float16> { static constexpr ElemKind value = ElemKind::Float16; };
template <> struct ElemKindOf<uint8_t> { static constexpr ElemKind value = ElemKind::UInt8; };
template <> struct ElemKindOf<int16_t> { static constexpr ElemKind value = ElemKind::Int16; };
template <> struct ElemKindOf<uint16_t> { static constexpr ElemKind value = ElemKind::UInt16; };
template <> struct ElemKindOf<uint32_t> { static constexpr ElemKind value = ElemKind::UInt32; };
template <> struct ElemKindOf<uint64_t> { static constexpr ElemKind value = ElemKind::UInt64; };

/// Owning tensor with a Type; elements are zero-initialised.
class Tensor {
public:
  Tensor() = default;
  explicit Tensor(Type t) : type_(std::move(t)), bytes_(type_.sizeInBytes()) {}
  Tensor(ElemKind k, Shape dims) : Tensor(Type(k, std::move(dims))) {}

  /// A tensor of kind T with the given shape and values (values.size() == numElements).
  template <typename T> static Tensor fromVector(Shape dims, const std::vector<T>& values);
  /// A scalar-shaped ({}) tensor.
  template <typename T> static Tensor scalar(T v) { return fromVector<T>({}, {v}); }

  const Type& type() const { return type_; }
  Type& mutableType() { return type_; }
  ElemKind kind() const { return type_.kind; }
  const Shape& dims() const { return type_.dims; }
  int64_t size() const { return type_.size(); }
  size_t sizeInBytes() const { return bytes_.size(); }

  /// Raw bytes (sizeInBytes() long).
  uint8_t* raw() { return bytes_.data(); }
  const uint8_t* raw() const { return bytes_.data(); }

  /// Typed element pointer; T must match kind() (checked, throws ember::Error).
  template <typename T> T* data() {
    checkKind(ElemKindOf<T>::value);
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T> const T* data() const {
    checkKind(ElemKindOf<T>::value);
    return reinterpret_cast<const T*>(bytes_.data());
  }
  template <typename T> std::vector<T> toVector() const {
    const T* p = data<T>();
    return std::vector<T>(p, p + size());
  }

  /// Element i converted to double / int64 whatever the kind (for generic code,
  /// attributes and shape arithmetic; not for hot loops).
  double getAsDouble(int64_t i) const;
  int64_t getAsInt(int64_t i) const;
  /// Element i set from a double (converted to kind(), truncating toward zero for ints;
  /// rounding to nearest even for float16).
  void setFromDouble(int64_t i, double v);
  /// Element i set from an integer (wrapped to the kind's width for integer kinds).
  void setFromInt(int64_t i, int64_t v);

  /// Same bytes, new shape of the same number of elements.
  Tensor reshaped(Shape dims) const;
  /// Converts every element to kind k (C++ conversion rules; bool = value != 0; integer
  /// to integer wraps to the new width, as ONNX's Cast; floats to float16 round to
  /// nearest even).
  Tensor convertTo(ElemKind k) const;

  /// Bitwise equality of type and contents.
  bool operator==(const Tensor& o) const { return type_ == o.type_ && bytes_ == o.bytes_; }
  bool operator!=(const Tensor& o) const { return !(*this == o); }

  /// A short human summary: type and the first few values.
  std::string summary(size_t maxValues = 8) const;

private:
  void checkKind(ElemKind k) const;
  void checkCount(size_t n) const;

  Type type_;
  std::vector<uint8_t> bytes_;
};

template <typename T> Tensor Tensor::fromVector(Shape dims, const std::vector<T>& values) {
  Tensor t(ElemKindOf<T>::value, std::move(dims));
  t.checkCount(values.size());
  T* p = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i)
    p[i] = values[i];
  return t;
}

} // namespace ember
