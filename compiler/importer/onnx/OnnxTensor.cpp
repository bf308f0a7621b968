// TensorProto -> Tensor conversion for the ONNX importer.
#include "OnnxTensor.h"

#include "ember/support/Error.h"

#include "ember/support/AtomicFile.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <limits>
#include <sstream>

namespace ember {

namespace {

/// ONNX element types and the Ember kind they map to (nullptr-named = unsupported).
struct OnnxTypeEntry {
  int32_t type;
  const char* name;
  bool supported;
  ElemKind kind;
};

const OnnxTypeEntry kOnnxTypes[] = {
    {onnx::TensorProto::UNDEFINED, "UNDEFINED", false, ElemKind::Float32},
    {onnx::TensorProto::FLOAT, "FLOAT", true, ElemKind::Float32},
    {onnx::TensorProto::UINT8, "UINT8", true, ElemKind::UInt8},
    {onnx::TensorProto::INT8, "INT8", true, ElemKind::Int8},
    {onnx::TensorProto::UINT16, "UINT16", true, ElemKind::UInt16},
    {onnx::TensorProto::INT16, "INT16", true, ElemKind::Int16},
    {onnx::TensorProto::INT32, "INT32", true, ElemKind::Int32},
    {onnx::TensorProto::INT64, "INT64", true, ElemKind::Int64},
    {onnx::TensorProto::STRING, "STRING", false, ElemKind::Float32},
    {onnx::TensorProto::BOOL, "BOOL", true, ElemKind::Bool},
    {onnx::TensorProto::FLOAT16, "FLOAT16", true, ElemKind::Float16},
    {onnx::TensorProto::DOUBLE, "DOUBLE", true, ElemKind::Float64},
    {onnx::TensorProto::UINT32, "UINT32", true, ElemKind::UInt32},
    {onnx::TensorProto::UINT64, "UINT64", true, ElemKind::UInt64},
    {onnx::TensorProto::COMPLEX64, "COMPLEX64", false, ElemKind::Float32},
    {onnx::TensorProto::COMPLEX128, "COMPLEX128", false, ElemKind::Float32},
    {onnx::TensorProto::BFLOAT16, "BFLOAT16", false, ElemKind::Float32},
};

const OnnxTypeEntry* findType(int32_t t) {
  for (const OnnxTypeEntry& e : kOnnxTypes)
    if (e.type == t)
      return &e;
  return nullptr;
}

/// Copies typed repeated-field values into the tensor, converting each element.
template <typename T, typename Field> void copyField(Tensor& out, const Field& field) {
  T* p = out.data<T>();
  for (int i = 0; i < field.size(); ++i)
    p[i] = static_cast<T>(field.Get(i));
}

/// Element count of `dims`, with overflow and sign checks.
int64_t checkedCount(const onnx::TensorProto& t, const std::string& where) {
  int64_t n = 1;
  for (int i = 0; i < t.dims_size(); ++i) {
    int64_t d = t.dims(i);
    if (d < 0)
      throw Error(where,
                  "dimension " + std::to_string(i) + " is negative (" + std::to_string(d) + ")");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / 16 / d)
      throw Error(where, "tensor is too large");
    n *= d;
  }
  return n;
}

/// Number of values the typed field that `kind` reads from holds.
int64_t typedFieldSize(const onnx::TensorProto& t, ElemKind kind) {
  switch (kind) {
  case ElemKind::Float32:
    return t.float_data_size();
  case ElemKind::Int64:
    return t.int64_data_size();
  case ElemKind::Float64:
    return t.double_data_size();
  case ElemKind::UInt32:
  case ElemKind::UInt64:
    return t.uint64_data_size();
  default: // int8, int16, int32, uint8, uint16, bool, float16 (its bits)
    return t.int32_data_size();
  }
}

} // namespace

std::string onnxElemTypeName(int32_t dataType) {
  const OnnxTypeEntry* e = findType(dataType);
  return e ? e->name : "type " + std::to_string(dataType);
}

ElemKind onnxElemKind(int32_t dataType, const std::string& where) {
  const OnnxTypeEntry* e = findType(dataType);
  if (!e || !e->supported)
    throw Unsupported(where, "element type " + onnxElemTypeName(dataType));
  return e->kind;
}

Tensor tensorFromOnnx(const onnx::TensorProto& t, const std::string& where) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0)
    throw Unsupported(where, "tensor data stored in external files is not supported");
  if (t.has_segment())
    throw Unsupported(where, "segmented tensors are not supported");
  ElemKind kind = onnxElemKind(t.data_type(), where);
  int64_t count = checkedCount(t, where);
  Shape dims(t.dims().begin(), t.dims().end());

  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    uint64_t want = static_cast<uint64_t>(count) * elemSize(kind);
    if (raw.size() != want)
      throw Error(where, "raw_data holds " + std::to_string(raw.size()) + " bytes, shape " +
                             shapeToString(dims) + " of " + elemKindName(kind) + " needs " +
                             std::to_string(want));
    Tensor out(kind, dims);
    if (!raw.empty())
      std::memcpy(out.raw(), raw.data(), raw.size());
    if (kind == ElemKind::Bool)
      for (size_t i = 0; i < out.sizeInBytes(); ++i)
        out.raw()[i] = out.raw()[i] != 0;
    return out;
  }
  int64_t have = typedFieldSize(t, kind);
  if (have != count)
    throw Error(where, "holds " + std::to_string(have) + " values, shape " + shapeToString(dims) +
                           " needs " + std::to_string(count));
  Tensor out(kind, dims);
  switch (kind) {
  case ElemKind::Float32:
    copyField<float>(out, t.float_data());
    break;
  case ElemKind::Int8:
    copyField<int8_t>(out, t.int32_data());
    break;
  case ElemKind::Int32:
    copyField<int32_t>(out, t.int32_data());
    break;
  case ElemKind::Int64:
    copyField<int64_t>(out, t.int64_data());
    break;
  case ElemKind::Bool: {
    bool* p = out.data<bool>();
    for (int i = 0; i < t.int32_data_size(); ++i)
      p[i] = t.int32_data(i) != 0;
    break;
  }
  case ElemKind::Float64:
    copyField<double>(out, t.double_data());
    break;
  case ElemKind::Float16: {
    Float16* p = out.data<Float16>();
    for (int i = 0; i < t.int32_data_size(); ++i)
      p[i].bits = static_cast<uint16_t>(t.int32_data(i));
    break;
  }
  case ElemKind::UInt8:
    copyField<uint8_t>(out, t.int32_data());
    break;
  case ElemKind::Int16:
    copyField<int16_t>(out, t.int32_data());
    break;
  case ElemKind::UInt16:
    copyField<uint16_t>(out, t.int32_data());
    break;
  case ElemKind::UInt32:
    copyField<uint32_t>(out, t.uint64_data());
    break;
  case ElemKind::UInt64:
    copyField<uint64_t>(out, t.uint64_data());
    break;
  }
  return out;
}

Tensor onnxTensorFromBytes(const std::string& bytes, const std::string& where) {
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes))
    throw Error(where, "not a valid ONNX TensorProto (protobuf parse failed)");
  return tensorFromOnnx(t, where);
}

Tensor readOnnxTensorFile(const std::string& path) {
  // One TensorProto: protobuf's limit of one message (2 GiB - 1 bytes).
  return onnxTensorFromBytes(readRegularFile(path, uint64_t(std::numeric_limits<int>::max())),
                             path);
}

} // namespace ember
