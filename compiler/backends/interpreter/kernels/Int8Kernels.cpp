// Registers the interpreter's int8 kernels (kernels/Int8*.cpp): the integer operators
// of docs/numerics.md section 4, selected by selectKernel (Interpreter.cpp) for nodes
// whose result is int8 with quantization parameters.
#include "Int8Util.h"

#include "ember/interpreter/Kernels.h"

namespace ember {

void registerInt8Kernels() {
  registerInt8ElementwiseKernels();
  registerInt8PoolKernels();
  registerInt8ConvKernels();
  registerInt8MatMulKernels();
  registerInt8NormKernels();
}

} // namespace ember
