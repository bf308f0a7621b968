#!/usr/bin/env bash
# check_refuses.sh EMBER_ISA PYTHON SRC.json WORK.json PYEXPR REGEX
# Writes SRC.json changed by PYEXPR (Python, on the parsed document `d`) to WORK.json and
# passes when `ember-isa check WORK.json` exits 1 with stderr matching REGEX.
set -u
tool=$1 py=$2 src=$3 work=$4 expr=$5 regex=$6
"$py" -c "import json,sys; d=json.load(open(sys.argv[1])); $expr; json.dump(d, open(sys.argv[2], 'w'))" \
  "$src" "$work" || exit 2
err=$("$tool" check "$work" 2>&1 >/dev/null)
status=$?
echo "$err"
[ "$status" -eq 1 ] || { echo "expected exit 1, got $status"; exit 1; }
echo "$err" | grep -Eq "$regex" || { echo "stderr does not match: $regex"; exit 1; }
