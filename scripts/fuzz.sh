#!/usr/bin/env bash
# Fuzz one of Ember's loaders with libFuzzer under ASan/UBSan for a while.
#   scripts/fuzz.sh TARGET [MINUTES] [extra libFuzzer flags...]
# TARGET: npy | elf | onnx | sim | isa | validate  (the .npy reader, the ELF loader, the
# ONNX importer, the simulator on random legal programs, the description loader, the
# firmware's job validator).
# Builds the target in build-fuzz/ (clang, EMBER_FUZZ=ON), copies the seed corpus into a
# scratch corpus under build-fuzz/fuzz-corpus/TARGET (never into the sources), runs for
# MINUTES (default 10) on one core and prints libFuzzer's final figures. A finding is
# written as build-fuzz/fuzz-artifacts/TARGET/crash-* and the script exits non-zero.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${1:?usage: scripts/fuzz.sh npy|elf|onnx|sim|isa|validate [MINUTES] [libFuzzer flags]}
minutes=${2:-10}
shift $(($# >= 2 ? 2 : 1))
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
if [[ ! -f "$build/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DEMBER_FUZZ=ON -DEMBER_WITH_LLVM=OFF >/dev/null
fi
isa=$root/isa/ember-v1.json
case "$target" in
  npy) exe=tests/tools/fuzz_npy seeds=("$root/tests/tools/fuzz_npy_corpus") maxlen=4096 ;;
  elf) exe=tests/isa/fuzz_elf_reader seeds=("$build/tests/isa/elf_seeds") maxlen=16384 ;;
  isa) exe=tests/isa/fuzz_isa_loader seeds=("$build/tests/isa/isa_seeds") maxlen=65536 ;;
  onnx) exe=tests/fuzz/onnx/fuzz_onnx maxlen=65536
        seeds=("$build/tests/compiler/importer/models") ;;
  sim) exe=tests/sim/fuzz_sim_program seeds=("$root/tests/sim/fuzz/corpus") maxlen=4096
       # SystemC keeps process-lifetime allocations that LeakSanitizer would report.
       export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} ;;
  validate) exe=tests/firmware/fuzz_fw_validate seeds=("$build/tests/firmware/fuzz_seeds")
            maxlen=16384 ;;
  package) exe=tests/fuzz/package/fuzz_package seeds=("$build/tests/fuzz/package/seeds")
           maxlen=262144 ;;
  *) echo "scripts/fuzz.sh: unknown target '$target' (npy, elf, onnx, sim, isa, validate, package)" >&2
     exit 2 ;;
esac
ninja -C "$build" "$exe" >/dev/null
# Seeds that are built (ELF binaries, importer models) come from their build targets.
case "$target" in
  elf | isa) ninja -C "$build" isa_fuzz_seeds >/dev/null ;;
  onnx) ninja -C "$build" ember_importer_models >/dev/null 2>&1 || true ;;
  package) ninja -C "$build" package_fuzz_seeds >/dev/null ;;
  validate) # the assembled test programs, as the ctest replay uses them
    ninja -C "$build" ember-as >/dev/null
    mkdir -p "$build/tests/firmware/fuzz_seeds"
    for p in empty conv_tile double_buffer; do
      "$build/tools/ember-as/ember-as" "$root/tests/isa/data/$p.s" \
        -o "$build/tests/firmware/fuzz_seeds/$p.elf"
    done ;;
esac
corpus=$build/fuzz-corpus/$target
artifacts=$build/fuzz-artifacts/$target
mkdir -p "$corpus" "$artifacts"
for s in "${seeds[@]}"; do
  [[ -e "$s" ]] && cp -r "$s"/. "$corpus"/ 2>/dev/null || true
done
echo "fuzzing $target for $minutes min: $build/$exe (corpus $corpus)"
start=$(date +%s)
set +e
EMBER_ISA=$isa "$build/$exe" -max_total_time=$((minutes * 60)) -max_len=$maxlen -timeout=25 \
  -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" "$@" "$corpus" \
  2>"$build/fuzz-$target.log"
status=$?
set -e
grep -E "^stat::|Done [0-9]+ runs|ERROR|SUMMARY" "$build/fuzz-$target.log" | tail -12
# UBSan reports do not stop libFuzzer (they are recoverable in this build): count them.
ub=$(grep -c "runtime error:" "$build/fuzz-$target.log" || true)
echo "fuzz $target: exit $status after $(($(date +%s) - start)) s; corpus $(ls "$corpus" | wc -l) files;" \
  "findings $(ls "$artifacts" | wc -l), UBSan reports $ub (log: $build/fuzz-$target.log)"
((ub == 0)) || status=1
exit $status
