#pragma once
/// \file
/// The one exception type of Ember's compiler and tools.
///
/// Every error a user can cause (bad model, bad .npy, unsupported operator, wrong input
/// shape) is reported as an `ember::Error` whose message names the file or object, the
/// place inside it and the reason, so that tools can print it and exit non-zero instead
/// of crashing.

#include <stdexcept>
#include <string>

namespace ember {

/// A user-facing error: `what()` is "WHERE: REASON" (WHERE may be empty).
class Error : public std::runtime_error {
public:
  Error(std::string where, std::string reason)
      : std::runtime_error(where.empty() ? reason : where + ": " + reason),
        where_(std::move(where)), reason_(std::move(reason)) {}
  explicit Error(std::string reason) : Error(std::string(), std::move(reason)) {}

  /// The file / node / path the error is about ("" when not applicable).
  const std::string& where() const { return where_; }
  /// The reason alone, without the location.
  const std::string& reason() const { return reason_; }

private:
  std::string where_;
  std::string reason_;
};

/// An input that is well-formed but uses something Ember does not support (an ONNX
/// operator, an element type, an attribute value). Tools and the conformance runner
/// count these apart from real failures.
class Unsupported : public Error {
public:
  using Error::Error;
};

} // namespace ember
