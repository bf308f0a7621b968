#include "ember/tensor/Tensor.h"

#include "ember/support/Error.h"

#include <sstream>

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

double Tensor::getAsDouble(int64_t i) const {
  const uint8_t* p = bytes_.data();
  switch (type_.kind) {
  case ElemKind::Float32:
    return reinterpret_cast<const float*>(p)[i];
  case ElemKind::Int8:
    return reinterpret_cast<const int8_t*>(p)[i];
  case ElemKind::Int32:
    return reinterpret_cast<const int32_t*>(p)[i];
  case ElemKind::Int64:
    return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
  case ElemKind::Bool:
    return p[i] ? 1.0 : 0.0;
  }
  return 0;
}

int64_t Tensor::getAsInt(int64_t i) const {
  const uint8_t* p = bytes_.data();
  switch (type_.kind) {
  case ElemKind::Float32:
    return static_cast<int64_t>(reinterpret_cast<const float*>(p)[i]);
  case ElemKind::Int8:
    return reinterpret_cast<const int8_t*>(p)[i];
  case ElemKind::Int32:
    return reinterpret_cast<const int32_t*>(p)[i];
  case ElemKind::Int64:
    return reinterpret_cast<const int64_t*>(p)[i];
  case ElemKind::Bool:
    return p[i] ? 1 : 0;
  }
  return 0;
}

void Tensor::setFromDouble(int64_t i, double v) {
  uint8_t* p = bytes_.data();
  switch (type_.kind) {
  case ElemKind::Float32:
    reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
    break;
  case ElemKind::Int8:
    reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v);
    break;
  case ElemKind::Int32:
    reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v);
    break;
  case ElemKind::Int64:
    reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v);
    break;
  case ElemKind::Bool:
    p[i] = v != 0.0;
    break;
  }
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
  if (k == ElemKind::Int64 && type_.kind != ElemKind::Float32) {
    for (int64_t i = 0; i < n; ++i)
      t.data<int64_t>()[i] = getAsInt(i);
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
