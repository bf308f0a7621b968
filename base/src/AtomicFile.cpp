// Whole-file reads, atomic writes (temporary file + rename) and output-path checks.
#include "ember/support/AtomicFile.h"

#include "ember/support/Error.h"
#include "ember/support/LargeBuffer.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace ember {

namespace {

std::string sysReason(const char* action, int err = errno) {
  return std::string(action) + ": " + std::strerror(err);
}

/// `path` as its folder ("." when it names none) and its last component.
std::pair<std::string, std::string> splitPath(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos)
    return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

std::string parentOf(const std::string& path) {
  return splitPath(path).first;
}

// --- Temporary files removed on SIGINT/SIGTERM ----------------------------------------
// A fixed table the signal handler can walk without allocating (async-signal-safe):
// a slot is claimed with a compare-and-swap, its path copied, then marked live.

constexpr int kSlots = 16;
struct TempSlot {
  std::atomic<int> state{0}; // 0 free, 1 being filled or emptied, 2 live
  // Initialised, so that the table is constant-initialised in .bss: no start-up code
  // writes its 16 pages.
  char path[PATH_MAX] = {};
};
TempSlot g_slots[kSlots];

int registerTemp(const std::string& path) {
  if (path.size() >= PATH_MAX)
    return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      g_slots[i].state.store(2);
      return i;
    }
  }
  return -1; // more than kSlots writes at once: that one is not cleaned on a signal
}

void unregisterTemp(int slot) {
  if (slot >= 0)
    g_slots[slot].state.store(0);
}

extern "C" void onTerminatingSignal(int sig) {
  for (auto& s : g_slots)
    if (s.state.load() == 2)
      ::unlink(s.path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

/// Removes `BASE.tmp.PID.*` files next to `target` whose process no longer runs (left
/// by a SIGKILL). Files of running processes (a parallel run) are left alone.
void removeStaleTemps(const std::string& target) {
  const auto [dir, base] = splitPath(target);
  const std::string prefix = base + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (!d)
    return;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0)
      continue;
    // NAME.tmp.PID.XXXXXX: the PID is the digits up to the next dot.
    std::size_t end = name.find('.', prefix.size());
    if (end == std::string::npos || end == prefix.size())
      continue;
    std::string digits = name.substr(prefix.size(), end - prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
      continue;
    pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH)
      ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

/// Follows symbolic links at `path` (relative targets are relative to the link's
/// folder) to the name that a write should replace.
std::string resolveLinks(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      return p;
    char buf[PATH_MAX];
    ssize_t n = ::readlink(p.c_str(), buf, sizeof(buf) - 1);
    if (n < 0)
      throw Error(path, sysReason("cannot read the symbolic link"));
    std::string target(buf, static_cast<std::size_t>(n));
    if (target.empty() || target[0] != '/') {
      auto slash = p.rfind('/');
      if (slash != std::string::npos)
        target = p.substr(0, slash + 1) + target;
    }
    p = target;
  }
  throw Error(path, "too many levels of symbolic links");
}

void writeAll(int fd, const char* data, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw Error(path, sysReason("cannot write"));
    done += static_cast<std::size_t>(n);
  }
}

/// Writes straight into a character device or FIFO (no temporary file, no rename).
void writeThrough(const std::string& path, const char* data, std::size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    throw Error(path, sysReason("cannot open"));
  try {
    writeAll(fd, data, size, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0)
    throw Error(path, sysReason("cannot close"));
}

/// Closes the descriptor and removes the temporary file unless released.
struct TempFile {
  std::string path;
  int fd = -1;
  int slot = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0)
      ::close(fd);
    if (!keep && !path.empty())
      ::unlink(path.c_str());
    unregisterTemp(slot);
  }
};

void replaceAtomically(const std::string& path, const std::string& shown, const char* data,
                       std::size_t size, const struct stat* existing) {
  removeStaleTemps(path);
  TempFile tmp;
  std::string pattern = path + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  tmp.fd = ::mkstemp(name.data());
  if (tmp.fd < 0)
    throw Error(shown, sysReason("cannot create a temporary file next to it"));
  tmp.path = name.data();
  tmp.slot = registerTemp(tmp.path);
  writeAll(tmp.fd, data, size, shown);
  // mkstemp creates 0600: keep an existing file's permissions, else the usual ones.
  mode_t mode = 0;
  if (existing) {
    mode = existing->st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(tmp.fd, mode) != 0)
    throw Error(shown, sysReason("cannot set permissions"));
  if (::fsync(tmp.fd) != 0)
    throw Error(shown, sysReason("cannot flush"));
  int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0)
    throw Error(shown, sysReason("cannot close"));
  if (::rename(tmp.path.c_str(), path.c_str()) != 0)
    throw Error(shown, sysReason("cannot rename the temporary file over it"));
  tmp.keep = true;
}

} // namespace

void checkRunPaths(const std::vector<OutputPath>& outputs, const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const OutputPath& o : outputs) {
    if (o.path.empty())
      continue;
    if (o.folder) {
      checkOutputDir(o.path, o.option);
    } else {
      checkOutputFile(o.path, o.option);
      files.push_back(o.path);
    }
  }
  checkNotSameFile(files, inputs);
}

void installTempFileCleanup() {
  static std::atomic<bool> done{false};
  if (done.exchange(true))
    return;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL &&
        !(old.sa_flags & SA_SIGINFO)) {
      struct sigaction sa;
      std::memset(&sa, 0, sizeof(sa));
      sa.sa_handler = onTerminatingSignal;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  }
}

void writeFileAtomic(const std::string& path, const void* data, std::size_t size) {
  if (path.empty())
    throw Error("(empty path)", "cannot write a file without a name");
  installTempFileCleanup();
  const std::string target = resolveLinks(path);
  const char* bytes = static_cast<const char*>(data);
  struct stat st;
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw Error(path, sysReason("cannot check the output"));
    replaceAtomically(target, path, bytes, size, nullptr);
    return;
  }
  if (S_ISDIR(st.st_mode))
    throw Error(path, "is a directory");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
    return writeThrough(target, bytes, size);
  if (!S_ISREG(st.st_mode))
    throw Error(path, "is not a regular file, a character device or a FIFO; not replacing it");
  replaceAtomically(target, path, bytes, size, &st);
}

void writeFileAtomic(const std::string& path, const std::string& bytes) {
  writeFileAtomic(path, bytes.data(), bytes.size());
}

std::string readRegularFile(const std::string& path, std::uint64_t limit) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    throw Error(path, std::string("is a ") +
                          (S_ISCHR(st.st_mode)    ? "character device"
                           : S_ISBLK(st.st_mode)  ? "block device"
                           : S_ISFIFO(st.st_mode) ? "FIFO"
                                                  : "socket") +
                          ", not a file: give the file itself");
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && std::uint64_t(st.st_size) > limit)
    throw Error(path, "is " + std::to_string(st.st_size) + " bytes, more than " +
                          std::to_string(limit) + ", the most this input may have");
  return readFileBytes(path, limit);
}

namespace {

Error tooLargeError(const std::string& path, std::uint64_t limit) {
  return Error(path,
               "is larger than " + std::to_string(limit) + " bytes, the most this input may have");
}

/// A file opened for a whole-file read, after readFileBytes's checks; closed on scope exit.
struct WholeFile {
  WholeFile(const std::string& path, std::uint64_t limit) {
    // A FIFO or socket is refused before it is opened: opening a FIFO waits for a writer.
    struct stat pre;
    if (::stat(path.c_str(), &pre) == 0 && (S_ISFIFO(pre.st_mode) || S_ISSOCK(pre.st_mode)))
      throw Error(path, std::string("is a ") + (S_ISFIFO(pre.st_mode) ? "FIFO" : "socket") +
                            ", not a file: give the file itself");
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      throw Error(path, sysReason("cannot open"));
    if (::fstat(fd, &st) != 0)
      fail(path, sysReason("cannot open"));
    if (S_ISDIR(st.st_mode))
      fail(path, "is a directory, not a file");
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
      fail(path, "is a FIFO or socket, not a file: give the file itself");
    if (S_ISREG(st.st_mode) && std::uint64_t(st.st_size) > limit) {
      ::close(fd);
      throw tooLargeError(path, limit);
    }
  }
  ~WholeFile() { ::close(fd); }
  WholeFile(const WholeFile&) = delete;
  WholeFile& operator=(const WholeFile&) = delete;
  /// Up to `n` bytes into `out`; 0 at the end. Throws a read error naming `path`.
  std::size_t read(const std::string& path, void* out, std::size_t n) {
    for (;;) {
      const ssize_t got = ::read(fd, out, n);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        throw Error(path, sysReason("read error"));
      return std::size_t(got);
    }
  }
  int fd = -1;
  struct stat st;

private:
  [[noreturn]] void fail(const std::string& path, const std::string& reason) {
    ::close(fd);
    throw Error(path, reason);
  }
};

} // namespace

std::string readFileBytes(const std::string& path, std::uint64_t limit) {
  WholeFile f(path, limit);
  std::string out;
  if (S_ISREG(f.st.st_mode))
    out.reserve(std::size_t(f.st.st_size));
  char buf[1 << 16];
  while (const std::size_t n = f.read(path, buf, sizeof(buf))) {
    if (out.size() + std::uint64_t(n) > limit)
      throw tooLargeError(path, limit);
    out.append(buf, n);
  }
  return out;
}

LargeBuffer readFileBuffer(const std::string& path, std::uint64_t limit) {
  WholeFile f(path, limit);
  // A regular file is read straight into a buffer of its size (plus a page, to see its
  // end, or that it is longer than it said); anything else, and a file longer than its
  // size said (one that grew, a /proc file), through readFileBytes's loop.
  if (S_ISREG(f.st.st_mode)) {
    const std::uint64_t room = std::uint64_t(f.st.st_size) + 4096;
    LargeBuffer out(room, path);
    std::uint64_t used = 0;
    while (used < room) {
      const std::size_t n = f.read(path, out.data() + used, std::size_t(room - used));
      if (n == 0) {
        if (used > limit)
          throw tooLargeError(path, limit);
        out.resize(used);
        return out;
      }
      used += n;
    }
  }
  const std::string bytes = readFileBytes(path, limit);
  LargeBuffer out(bytes.size(), path);
  out.resize(bytes.size());
  if (!bytes.empty())
    std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

void checkOutputFile(const std::string& path, const std::string& what, bool folderMayBeMissing) {
  const std::string where = what.empty() ? path : what + " " + path;
  if (path.empty())
    throw Error(what, "needs a file name");
  const std::string target = resolveLinks(path);
  struct stat st;
  if (::stat(target.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw Error(where, "is a directory");
    if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw Error(where, "is not a regular file, a character device or a FIFO");
    return;
  }
  const std::string dir = parentOf(target);
  if (::stat(dir.c_str(), &st) != 0) {
    if ((errno == ENOENT || errno == ENOTDIR) && folderMayBeMissing)
      return checkOutputDir(dir, what);
    throw Error(where,
                "its folder " + dir +
                    (errno == ENOENT ? " does not exist" : ": " + sysReason("cannot use it")));
  }
  if (!S_ISDIR(st.st_mode))
    throw Error(where, "its folder " + dir + " is not a directory");
}

void checkOutputDir(const std::string& dir, const std::string& what) {
  const std::string where = what.empty() ? dir : what + " " + dir;
  if (dir.empty())
    throw Error(what, "needs a folder name");
  // The folder, or else its nearest existing ancestor (the folders are created later),
  // must be a folder.
  std::string p = dir;
  for (;;) {
    struct stat st;
    if (::stat(p.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        throw Error(where, p == dir ? "exists and is not a directory"
                                    : p + " is not a directory, so the folder cannot be made");
      return;
    }
    if (errno != ENOENT && errno != ENOTDIR)
      throw Error(where, sysReason("cannot use it"));
    const std::string up = parentOf(p);
    if (up == p)
      return;
    p = up;
    while (p.size() > 1 && p.back() == '/')
      p.pop_back();
  }
}

namespace {
/// A key naming the file `path` refers to: device and inode when it exists, else the
/// resolved path of its folder plus its name.
std::string fileKey(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0)
    return "i:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const std::string target = resolveLinks(path);
  char buf[PATH_MAX];
  const auto [dir, name] = splitPath(target);
  if (::realpath(dir.c_str(), buf))
    return "p:" + std::string(buf) + "/" + name;
  return "p:" + target;
}
} // namespace

void checkNotSameFile(const std::vector<std::string>& outputs,
                      const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].empty())
      continue;
    struct stat st;
    // Writing through a device or FIFO does not replace anything.
    if (::stat(outputs[i].c_str(), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
      continue;
    const std::string key = fileKey(outputs[i]);
    for (const auto& in : inputs)
      if (!in.empty() && fileKey(in) == key)
        throw Error(outputs[i], "is also an input (" + in + "); refusing to overwrite it");
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].empty() && fileKey(outputs[j]) == key)
        throw Error(outputs[i], "is written twice (also as " + outputs[j] + ")");
  }
}

} // namespace ember
