// libFuzzer target: the ONNX loader must never crash and report every problem as an
// ember::Error. Build with CC=clang CXX=clang++ -DEMBER_FUZZ=ON, then e.g.
//   ./fuzz_onnx -max_len=65536 CORPUS_DIR
#include "FuzzOnnx.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ember::fuzz::fuzzOnnxOnce(data, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "non-ember exception escaped the ONNX loader: %s\n", e.what());
    std::abort();
  }
  return 0;
}
