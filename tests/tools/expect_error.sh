#!/usr/bin/env bash
# expect_error.sh REGEX... -- COMMAND ARGS...
# Passes when COMMAND exits with status 1 (a clean error, not a crash or a signal) and
# its stderr matches every REGEX (grep -E, case-sensitive).
set -uo pipefail
patterns=()
while (($#)) && [[ "$1" != "--" ]]; do
  patterns+=("$1")
  shift
done
shift || { echo "expect_error.sh: missing --" >&2; exit 2; }
err=$(mktemp)
"$@" >/dev/null 2>"$err"
status=$?
echo "--- exit status $status; stderr:"
cat "$err"
ok=1
if ((status != 1)); then
  echo "FAIL: expected exit status 1 (clean error), got $status"
  ok=0
fi
for p in "${patterns[@]}"; do
  if ! grep -Eq -- "$p" "$err"; then
    echo "FAIL: stderr does not match /$p/"
    ok=0
  fi
done
rm -f "$err"
((ok)) && echo "PASS" && exit 0
exit 1
