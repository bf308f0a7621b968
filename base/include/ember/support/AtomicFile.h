#pragma once
/// \file
/// Whole-file reads, atomic whole-file writes, and the checks every tool makes on its
/// output paths before it starts working.
///
/// Tools write outputs (.npy tensors, binaries, reports) that other programs read, so a
/// crash, a kill or a full disk must never leave a half-written file under the final
/// name, and a write must never replace something that is not the output: a device node
/// (`-o /dev/null`) is written through, a symbolic link's target (not the link) is
/// replaced, an input is never overwritten, and a directory is refused before any work.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ember {

/// Writes `bytes` to `path` so that readers see the old file or the whole new one:
/// - a regular file (or a new name) is written to `NAME.tmp.PID.XXXXXX` in the same
///   folder, flushed and renamed over it (keeping an existing file's permissions);
/// - a symbolic link is followed (to its final target, which is replaced as above);
/// - a character device or FIFO (`/dev/null`, `/dev/stdout`, a pipe) is written
///   directly, since renaming over it would replace the device node;
/// - a directory, socket or block device is refused.
/// Temporary files of this process are removed on SIGINT/SIGTERM (see
/// installTempFileCleanup); a stale one of a killed process (SIGKILL) is removed by the
/// next write of the same file. Throws ember::Error naming `path` and the reason; on
/// failure an existing `path` is left untouched.
void writeFileAtomic(const std::string& path, const std::string& bytes);
void writeFileAtomic(const std::string& path, const void* data, std::size_t size);

/// The largest file readFileBytes reads unless told otherwise (1 GiB).
constexpr std::uint64_t kDefaultReadLimit = std::uint64_t(1) << 30;

/// Reads the whole file at `path` (binary). Throws ember::Error naming `path` when it
/// cannot be opened or read (missing, a directory, a FIFO or socket, which could block
/// for ever, no permission) or holds more than `limit` bytes (so `/dev/zero` or a huge
/// file fails fast instead of exhausting memory). Character devices are read (bounded).
std::string readFileBytes(const std::string& path, std::uint64_t limit = kDefaultReadLimit);

/// readFileBytes for inputs that are files by nature (a model, a description): anything
/// but a regular file (a device such as /dev/zero, a FIFO, a socket) is refused before a
/// byte is read, and so is a file larger than `limit`, with the file and the limit.
std::string readRegularFile(const std::string& path, std::uint64_t limit);

/// Checks, before any work, that `path` can be an output file: not a directory (also
/// through a symbolic link), and its folder exists unless `folderMayBeMissing` (a file
/// of an output folder that is created later). `what` names the option in the message
/// (e.g. "-o"). Throws ember::Error.
void checkOutputFile(const std::string& path, const std::string& what,
                     bool folderMayBeMissing = false);

/// Checks that `dir` can be an output folder: a folder, or a name that does not exist
/// yet (it is created when written). Throws ember::Error.
void checkOutputDir(const std::string& dir, const std::string& what);

/// Throws ember::Error when an output path names the same file as an input (same
/// device and inode, or the same path after resolving links) or as another output:
/// `emberc m.onnx -o m.onnx` must not overwrite the model.
void checkNotSameFile(const std::vector<std::string>& outputs,
                      const std::vector<std::string>& inputs);

/// One output of a tool run: its path ("" when the option was not given), the option
/// that names it (for messages), and whether it is a folder of outputs.
struct OutputPath {
  std::string path;
  std::string option;
  bool folder = false;
};

/// All of a run's output checks at once, before any work: checkOutputFile or
/// checkOutputDir on each given output, then checkNotSameFile of the files against
/// `inputs` (empty paths are skipped on both sides).
void checkRunPaths(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs);

/// Installs SIGINT/SIGTERM handlers (where the disposition is still the default) that
/// remove this process's temporary files and then die of the same signal. Called by
/// toolMain and on the first atomic write; harmless to call again.
void installTempFileCleanup();

} // namespace ember
