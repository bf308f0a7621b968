#!/usr/bin/env bash
# cli_conventions.sh DIR VERSION TOOL=EXE... -- ISA.json PROGRAM.s
# One command line in every tool (issue 17, item 4; tools/cli, docs/robustness.md):
#   --version     prints "TOOL VERSION (... description NAME sha256 HEX16 ...)" and exits 0;
#                 HEX16 is the start of the hash a binary of the default description records
#   --help        exits 0 with CLI11's usage line, the options and the exit statuses
#   an unknown option, a missing argument or value: exit 2, the message names it
#   a bad input file: exit 1, the message names the file
#   a program that faults on the NPU: exit 3 (ember-sim, ember-sim --jobs, ember-run)
# TOOL is one of emberc ember-run ember-sim ember-dse ember-as ember-objdump ember-isa
# ember-conformance; a tool not given (not built) is left out. PROGRAM.s assembles to a
# binary that runs without a fault; the script makes a deadlocking one itself.
set -uo pipefail
dir=$1 version=$2
shift 2
declare -A exe
while (($#)) && [[ "$1" != "--" ]]; do
  exe[${1%%=*}]=${1#*=}
  shift
done
shift
isa=$1 program=$2
rm -rf "$dir"
mkdir -p "$dir"
failed=0

# check NAME STATUS STREAM REGEX... -- CMD...: CMD exits with STATUS and STREAM (stdout or
# stderr) matches every REGEX (grep -E).
check() {
  local name=$1 want=$2 stream=$3
  shift 3
  local patterns=()
  while [[ "$1" != "--" ]]; do
    patterns+=("$1")
    shift
  done
  shift
  "$@" >"$dir/out.txt" 2>"$dir/err.txt"
  local st=$? ok=1 p
  local file=$dir/out.txt
  [[ $stream == stderr ]] && file=$dir/err.txt
  [[ $st -eq $want ]] || ok=0
  for p in "${patterns[@]}"; do
    grep -Eq -- "$p" "$file" || ok=0
  done
  if ((ok)); then
    echo "PASS $name"
  else
    echo "FAIL $name: status $st (want $want), $stream does not match all of: ${patterns[*]}"
    echo "  stdout: $(head -c 600 "$dir/out.txt")"
    echo "  stderr: $(head -c 600 "$dir/err.txt")"
    failed=1
  fi
}
has() { [[ -n "${exe[$1]:-}" ]]; }

# The description hash a binary records (ember-objdump lists the .ember.isa section's
# bytes as a comment), to compare with what --version prints.
hash16=
if has ember-as && has ember-objdump; then
  "${exe[ember-as]}" "$program" -o "$dir/good.elf" --isa "$isa" || failed=1
  hash16=$(EMBER_ISA=$isa "${exe[ember-objdump]}" "$dir/good.elf" |
    grep -Eo 'sha256 [0-9a-f]{64}' | head -1 | cut -c8-23)
  [[ -n $hash16 ]] || { echo "FAIL: no description hash in ember-objdump's listing"; failed=1; }
fi
[[ -n $hash16 ]] || hash16='[0-9a-f]{16}'
name=$(grep -Eo '"name" *: *"[^"]+"' "$isa" | head -1 | sed -E 's/.*"([^"]+)"$/\1/')
v=${version//./\\.}

for tool in emberc ember-run ember-sim ember-dse ember-as ember-objdump ember-isa ember-conformance; do
  has "$tool" || continue
  x=${exe[$tool]}
  if [[ $tool == ember-conformance ]]; then
    line="^$tool $v \\(description $name sha256 $hash16\\)\$"
  else
    line="^$tool $v \\(default description $name sha256 $hash16; --isa selects another\\)\$"
  fi
  EMBER_ISA=$isa check "$tool --version" 0 stdout "$line" -- "$x" --version
  check "$tool --help" 0 stdout "^Usage: $tool " "--version" "exit status" -- "$x" --help
done

# Unknown options: exit 2, named, with the pointer to --help (the other arguments are
# complete, so the option is the only thing wrong).
m=$dir/nope.onnx
has emberc && check "emberc unknown option" 2 stderr "not expected: --frobnicate" \
  "see emberc --help" -- "${exe[emberc]}" "$m" -o "$dir/o.elf" --frobnicate
has ember-run && check "ember-run unknown option" 2 stderr "not expected: --frobnicate" -- \
  "${exe[ember-run]}" "$m" --frobnicate
has ember-sim && check "ember-sim unknown option" 2 stderr "not expected: --frobnicate" -- \
  "${exe[ember-sim]}" "$dir/good.elf" --frobnicate
has ember-as && check "ember-as unknown option" 2 stderr "not expected: --frobnicate" -- \
  "${exe[ember-as]}" "$program" -o "$dir/o.elf" --frobnicate
has ember-objdump && check "ember-objdump unknown option" 2 stderr "not expected: --frobnicate" \
  -- "${exe[ember-objdump]}" "$dir/good.elf" --frobnicate
has ember-isa && check "ember-isa unknown option" 2 stderr "not expected: --frobnicate" -- \
  "${exe[ember-isa]}" check "$isa" --frobnicate
has ember-conformance && check "ember-conformance unknown option" 2 stderr \
  "not expected: --frobnicate" -- "${exe[ember-conformance]}" --frobnicate

# Missing arguments and option values: exit 2, named.
has emberc && check "emberc no model" 2 stderr "no model given" -- "${exe[emberc]}"
has emberc && check "emberc no output" 2 stderr "no output given" -- "${exe[emberc]}" "$m"
has ember-run && check "ember-run no model" 2 stderr "MODEL is required" -- "${exe[ember-run]}"
has ember-sim && check "ember-sim no binary" 2 stderr "no binary given" -- "${exe[ember-sim]}"
has ember-as && check "ember-as no -o" 2 stderr "-o is required" -- "${exe[ember-as]}" "$program"
has ember-as && check "ember-as no source" 2 stderr "IN is required" -- \
  "${exe[ember-as]}" -o "$dir/o.elf"
has ember-objdump && check "ember-objdump no binary" 2 stderr "IN is required" -- \
  "${exe[ember-objdump]}"
has ember-isa && check "ember-isa no command" 2 stderr "no command given" -- \
  "${exe[ember-isa]}"
has ember-isa && check "ember-isa --isa without value" 2 stderr "--isa: 1 required" -- \
  "${exe[ember-isa]}" check --isa
has ember-conformance && check "ember-conformance --data without value" 2 stderr \
  "--data: 1 required DIR missing" -- "${exe[ember-conformance]}" --data

# Bad input files: exit 1, the file named.
printf 'not an elf' >"$dir/bad.elf"
mkdir -p "$dir/no_cases"
has emberc && check "emberc missing model" 1 stderr "nope.onnx" -- \
  "${exe[emberc]}" "$m" -o "$dir/o.elf"
has emberc && check "emberc missing description" 1 stderr "nope.json" -- \
  "${exe[emberc]}" "$m" -o "$dir/o.elf" --isa "$dir/nope.json"
has ember-run && check "ember-run missing model" 1 stderr "nope.onnx" -- \
  "${exe[ember-run]}" "$m" --random-input 1
has ember-sim && check "ember-sim bad binary" 1 stderr "bad.elf" -- "${exe[ember-sim]}" "$dir/bad.elf"
has ember-as && check "ember-as missing source" 1 stderr "nope.s" -- \
  "${exe[ember-as]}" "$dir/nope.s" -o "$dir/o.elf"
has ember-objdump && check "ember-objdump bad binary" 1 stderr "bad.elf" -- \
  "${exe[ember-objdump]}" "$dir/bad.elf"
has ember-isa && check "ember-isa missing description" 1 stderr "nope.json" -- \
  "${exe[ember-isa]}" check "$dir/nope.json"
has ember-conformance && check "ember-conformance unwritable --json" 1 stderr "no_dir/r.json" -- \
  "${exe[ember-conformance]}" --data "$dir/no_cases" --json "$dir/no_dir/r.json"

# A program that deadlocks on the NPU: exit 3, the fault printed.
if has ember-as; then
  printf '%s\n' "sync engine=load pop_next push_next" "sync engine=compute pop_prev push_prev" \
    "finish" >"$dir/dead.s"
  "${exe[ember-as]}" "$dir/dead.s" -o "$dir/dead.elf" --isa "$isa" || failed=1
  has ember-sim && check "ember-sim fault" 3 stderr "dead.elf: .*fault deadlock" -- \
    "${exe[ember-sim]}" "$dir/dead.elf" --isa "$isa" --no-table
  has ember-sim && check "ember-sim --jobs fault" 3 stdout "job 1 .*dead.elf" -- \
    "${exe[ember-sim]}" --jobs "$dir/good.elf,$dir/dead.elf" --isa "$isa"
  has ember-run && check "ember-run fault" 3 stderr "dead.elf: .*fault deadlock" -- \
    "${exe[ember-run]}" "$dir/dead.elf" --isa "$isa" --quiet
fi

((failed)) && exit 1
echo "all command-line convention checks passed"
