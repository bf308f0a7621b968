// Whole-file reads and atomic writes (temporary file + rename).
#include "ember/support/AtomicFile.h"

#include "ember/support/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ember {

namespace {

std::string sysReason(const char* action) {
  return std::string(action) + ": " + std::strerror(errno);
}

/// Closes the descriptor and removes the temporary file unless released.
struct TempFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0)
      ::close(fd);
    if (!keep && !path.empty())
      ::unlink(path.c_str());
  }
};

} // namespace

void writeFileAtomic(const std::string& path, const std::string& bytes) {
  if (path.empty())
    throw Error("(empty path)", "cannot write a file without a name");
  TempFile tmp;
  std::vector<char> name(path.begin(), path.end());
  const char suffix[] = ".tmp.XXXXXX";
  name.insert(name.end(), suffix, suffix + sizeof(suffix)); // includes the NUL
  tmp.fd = ::mkstemp(name.data());
  if (tmp.fd < 0)
    throw Error(path, sysReason("cannot create a temporary file next to it"));
  tmp.path = name.data();
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(tmp.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      throw Error(path, sysReason("cannot write"));
    done += static_cast<size_t>(n);
  }
  // mkstemp creates 0600; give the file the usual permissions (umask applies).
  mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(tmp.fd, 0666 & ~mask) != 0)
    throw Error(path, sysReason("cannot set permissions"));
  if (::fsync(tmp.fd) != 0)
    throw Error(path, sysReason("cannot flush"));
  if (::close(tmp.fd) != 0) {
    tmp.fd = -1;
    throw Error(path, sysReason("cannot close"));
  }
  tmp.fd = -1;
  if (::rename(tmp.path.c_str(), path.c_str()) != 0)
    throw Error(path, sysReason("cannot rename the temporary file over it"));
  tmp.keep = true;
}

std::string readFileBytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error(path, sysReason("cannot open"));
  if (S_ISDIR(st.st_mode))
    throw Error(path, "is a directory, not a file");
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    throw Error(path, sysReason("cannot open"));
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    out.append(buf, n);
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed)
    throw Error(path, "read error");
  return out;
}

} // namespace ember
