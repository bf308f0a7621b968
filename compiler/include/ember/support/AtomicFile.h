#pragma once
/// \file
/// Whole-file reads and atomic whole-file writes.
///
/// Tools write outputs (.npy tensors, binaries, reports) that other programs read, so a
/// crash or a full disk must never leave a half-written file under the final name:
/// writeFileAtomic writes a temporary file in the same directory and renames it over
/// the target (rename is atomic within one file system).

#include <string>

namespace ember {

/// Writes `bytes` to `path` atomically (temporary file in the same directory, flushed,
/// then renamed). Throws ember::Error naming `path` and the system's reason; on failure
/// the temporary file is removed and an existing `path` is left untouched.
void writeFileAtomic(const std::string& path, const std::string& bytes);

/// Reads the whole file at `path` (binary). Throws ember::Error naming `path` when it
/// cannot be opened or read (missing, a directory, no permission).
std::string readFileBytes(const std::string& path);

} // namespace ember
