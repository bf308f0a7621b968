#!/usr/bin/env bash
# expect_run.sh STATUS STREAM REGEX... -- COMMAND ARGS...
# Passes when COMMAND exits with STATUS and its STREAM (stdout or stderr) matches every
# REGEX (grep -E, case-sensitive). expect_error.sh (status 1, stderr: a clean error, not
# a crash or a signal) and expect_output.sh (status 0, stdout) are its two uses.
set -uo pipefail
want=$1 stream=$2
shift 2
patterns=()
while (($#)) && [[ "$1" != "--" ]]; do
  patterns+=("$1")
  shift
done
shift || { echo "expect_run.sh: missing --" >&2; exit 2; }
captured=$(mktemp)
if [[ "$stream" == stderr ]]; then
  "$@" >/dev/null 2>"$captured"
else
  "$@" >"$captured"
fi
status=$?
echo "--- exit status $status; $stream:"
cat "$captured"
ok=1
if ((status != want)); then
  echo "FAIL: expected exit status $want, got $status"
  ok=0
fi
for p in "${patterns[@]}"; do
  if ! grep -Eq -- "$p" "$captured"; then
    echo "FAIL: $stream does not match /$p/"
    ok=0
  fi
done
rm -f "$captured"
((ok)) && echo "PASS" && exit 0
exit 1
