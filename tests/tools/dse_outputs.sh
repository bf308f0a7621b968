#!/usr/bin/env bash
# dse_outputs.sh EMBER_DSE MODEL.onnx OUT: a two-point sweep whose first point is invalid
# (act_kib=3: not a power of two) must still run (exit 0), report that point as a row
# with the validator's message (file, JSON pointer, reason), run the second, and write the
# CSV, the HTML page and both descriptions.
set -uo pipefail
dse=$1 model=$2 out=$3
rm -rf "$out"
mkdir -p "$(dirname "$out")"
fail() { echo "FAIL: $*"; exit 1; }
"$dse" "$model" --axis act_kib=3,64 --out "$out" --no-progress >"$out.stdout" 2>&1
status=$?
cat "$out.stdout"
((status == 0)) || fail "exit status $status, expected 0"
csv=$out/dse.csv html=$out/dse.html
[[ -s $csv && -s $html ]] || fail "dse.csv or dse.html missing"
[[ -s $out/descriptions/p0.json && -s $out/descriptions/p1.json ]] || fail "descriptions missing"
(($(wc -l <"$csv") == 3)) || fail "dse.csv should hold a header and 2 rows"
grep -Eq '^0,3,[^,]+,invalid,' "$csv" || fail "point 0 is not an invalid row"
grep -Eq "descriptions/p0\.json: /hardware/memories/act/size_bytes: [^,]*power of two" "$csv" ||
  fail "the invalid row lacks the validator's message"
grep -Eq '^1,64,[^,]+,ok,[1-9][0-9]*,' "$csv" || fail "point 1 did not run"
grep -Eq 'point 0 .*invalid: .*p0\.json: /hardware/memories/act/size_bytes' "$out.stdout" ||
  fail "the table does not name the invalid point's reason"
grep -q '<svg ' "$html" || fail "no chart in dse.html"
# Self-contained: no URL but the SVG namespace.
urls=$(grep -o 'http[^"]*' "$html" | grep -v '^http://www.w3.org/2000/svg$' | wc -l)
((urls == 0)) || fail "dse.html refers to $urls outside resources"
[[ -z $(find "$out" -name '*.tmp*') ]] || fail "temporary files left in $out"
echo "PASS"
