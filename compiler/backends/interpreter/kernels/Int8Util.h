#pragma once
/// \file
/// Helpers shared by the interpreter's int8 kernels (kernels/Int8*.cpp): reading the
/// per-tensor parameters of an operand, with an error naming the operand when they are
/// missing, and the family registration functions.

#include "ember/quantization/Numerics.h"
#include "ember/support/Error.h"
#include "ember/tensor/Tensor.h"

#include <string>

namespace ember {
namespace kernels {

/// Per-tensor parameters of one int8 operand.
struct TensorQ {
  float scale = 1;
  int32_t zp = 0;
};

/// The per-tensor parameters of `t` (an int8 tensor); ember::Error naming `operand`
/// when it is not int8 or not quantized per tensor.
inline TensorQ perTensor(const Type& t, const char* operand) {
  if (t.kind != ElemKind::Int8 || t.quant.scales.size() != 1 || t.quant.zeroPoints.size() != 1)
    throw Error(std::string(operand) + " is " + t.toString() +
                ", expected int8 with per-tensor quantization parameters");
  return {t.quant.scales[0], t.quant.zeroPoints[0]};
}

/// Throws unless `a` and `b` have the same quantization parameters (operators that move
/// codes unchanged, docs/numerics.md section 4.4).
inline void requireSameParams(const Type& a, const Type& b, const char* what) {
  if (a.quant != b.quant)
    throw Error(std::string(what) + ": input " + a.toString() + " and result " + b.toString() +
                " must have the same quantization parameters (insert a Rescale)");
}

} // namespace kernels

void registerInt8ElementwiseKernels(); // Int8ElementwiseKernels.cpp
void registerInt8PoolKernels();        // Int8PoolKernels.cpp
void registerInt8ConvKernels();        // Int8ConvKernels.cpp
void registerInt8MatMulKernels();      // Int8MatMulKernels.cpp
void registerInt8NormKernels();        // Int8NormKernels.cpp

} // namespace ember
