#pragma once
/// \file
/// The one fuzz step shared by the libFuzzer target and the replay driver: import
/// arbitrary bytes as an ONNX model and, when that succeeds, prepare it for the
/// interpreter. Every failure must be an ember::Error that is not an internal error;
/// anything else is a bug.

#include "ember/backend/Backend.h"
#include "ember/importer/OnnxImporter.h"
#include "ember/support/Error.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ember::fuzz {

/// Outcome of one input.
enum class OnnxFuzzResult { Imported, RejectedWithError };

/// Imports `data`; throws whatever non-ember exception escapes (the caller reports it).
inline OnnxFuzzResult fuzzOnnxOnce(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::unique_ptr<Module> m = importOnnxBytes(bytes, "fuzz-input.onnx");
    for (const auto& f : m->functions())
      (void)createBackend("interp")->compile(*f);
    return OnnxFuzzResult::Imported;
  } catch (const InternalError& e) {
    // The importer turns a stray std::exception of an operator importer (an
    // std::out_of_range, an attribute read its registration does not declare) into an
    // InternalError: a bug, not a rejection. (Matched by type: a model may well name a
    // value "internal error".)
    throw std::logic_error(std::string("internal error: ") + e.what());
  } catch (const Error&) {
    return OnnxFuzzResult::RejectedWithError;
  }
}

} // namespace ember::fuzz
