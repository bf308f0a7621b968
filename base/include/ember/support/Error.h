#pragma once
/// \file
/// The one exception base of Ember: every library beneath the tools (isa, compiler,
/// simulator, runtime) throws an `ember::Error` or a class derived from it.
///
/// Every error a user can cause (bad model, bad binary, bad description, bad .npy,
/// unsupported operator, wrong input shape, bad command line) is reported as an
/// `ember::Error` whose message names the file or object, the place inside it and the
/// reason, so that a tool prints it and exits with a documented status instead of
/// crashing. `ember::isa::Error` (which adds the file as a separate field) derives from
/// it, so one `catch (const ember::Error&)` sees every user-facing error.

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

/// A bad command line (unknown option, missing value, conflicting options): tools exit
/// with status 2 and point at `--help` (see ToolMain.h).
class UsageError : public Error {
public:
  using Error::Error;
};

/// The NPU program faulted (its fault record: kind, cycle, instruction), reported where
/// the fault cannot be returned as a run's status (runtime::RunResult::status), e.g. an
/// NPU segment of a compiled model inside the device layer. Tools exit with status 3
/// (kExitNpuFault), as for a faulting binary.
class NpuFault : public Error {
public:
  using Error::Error;
};

/// A bug in Ember caught where it can still be located (e.g. an operator importer that
/// threw a C++ library exception): `what()` names the place. Tools report it as an
/// internal error; fuzz targets count it as a finding, never as a clean rejection.
class InternalError : public Error {
public:
  using Error::Error;
};

} // namespace ember
