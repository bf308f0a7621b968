// Interpreter kernels of the NN node kinds. They live in one file per family beside
// this one; this file registers them all.
#include "ember/interpreter/Kernels.h"

namespace ember {

void registerConvKernels();    // ConvKernels.cpp
void registerPoolKernels();    // PoolKernels.cpp
void registerNormKernels();    // NormKernels.cpp
void registerMatMulKernels();  // MatMulKernels.cpp
void registerSoftmaxKernels(); // SoftmaxKernels.cpp

void registerNNKernels() {
  registerConvKernels();
  registerPoolKernels();
  registerNormKernels();
  registerMatMulKernels();
  registerSoftmaxKernels();
}

} // namespace ember
