#!/usr/bin/env bash
# expect_output.sh REGEX... -- COMMAND ARGS...
# Passes when COMMAND exits with status 0 and its stdout matches every REGEX (grep -E,
# case-sensitive). The counterpart of expect_error.sh for good runs.
exec "$(dirname "$0")/expect_run.sh" 0 stdout "$@"
