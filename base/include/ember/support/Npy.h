#pragma once
/// \file
/// NumPy `.npy` files: the format of every tensor a user gives to or gets from Ember's
/// tools (ARCHITECTURE.md section 7).
///
/// Supported: format versions 1.0, 2.0 and 3.0; C order; little-endian (or
/// byte-order-free) element types float32 ('<f4'), int8 ('|i1'), int32 ('<i4'),
/// int64 ('<i8') and bool ('|b1'). Every malformed or unsupported file is reported as
/// an ember::Error (ember::Unsupported for well-formed files using a dtype, byte order
/// or Fortran order Ember does not read) whose message names the file and the reason;
/// nothing in here asserts or aborts on user input.

#include "ember/tensor/Tensor.h"

#include <string>

namespace ember {

/// Reads the .npy file at `path`.
Tensor readNpy(const std::string& path);

/// Parses the bytes of a .npy file; `what` names it in errors (usually the path).
Tensor parseNpy(const std::string& bytes, const std::string& what);

/// Serializes `t` as a version 1.0 .npy file (version 2.0 if the header needs it),
/// header padded so that the data starts on a 64-byte boundary, as NumPy does.
/// Quantization parameters are not stored (the format has no place for them).
std::string serializeNpy(const Tensor& t);

/// Writes `t` to `path` atomically (see writeFileAtomic).
void writeNpy(const std::string& path, const Tensor& t);

/// The file stem under which a tensor called `name` is written: every character outside
/// [A-Za-z0-9_.-] becomes '_' (an empty name becomes "_"), so that any ONNX or I/O-table
/// name is a safe file name inside the output folder. Shared by every tool.
std::string npyFileStem(const std::string& name);

/// The NumPy dtype descriptor of `k` ("<f4", "|i1", "<i4", "<i8", "|b1").
const char* npyDescr(ElemKind k);

} // namespace ember
