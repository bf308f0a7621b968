#!/usr/bin/env bash
# expect_error.sh REGEX... -- COMMAND ARGS...
# Passes when COMMAND exits with status 1 (a clean error, not a crash or a signal) and
# its stderr matches every REGEX (grep -E, case-sensitive).
exec "$(dirname "$0")/expect_run.sh" 1 stderr "$@"
