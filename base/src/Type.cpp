#include "ember/tensor/Type.h"

#include "ember/support/Error.h"

#include <sstream>

namespace ember {

namespace {
struct KindInfo {
  ElemKind kind;
  const char* name;
  size_t size;
};
// In enum order (info() indexes it).
constexpr KindInfo kKinds[] = {
    {ElemKind::Float32, "float32", 4}, {ElemKind::Int8, "int8", 1},
    {ElemKind::Int32, "int32", 4},     {ElemKind::Int64, "int64", 8},
    {ElemKind::Bool, "bool", 1},       {ElemKind::Float64, "float64", 8},
    {ElemKind::Float16, "float16", 2}, {ElemKind::UInt8, "uint8", 1},
    {ElemKind::Int16, "int16", 2},     {ElemKind::UInt16, "uint16", 2},
    {ElemKind::UInt32, "uint32", 4},   {ElemKind::UInt64, "uint64", 8},
};
const KindInfo& info(ElemKind k) {
  return kKinds[static_cast<size_t>(k)];
}
} // namespace

size_t elemSize(ElemKind k) {
  return info(k).size;
}
const char* elemKindName(ElemKind k) {
  return info(k).name;
}

bool isCoreElemKind(ElemKind k) {
  return k <= ElemKind::Bool;
}
bool isFloatElemKind(ElemKind k) {
  return k == ElemKind::Float32 || k == ElemKind::Float64 || k == ElemKind::Float16;
}
bool isIntElemKind(ElemKind k) {
  return k != ElemKind::Bool && !isFloatElemKind(k);
}
const std::vector<ElemKind>& numericElemKinds() {
  static const std::vector<ElemKind> kinds = [] {
    std::vector<ElemKind> v;
    for (const auto& k : kKinds)
      if (k.kind != ElemKind::Bool)
        v.push_back(k.kind);
    return v;
  }();
  return kinds;
}

bool parseElemKind(const std::string& s, ElemKind* out) {
  for (const auto& k : kKinds) {
    if (s == k.name) {
      *out = k.kind;
      return true;
    }
  }
  return false;
}

int64_t numElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      throw Error("shape " + shapeToString(s) +
                  (d < 0 ? " has a negative dimension"
                         : " is too large (its element count overflows int64)"));
  return n;
}

std::string shapeToString(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i)
    os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

std::string Type::toString() const {
  std::ostringstream os;
  os << elemKindName(kind) << shapeToString(dims);
  if (quant.isQuantized()) {
    if (quant.scales.size() == 1 && quant.axis < 0) {
      os << "{s=" << quant.scales[0]
         << ",zp=" << (quant.zeroPoints.empty() ? 0 : quant.zeroPoints[0]) << '}';
    } else {
      os << "{per-channel axis=" << quant.axis << " n=" << quant.scales.size() << '}';
    }
  }
  return os.str();
}

} // namespace ember
