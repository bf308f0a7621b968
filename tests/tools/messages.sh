#!/usr/bin/env bash
# messages.sh DIR EMBERC EMBER_RUN EMBER_SIM EMBER_AS EMBER_OBJDUMP EMBER_ISA MODEL.onnx
# One message convention in every tool (issue 16, item 8): "TOOL: ..." once (never
# "ember-sim: ember-sim:"), usage errors exit 2, bad input exits 1 naming the file, and
# no C++ library text ("filesystem error", "vector::_M_range_check", "basic_string")
# reaches the user.
set -uo pipefail
dir=$1 emberc=$2 run=$3 simexe=$4 as=$5 objdump=$6 isatool=$7 model=$8
rm -rf "$dir"
mkdir -p "$dir"
failed=0
expect() { # expect NAME STATUS TOOLNAME REGEX -- CMD...
  local name=$1 want=$2 tool=$3 re=$4
  shift 5
  "$@" >/dev/null 2>"$dir/err.txt"
  local st=$? err
  err=$(cat "$dir/err.txt")
  local ok=1
  [[ $st -eq $want ]] || ok=0
  grep -Eq -- "$re" "$dir/err.txt" || ok=0
  # Exactly one tool prefix, at the start of the first line.
  [[ $err == "$tool: "* ]] || ok=0
  grep -q "$tool: $tool:" "$dir/err.txt" && ok=0
  grep -Eq "filesystem error|_M_range_check|basic_string|std::" "$dir/err.txt" && ok=0
  if ((ok)); then echo "PASS $name"; else
    echo "FAIL $name: status $st (want $want); stderr: $err"
    failed=1
  fi
}
printf 'not an elf' >"$dir/bad.elf"
for t in "emberc:$emberc" "ember-run:$run" "ember-sim:$simexe" "ember-as:$as" \
         "ember-objdump:$objdump" "ember-isa:$isatool"; do
  name=${t%%:*} exe=${t#*:}
  extra=()
  [[ $name == ember-as ]] && extra=(-o "$dir/o.elf") # its one required option
  expect "$name unknown option" 2 "$name" "not expected: --frobnicate" -- \
    "$exe" "$dir/x" "${extra[@]}" --frobnicate
done
expect "emberc missing model" 1 emberc "nope.onnx" -- "$emberc" "$dir/nope.onnx" -o "$dir/o.elf"
expect "ember-run missing model" 1 ember-run "nope.onnx" -- "$run" "$dir/nope.onnx" --random-input 1
expect "ember-sim bad binary" 1 ember-sim "bad.elf" -- "$simexe" "$dir/bad.elf"
expect "ember-objdump bad binary" 1 ember-objdump "bad.elf" -- "$objdump" "$dir/bad.elf"
expect "ember-as missing source" 1 ember-as "nope.s" -- "$as" "$dir/nope.s" -o "$dir/o.elf"
expect "ember-isa missing description" 1 ember-isa "nope.json" -- "$isatool" check "$dir/nope.json"
expect "ember-sim number option" 2 ember-sim "--dram-window.*whole number" -- \
  "$simexe" "$dir/bad.elf" --dram-window 12x
# An output folder that cannot be created: the system's reason, not a C++ exception text.
expect "ember-run --out under a file" 1 ember-run "bad.elf is not a directory" -- \
  "$run" "$model" --random-input 1 --out "$dir/bad.elf/sub"
((failed)) && exit 1
echo "all message checks passed"
