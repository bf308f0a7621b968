#!/usr/bin/env bash
# ember-run --html on a real network, opened in a real browser: headless Chromium loads
# the page, must log no console message (the page has no script; a broken resource or
# markup error would log one), renders a screenshot, and its DOM must hold the charts.
# Usage: html_report_test.sh EMBER_RUN MODEL.onnx OUT_DIR CHROMIUM
set -euo pipefail
run=$1 model=$2 out=$3 chromium=$4
rm -rf "$out"
mkdir -p "$out"
page=$out/report.html shot=$out/report.png
"$run" "$model" --device sim --precision int8 --random-input 1 --html "$page" --quiet
test -s "$page"
if grep -qiE "<script|https?://" <(sed 's|http://www.w3.org[^"'"'"' ]*||g' "$page"); then
  echo "the page refers to a script or the network" >&2
  exit 1
fi
flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-extensions
       --user-data-dir="$out/profile" --enable-logging=stderr --v=0)
"$chromium" "${flags[@]}" --window-size=1200,5000 --screenshot="$shot" "file://$page" \
  >"$out/chromium-shot.log" 2>&1 || true
"$chromium" "${flags[@]}" --dump-dom "file://$page" >"$out/dom.html" 2>"$out/chromium-dom.log" || true
test -s "$shot" || { echo "no screenshot; chromium said:" >&2; cat "$out/chromium-shot.log" >&2; exit 1; }
if grep -h "CONSOLE" "$out"/chromium-*.log; then
  echo "console messages while loading the page (above)" >&2
  exit 1
fi
circles=$(grep -o "<circle" "$out/dom.html" | wc -l)
for want in "Cycles per layer" "MAC utilisation per layer" "Roofline" "Energy by component" \
            "Energy by layer" "Engines" "Roofline efficiency per layer" "most stalled"; do
  grep -q "$want" "$out/dom.html" || { echo "the rendered page has no '$want'" >&2; exit 1; }
done
((circles >= 10)) || { echo "the roofline has $circles layers, expected >= 10" >&2; exit 1; }
echo "html report: $page ($(stat -c %s "$page") bytes, $circles layers on the roofline)"
echo "screenshot: $shot ($(stat -c %s "$shot") bytes)"
