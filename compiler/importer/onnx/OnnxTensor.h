#pragma once
/// \file
/// ONNX TensorProto <-> Ember Tensor, and ONNX element type names. Private to the ONNX
/// importer (and to tools/tests that link onnx themselves, such as the conformance
/// runner, which reads the TensorProto files of ONNX's node tests).

#include "ember/tensor/Tensor.h"

#include <cstdint>
#include <string>

namespace onnx {
class TensorProto;
class TypeProto;
} // namespace onnx

namespace ember {

/// ONNX's name of a TensorProto::DataType value ("FLOAT", "DOUBLE", ...; "type N" when
/// unknown).
std::string onnxElemTypeName(int32_t dataType);

/// Maps an ONNX element type to Ember's; throws ember::Unsupported("element type X")
/// for types Ember lacks (string, bfloat16, complex), naming `where`.
ElemKind onnxElemKind(int32_t dataType, const std::string& where);

/// Converts a TensorProto (raw_data or typed repeated fields; external data and
/// segments are rejected) into a Tensor. Errors name `where`. Never allocates more
/// than the data the proto actually holds.
Tensor tensorFromOnnx(const onnx::TensorProto& t, const std::string& where);

/// Parses a serialized TensorProto (e.g. an input_0.pb of ONNX's test data).
Tensor onnxTensorFromBytes(const std::string& bytes, const std::string& where);

/// Reads and parses a TensorProto file; errors name the file.
Tensor readOnnxTensorFile(const std::string& path);

} // namespace ember
