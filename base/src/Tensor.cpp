#include "ember/tensor/Tensor.h"

#include "ember/support/Error.h"

#include <sstream>
#include <type_traits>

namespace ember {

void Tensor::checkKind(ElemKind k) const {
  if (k != type_.kind)
    throw Error("tensor", std::string("element kind is ") + elemKindName(type_.kind) +
                              ", accessed as " + elemKindName(k));
}

void Tensor::checkCount(size_t n) const {
  if (static_cast<int64_t>(n) != size())
    throw Error("tensor", "shape " + shapeToString(dims()) + " holds " + std::to_string(size()) +
                              " elements, given " + std::to_string(n));
}

namespace {

/// Calls f(T{}) with the C++ element type of `k`.
template <typename F> auto visitKind(ElemKind k, F&& f) {
  switch (k) {
  case ElemKind::Float32:
    return f(float{});
  case ElemKind::Int8:
    return f(int8_t{});
  case ElemKind::Int32:
    return f(int32_t{});
  case ElemKind::Int64:
    return f(int64_t{});
  case ElemKind::Bool:
    return f(bool{});
  case ElemKind::Float64:
    return f(double{});
  case ElemKind::Float16:
    return f(Float16{});
  case ElemKind::UInt8:
    return f(uint8_t{});
  case ElemKind::Int16:
    return f(int16_t{});
  case ElemKind::UInt16:
    return f(uint16_t{});
  case ElemKind::UInt32:
    return f(uint32_t{});
  case ElemKind::UInt64:
    return f(uint64_t{});
  }
  throw Error("tensor", "invalid element kind " + std::to_string(static_cast<int>(k)));
}

} // namespace

double Tensor::getAsDouble(int64_t i) const {
  return visitKind(type_.kind, [&](auto tag) -> double {
    using T = decltype(tag);
    const T v = reinterpret_cast<const T*>(bytes_.data())[i];
    if constexpr (std::is_same_v<T, Float16>)
      return v.toDouble();
    else
      return static_cast<double>(v);
  });
}

int64_t Tensor::getAsInt(int64_t i) const {
  return visitKind(type_.kind, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    const T v = reinterpret_cast<const T*>(bytes_.data())[i];
    if constexpr (std::is_same_v<T, Float16>)
      return static_cast<int64_t>(v.toDouble());
    else
      return static_cast<int64_t>(v); // uint64 above INT64_MAX wraps
  });
}

void Tensor::setFromDouble(int64_t i, double v) {
  visitKind(type_.kind, [&](auto tag) {
    using T = decltype(tag);
    T* p = reinterpret_cast<T*>(bytes_.data());
    if constexpr (std::is_same_v<T, Float16>)
      p[i] = Float16(v);
    else if constexpr (std::is_same_v<T, bool>)
      p[i] = v != 0.0;
    else
      p[i] = static_cast<T>(v);
  });
}

void Tensor::setFromInt(int64_t i, int64_t v) {
  visitKind(type_.kind, [&](auto tag) {
    using T = decltype(tag);
    T* p = reinterpret_cast<T*>(bytes_.data());
    if constexpr (std::is_same_v<T, Float16>)
      p[i] = Float16(static_cast<double>(v));
    else if constexpr (std::is_same_v<T, bool>)
      p[i] = v != 0;
    else if constexpr (std::is_integral_v<T>)
      p[i] = static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(v)));
    else
      p[i] = static_cast<T>(v);
  });
}

Tensor Tensor::reshaped(Shape dims) const {
  if (numElements(dims) != size())
    throw Error("tensor",
                "cannot reshape " + shapeToString(this->dims()) + " to " + shapeToString(dims));
  Tensor t = *this;
  t.type_.dims = std::move(dims);
  return t;
}

Tensor Tensor::convertTo(ElemKind k) const {
  Tensor t(Type(k, dims()));
  const int64_t n = size();
  if (isIntElemKind(k) && !isFloatElemKind(type_.kind)) {
    for (int64_t i = 0; i < n; ++i)
      t.setFromInt(i, getAsInt(i));
  } else if (k == ElemKind::Bool) {
    for (int64_t i = 0; i < n; ++i)
      t.raw()[i] = getAsDouble(i) != 0.0;
  } else {
    for (int64_t i = 0; i < n; ++i)
      t.setFromDouble(i, getAsDouble(i));
  }
  return t;
}

std::string Tensor::summary(size_t maxValues) const {
  std::ostringstream os;
  os << type_.toString() << " {";
  const int64_t n = std::min<int64_t>(size(), static_cast<int64_t>(maxValues));
  for (int64_t i = 0; i < n; ++i)
    os << (i ? ", " : "") << getAsDouble(i);
  if (n < size())
    os << ", ...";
  os << '}';
  return os.str();
}

} // namespace ember
