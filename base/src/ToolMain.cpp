// toolMain: errors to messages and exit statuses, the same for every tool.
#include "ember/support/ToolMain.h"

#include "ember/support/AtomicFile.h"
#include "ember/support/Error.h"

#include <cstdio>
#include <filesystem>
#include <new>

namespace ember {

std::string describeCurrentException(const char* tool, int* status) {
  const std::string t = tool;
  int code = kExitBadInput;
  std::string line;
  try {
    throw;
  } catch (const UsageError& e) {
    code = kExitUsage;
    line = t + ": " + e.what() + " (see " + t + " --help)";
  } catch (const InternalError& e) {
    line = t + ": internal error (a bug in Ember; please report it): " + e.what();
  } catch (const NpuFault& e) {
    code = kExitNpuFault;
    line = t + ": error: " + e.what();
  } catch (const Unsupported& e) {
    line = t + ": unsupported: " + e.what();
  } catch (const Error& e) {
    line = t + ": error: " + e.what();
  } catch (const std::filesystem::filesystem_error& e) {
    std::string where = e.path1().string();
    if (!e.path2().empty())
      where += " -> " + e.path2().string();
    line = t + ": error: " + (where.empty() ? "" : where + ": ") + e.code().message();
  } catch (const std::bad_alloc&) {
    line = t + ": error: out of memory";
  } catch (const std::exception& e) {
    line = t + ": internal error (a bug in Ember; please report it): " + e.what();
  } catch (...) {
    line = t + ": internal error (a bug in Ember; please report it): unknown exception";
  }
  if (status)
    *status = code;
  return line;
}

int toolMain(const char* tool, const std::function<int()>& body) {
  installTempFileCleanup();
  try {
    return body();
  } catch (...) {
    int status = kExitBadInput;
    std::string line = describeCurrentException(tool, &status);
    std::fprintf(stderr, "%s\n", line.c_str());
    return status;
  }
}

} // namespace ember
