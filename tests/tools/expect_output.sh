#!/usr/bin/env bash
# expect_output.sh REGEX... -- COMMAND ARGS...
# Passes when COMMAND exits with status 0 and its stdout matches every REGEX (grep -E,
# case-sensitive, line by line). The counterpart of expect_error.sh for good runs.
set -uo pipefail
patterns=()
while (($#)) && [[ "$1" != "--" ]]; do
  patterns+=("$1")
  shift
done
shift || { echo "expect_output.sh: missing --" >&2; exit 2; }
out=$(mktemp)
"$@" >"$out"
status=$?
echo "--- exit status $status; stdout:"
cat "$out"
ok=1
if ((status != 0)); then
  echo "FAIL: expected exit status 0, got $status"
  ok=0
fi
for p in "${patterns[@]}"; do
  if ! grep -Eq -- "$p" "$out"; then
    echo "FAIL: stdout does not match /$p/"
    ok=0
  fi
done
rm -f "$out"
((ok)) && echo "PASS" && exit 0
exit 1
