#pragma once
/// \file
/// Ember's version (the CMake project's), for `--version` lines and for programs linked
/// against the installed package to check what they got.

namespace ember {

/// "MAJOR.MINOR.PATCH", e.g. "0.1.0".
const char* versionString();

} // namespace ember
