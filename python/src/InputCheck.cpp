// NumPy arrays into Tensors, validated before any copy (InputCheck.h).
#include "InputCheck.h"

#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace py = pybind11;

namespace ember::python {
namespace {

std::string shapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

/// The array of `value` without a copy where it already is one (numpy.asarray).
py::array asArray(const std::string& where, py::handle value) {
  py::array a = py::array::ensure(value);
  if (!a) // ensure() clears NumPy's error (a ragged list, an object it cannot convert)
    throw Error(where, "is not an array of numbers (NumPy cannot convert a " +
                           std::string(py::str(py::type::handle_of(value).attr("__name__"))) +
                           " to one)");
  return a;
}

/// The element kind of `a`'s dtype, or an ember::Error naming `where`.
ElemKind kindOf(const std::string& where, const py::array& a) {
  const py::dtype dt = a.dtype();
  const char kind = dt.kind();
  const std::string name = py::str(dt.attr("name"));
  ElemKind k = ElemKind::Float32;
  const bool numeric = kind == 'f' || kind == 'i' || kind == 'u' || kind == 'b';
  if (numeric && name == "bool")
    k = ElemKind::Bool;
  else if (!numeric || !parseElemKind(name, &k))
    throw Error(where, "NumPy dtype " + name +
                           " is not one Ember takes (float32/64/16, int8/16/32/64, "
                           "uint8/16/32/64, bool); convert with .astype(numpy.float32)");
  if (static_cast<size_t>(dt.itemsize()) != elemSize(k))
    throw Error(where, "NumPy dtype " + name + " has " + std::to_string(dt.itemsize()) +
                           "-byte elements, Ember's " + elemKindName(k) + " " +
                           std::to_string(elemSize(k)));
  return k;
}

std::vector<int64_t> dimsOf(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

/// The element count of `dims`, or -1 when it is negative or overflows int64.
int64_t countOf(const std::vector<int64_t>& dims) {
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
    return -1;
  if (std::find(dims.begin(), dims.end(), 0) != dims.end())
    return 0;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (n > std::numeric_limits<int64_t>::max() / d)
      return -1;
    n *= d;
  }
  return n;
}

/// Calls f(element pointer, flat index) for every element of `a` in C order, following
/// its strides (negative, zero or unaligned ones included).
template <class F> void forEachElement(const py::array& a, F&& f) {
  const auto nd = static_cast<size_t>(a.ndim());
  const int64_t n = countOf(dimsOf(a));
  if (n <= 0)
    return;
  const auto* base = static_cast<const char*>(a.data());
  std::vector<py::ssize_t> index(nd, 0);
  const char* p = base;
  for (int64_t i = 0; i < n; ++i) {
    f(p, i);
    for (size_t d = nd; d-- > 0;) {
      if (++index[d] < a.shape(static_cast<py::ssize_t>(d))) {
        p += a.strides(static_cast<py::ssize_t>(d));
        break;
      }
      p -= a.strides(static_cast<py::ssize_t>(d)) * (index[d] - 1);
      index[d] = 0;
    }
  }
}

/// The first NaN of a native-order floating array, or -1.
int64_t firstNaN(const py::array& a, ElemKind k) {
  int64_t found = -1;
  forEachElement(a, [&](const char* p, int64_t i) {
    if (found >= 0)
      return;
    bool nan = false;
    if (k == ElemKind::Float32) {
      float v;
      std::memcpy(&v, p, sizeof v);
      nan = std::isnan(v);
    } else if (k == ElemKind::Float64) {
      double v;
      std::memcpy(&v, p, sizeof v);
      nan = std::isnan(v);
    } else if (k == ElemKind::Float16) {
      std::uint16_t h;
      std::memcpy(&h, p, sizeof h);
      nan = (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
    }
    if (nan)
      found = i;
  });
  return found;
}

/// `a` (already validated: dtype, shape, size) in native byte order and, when `to` is
/// given, converted to it by NumPy. Both are copies of the validated array only.
py::array normalized(const std::string& where, py::array a, const char* to = nullptr) {
  py::object dt = a.dtype();
  if (to)
    dt = py::dtype(to);
  else if (!a.dtype().attr("isnative").cast<bool>())
    dt = a.dtype().attr("newbyteorder")("=");
  else
    return a;
  py::object converted = a.attr("astype")(dt);
  py::array out = py::array::ensure(converted);
  if (!out)
    throw Error(where, "could not be converted to " + std::string(py::str(dt)));
  return out;
}

/// Whether `dims` differs from the program's shape only where the model leaves a
/// dimension unknown.
bool otherShapeFits(const InputSpec& spec, const std::vector<int64_t>& dims) {
  if (spec.modelDims.size() != dims.size() || dims.size() != spec.shape.size())
    return false;
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != spec.shape[i] && (spec.modelDims[i] >= 0 || dims[i] < 1))
      return false;
  return true;
}

/// "; the model declares float32[?, 16] (another size where it says ?)", when it leaves a
/// dimension unknown.
std::string freeText(const InputSpec& spec) {
  if (std::none_of(spec.modelDims.begin(), spec.modelDims.end(), [](int64_t d) { return d < 0; }))
    return "";
  std::string s;
  for (std::size_t i = 0; i < spec.modelDims.size(); ++i)
    s += (i ? ", " : "") +
         (spec.modelDims[i] < 0 ? std::string("?") : std::to_string(spec.modelDims[i]));
  return "; the model declares " + spec.dtype + "[" + s + "] (another size where it says ?)";
}

/// One copy of the validated, native-order array `a` into a Tensor of kind `k`.
Tensor copyOf(const py::array& a, ElemKind k) {
  Tensor t(k, dimsOf(a));
  if (t.size() == 0)
    return t;
  if (a.flags() & py::array::c_style) {
    std::memcpy(t.raw(), a.data(), t.sizeInBytes());
    return t;
  }
  const size_t width = elemSize(k);
  std::uint8_t* out = t.raw();
  forEachElement(a, [&](const char* p, int64_t i) {
    std::memcpy(out + static_cast<size_t>(i) * width, p, width);
  });
  return t;
}

} // namespace

std::uint64_t maxBindBytes() {
  return kDefaultReadLimit;
}

Tensor checkedInput(const std::string& where, py::handle value, const InputSpec& spec) {
  py::array a = asArray(where, value);
  ElemKind k = kindOf(where, a);
  const std::vector<int64_t> dims = dimsOf(a);
  const int64_t want = countOf(spec.shape), have = countOf(dims);
  const bool fits = (spec.exactShape ? dims == spec.shape : (have >= 0 && have == want)) ||
                    otherShapeFits(spec, dims);
  if (!fits)
    throw Error(where, "has shape " + shapeText(dims) + ", the program's input '" + spec.name +
                           "' is " + spec.dtype + shapeText(spec.shape) +
                           (spec.exactShape ? "" : " (or the same elements in another shape)") +
                           freeText(spec));
  const char* to = nullptr;
  if (k == ElemKind::Float64 && spec.dtype == "float32") { // NumPy's default float
    to = "float32";
    k = ElemKind::Float32;
  }
  a = normalized(where, a, to);
  if (spec.refuseNaN && isFloatElemKind(k)) {
    const int64_t i = firstNaN(a, k);
    if (i >= 0)
      throw Error(where, "element " + std::to_string(i) +
                             " is NaN, which has no int8 value (the program is int8)");
  }
  return copyOf(a, k);
}

Tensor checkedArray(const std::string& where, py::handle value, std::uint64_t maxBytes) {
  py::array a = asArray(where, value);
  const ElemKind k = kindOf(where, a);
  const std::vector<int64_t> dims = dimsOf(a);
  const int64_t n = countOf(dims);
  if (n < 0 || static_cast<std::uint64_t>(n) > maxBytes / elemSize(k))
    throw Error(where, "has shape " + shapeText(dims) + ", more than " + std::to_string(maxBytes) +
                           " bytes, the most an array here may have");
  return copyOf(normalized(where, a), k);
}

TensorMap checkedInputs(const py::dict& inputs, const session::Session& p,
                        const std::string& device) {
  const std::vector<std::string> devices = p.devices();
  const std::string dev = device.empty() && !devices.empty() ? devices.front() : device;
  const bool onNpu = dev == "sim" || dev == "rtl";
  std::vector<InputSpec> specs;
  for (const session::ValueInfo& v : p.inputs()) {
    auto declared = p.modelDims().find(v.name);
    specs.push_back(
        InputSpec{v.name, v.dtype, v.shape, !onNpu,
                  declared == p.modelDims().end() ? std::vector<int64_t>{} : declared->second,
                  p.precision() == "int8"});
  }
  TensorMap m;
  for (const auto& [key, value] : inputs) {
    const std::string name = py::str(key);
    auto it = std::find_if(specs.begin(), specs.end(),
                           [&](const InputSpec& s) { return s.name == name; });
    if (it == specs.end()) // Session::run refuses it (unknown) or drops it (unused)
      m.emplace(name, Tensor(ElemKind::Float32, Shape{0}));
    else
      m.emplace(name, checkedInput("input '" + name + "'", value, *it));
  }
  return m;
}

TensorMap checkedBind(const py::dict& bind) {
  TensorMap m;
  for (const auto& [key, value] : bind) {
    const std::string name = py::str(key);
    m.emplace(name, checkedArray("bind['" + name + "']", value, maxBindBytes()));
  }
  return m;
}

} // namespace ember::python
