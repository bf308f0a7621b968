// Child processes of a sweep (the simulations of the points, their syntheses): both keep
// the running children in a map from pid to the point they work on.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <utility>

#include <sys/types.h>
#include <sys/wait.h>

namespace ember::dse {

/// Waits for any child and, if it is one of `running`, removes it and returns its point
/// and wait status; nullopt when `running` is empty or the child was not one of them.
inline std::optional<std::pair<std::size_t, int>> reapChild(std::map<pid_t, std::size_t>& running) {
  if (running.empty())
    return std::nullopt;
  int status = 0;
  const pid_t pid = ::waitpid(-1, &status, 0);
  const auto it = running.find(pid);
  if (pid < 0 || it == running.end())
    return std::nullopt;
  const std::size_t point = it->second;
  running.erase(it);
  return std::make_pair(point, status);
}

} // namespace ember::dse
