#pragma once
/// \file
/// NumPy arrays into Tensors for the Python package, checked before a byte is copied: the
/// dtype, the shape against what the program declares, NaN for int8 programs, then one
/// strided copy of the validated array (any strides, byte order or alignment). A huge
/// broadcast view, a wrong-shaped array or an object NumPy cannot convert raises
/// ember.Error naming the input; nothing is allocated for it.

#include "ember/driver/Execute.h"
#include "ember/session/Session.h"
#include "ember/tensor/Tensor.h"

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ember::python {

/// What a program declares for one input.
struct InputSpec {
  std::string name;
  std::string dtype; ///< float32, int8, ... (elemKindName)
  std::vector<int64_t> shape;
  /// The array's shape must be `shape` exactly (host devices); otherwise only its
  /// element count must match and the device checks the layout (the NPU's runtime
  /// accepts [N, C] for an [N, C, 1, 1] input).
  bool exactShape = true;
  /// The model's declared dimensions (-1 where it leaves one unknown), for a program
  /// compiled from a model: a shape that differs from `shape` only in unknown dimensions
  /// is taken too (the program compiles itself again for it; session::Session::compile).
  /// Empty: the shape is fixed.
  std::vector<int64_t> modelDims;
  /// Refuse NaN (an int8 program: NaN has no integer code).
  bool refuseNaN = false;
};

/// The largest array `bind=` takes (1 GiB, the tools' default read limit).
std::uint64_t maxBindBytes();

/// The Tensor of `value` (an array or anything numpy.asarray converts) as input `where`
/// ("input 'x'"), checked against `spec`: a dtype Ember takes (float64 becomes float32
/// for a float32 input), the declared shape, no NaN when `spec.refuseNaN`. ember::Error
/// naming `where` otherwise, before anything is copied.
Tensor checkedInput(const std::string& where, pybind11::handle value, const InputSpec& spec);

/// The Tensor of `value` where nothing is declared (bind=): a dtype Ember takes and at
/// most `maxBytes` bytes.
Tensor checkedArray(const std::string& where, pybind11::handle value, std::uint64_t maxBytes);

/// Every input of `inputs` ({name: array}) for a run of `p` on `device` ("" = its
/// default). Names the program does not read are passed on as empty tensors, so that
/// Session::run reports them (unknown) or drops them (declared, unused) as before.
TensorMap checkedInputs(const pybind11::dict& inputs, const session::Session& p,
                        const std::string& device);

/// Every array of bind= ({name: array}); errors name "bind['NAME']".
TensorMap checkedBind(const pybind11::dict& bind);

} // namespace ember::python
