#!/usr/bin/env bash
# output_paths.sh DIR EMBERC EMBER_RUN EMBER_SIM EMBER_AS MODEL.onnx X.npy EMBER_ISA DESC.json
# Hostile output paths for every tool that writes (issue 16, item 1; issue 47, item 3).
# Each check prints PASS/FAIL; the script fails if any check failed.
set -uo pipefail
dir=$1 emberc=$2 run=$3 simexe=$4 as=$5 model=$6 xnpy=$7 isatool=$8 desc=$9
rm -rf "$dir"
mkdir -p "$dir"
cp "$model" "$dir/m.onnx"
failed=0
check() { # check NAME COND...
  local name=$1
  shift
  if "$@"; then echo "PASS $name"; else echo "FAIL $name"; failed=1; fi
}
expect_status() { # expect_status WANT REGEX CMD... : status and stderr
  local want=$1 re=$2
  shift 2
  "$@" >"$dir/out.txt" 2>"$dir/err.txt"
  local st=$?
  if [[ $st -ne $want ]] || { [[ -n $re ]] && ! grep -Eq -- "$re" "$dir/err.txt"; }; then
    echo "  status $st (want $want); stderr: $(cat "$dir/err.txt")"
    return 1
  fi
}
no_temps() { ! compgen -G "$dir/*.tmp.*" >/dev/null && ! compgen -G "$dir/*/*.tmp.*" >/dev/null; }
sum() { sha256sum "$1" | cut -d' ' -f1; }

# A binary to run, compiled normally.
check "emberc compiles" expect_status 0 "" "$emberc" "$dir/m.onnx" -o "$dir/m.elf" -q
# The output equal to an input: refused, the model untouched.
before=$(sum "$dir/m.onnx")
check "emberc -o MODEL refused" expect_status 1 "m.onnx: is also an input" \
  "$emberc" "$dir/m.onnx" -o "$dir/m.onnx" -q
check "model untouched" test "$(sum "$dir/m.onnx")" = "$before"
ln -f "$dir/m.onnx" "$dir/hard.onnx"
check "emberc -o hard link of MODEL refused" expect_status 1 "is also an input" \
  "$emberc" "$dir/m.onnx" -o "$dir/hard.onnx" -q
check "ember-sim --report BIN refused" expect_status 1 "is also an input" \
  "$simexe" "$dir/m.elf" --report "$dir/m.elf"
check "ember-run --trace INPUT refused" expect_status 1 "is also an input" \
  "$run" "$dir/m.onnx" --device sim --input "x=$xnpy" --trace "$xnpy"
# Two outputs of one run in one file: refused before any work (ember-run BIN compared --html
# with the inputs only and wrote the report and the page to r.json, exit 0; found by
# tests/robustness/campaign.py).
check "ember-run BIN --html = --report refused" expect_status 1 "r.json" \
  "$run" "$dir/m.elf" --random-input 1 --report "$dir/r.json" --html "$dir/r.json"
check "  ... nothing written" test ! -e "$dir/r.json"
check "ember-run BIN --html = --trace refused" expect_status 1 "t.json" \
  "$run" "$dir/m.elf" --random-input 1 --trace "$dir/t.json" --html "$dir/t.json"
# The description a run reads without --isa ($EMBER_ISA here, else the default) is an
# input too: no tool writes onto it (each used to, exit 0).
cp "$desc" "$dir/desc.json"
dsum=$(sum "$dir/desc.json")
check "emberc -o \$EMBER_ISA refused" expect_status 1 "desc.json: is also an input" \
  env EMBER_ISA="$dir/desc.json" "$emberc" "$dir/m.onnx" -o "$dir/desc.json" -q
check "ember-run --report \$EMBER_ISA refused" expect_status 1 "desc.json: is also an input" \
  env EMBER_ISA="$dir/desc.json" "$run" "$dir/m.elf" --random-input 1 --report "$dir/desc.json"
check "ember-run MODEL --trace \$EMBER_ISA refused" expect_status 1 "is also an input" \
  env EMBER_ISA="$dir/desc.json" "$run" "$dir/m.onnx" --device sim --input "x=$xnpy" \
  --trace "$dir/desc.json"
check "ember-sim --report \$EMBER_ISA refused" expect_status 1 "desc.json: is also an input" \
  env EMBER_ISA="$dir/desc.json" "$simexe" "$dir/m.elf" --report "$dir/desc.json"
check "ember-as -o \$EMBER_ISA refused" expect_status 1 "desc.json: is also an input" \
  env EMBER_ISA="$dir/desc.json" "$as" /dev/null -o "$dir/desc.json"
check "ember-isa gen --md-tables \$EMBER_ISA refused" expect_status 1 "is also an input" \
  env EMBER_ISA="$dir/desc.json" "$isatool" gen --md-tables "$dir/desc.json"
check "  ... description untouched" test "$(sum "$dir/desc.json")" = "$dsum"
# A folder: refused with "is a directory" before any work (nothing on stdout).
mkdir -p "$dir/folder"
check "emberc -o FOLDER refused" expect_status 1 "folder: is a directory" \
  "$emberc" "$dir/m.onnx" -o "$dir/folder"
check "  ... before any work" test ! -s "$dir/out.txt"
check "ember-run --report FOLDER refused" expect_status 1 "is a directory" \
  "$run" "$dir/m.elf" --random-input 1 --report "$dir/folder"
check "ember-as -o FOLDER refused" expect_status 1 "is a directory" \
  "$as" /dev/null -o "$dir/folder"
check "missing folder refused" expect_status 1 "does not exist" \
  "$emberc" "$dir/m.onnx" -o "$dir/no/such/x.elf"
# A symbolic link: its target is replaced, the link stays a link.
echo old >"$dir/target.elf"
ln -s target.elf "$dir/link.elf"
check "emberc -o LINK" expect_status 0 "" "$emberc" "$dir/m.onnx" -o "$dir/link.elf" -q
check "  ... link still a link" test -L "$dir/link.elf"
check "  ... target replaced" cmp -s "$dir/target.elf" "$dir/m.elf"
ln -s nowhere.json "$dir/dangling.json"
check "dangling link written through" expect_status 0 "" \
  "$simexe" "$dir/m.elf" --no-table --report "$dir/dangling.json"
check "  ... link kept, target created" test -L "$dir/dangling.json" -a -s "$dir/nowhere.json"
# A FIFO: written through (a reader gets the bytes), still a FIFO afterwards.
mkfifo "$dir/fifo"
cat "$dir/fifo" >"$dir/from_fifo" &
reader=$!
check "emberc -o FIFO" expect_status 0 "" "$emberc" "$dir/m.onnx" -o "$dir/fifo" -q
wait $reader
check "  ... still a FIFO" test -p "$dir/fifo"
check "  ... reader got the binary" cmp -s "$dir/from_fifo" "$dir/m.elf"
# A character device (as /dev/null or /dev/full): written through, never replaced.
# Made here with mknod (root) so that a failure cannot damage the machine's /dev.
if [[ $(id -u) -eq 0 ]] && mknod "$dir/null" c 1 3 2>/dev/null && mknod "$dir/full" c 1 7; then
  check "emberc -o NULLDEV" expect_status 0 "" "$emberc" "$dir/m.onnx" -o "$dir/null" -q
  check "  ... still a device" test -c "$dir/null"
  check "ember-run --report NULLDEV" expect_status 0 "" \
    "$run" "$dir/m.elf" --random-input 1 --report "$dir/null"
  check "  ... still a device" test -c "$dir/null"
  check "emberc -o FULLDEV fails cleanly" expect_status 1 "full: cannot write: No space left" \
    "$emberc" "$dir/m.onnx" -o "$dir/full" -q
  check "  ... still a device" test -c "$dir/full"
else
  echo "SKIP character devices (mknod needs root)"
fi
check "no temporary files left" no_temps
((failed)) && exit 1
echo "all output-path checks passed"
