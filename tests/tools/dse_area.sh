#!/usr/bin/env bash
# dse_area.sh EMBER_DSE YOSYS PYTHON MODEL.onnx OUT: ember-dse --area on the smallest
# arrays (docs/extending-isa.md section 4, "Area"). A sweep array=3,4,8 (3 is invalid: not a
# power of two) with small queues (Yosys is quick on them) must:
#  - give the invalid point a row and no area ("skipped"), and fill the area of the others;
#  - count what the description asks for (closed forms, not the tool's own figures):
#    MAC_COLS = L columns of the MAC array, L vector lanes, SRAM bits = 8 x the sum of the
#    SRAMs' size_bytes; the MAC array (L columns of L int8 products each) at least 3x
#    larger at 8 x 8 than at 4 x 4 (4x the products), and the whole NPU larger;
#  - run again from the cache: the same figures, no Yosys synthesis (a wrapper around
#    Yosys logs every call; only `yosys -V` may run);
#  - name a failing synthesis per point (a Yosys that fails) without failing the sweep;
#  - refuse --area with no Yosys, naming what is missing.
set -uo pipefail
dse=$1 yosys=$2 python=$3 model=$4 out=$5
rm -rf "$out"
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

# A Yosys that logs its calls, and one that fails every synthesis.
cat >"$out/yosys-logged" <<EOF
#!/bin/sh
echo "\$*" >>"$out/yosys.calls"
exec "$yosys" "\$@"
EOF
cat >"$out/yosys-failing" <<EOF
#!/bin/sh
if [ "\$1" = -V ]; then exec "$yosys" -V; fi
echo "ERROR: this Yosys always fails (test)" >&2
exit 1
EOF
chmod +x "$out/yosys-logged" "$out/yosys-failing"

axes=(--axis array=3,4,8 --axis queue_depth=2)
sweep() { # sweep NAME YOSYS [extra args...]
  local name=$1 y=$2
  shift 2
  "$dse" "$model" "${axes[@]}" --area --yosys "$y" --area-cache "$cache" --jobs 2 \
    --out "$out/$name" --no-progress "$@" >"$out/$name.stdout" 2>&1
  local status=$?
  cat "$out/$name.stdout"
  ((status == 0)) || fail "$name: exit status $status, expected 0"
}

cache=$out/cache
start=$(date +%s)
sweep first "$out/yosys-logged"
echo "first sweep: $(($(date +%s) - start)) s"
synths=$(grep -vc '^-V$' "$out/yosys.calls")
((synths >= 2)) || fail "first sweep: $synths Yosys syntheses, expected at least 2"

# The CSV's columns by name, and the per-point area records, checked in Python.
"$python" - "$out/first" <<'EOF' || fail "first sweep: area figures"
import csv, json, os, sys
out = sys.argv[1]
rows = {int(r["point"]): r for r in csv.DictReader(open(f"{out}/dse.csv"))}
assert len(rows) == 3, f"{len(rows)} rows"
assert rows[0]["status"] == "invalid" and rows[0]["area_status"] == "skipped", rows[0]
assert "invalid" in rows[0]["area_message"], rows[0]
mac = {}
for p, side in ((1, 4), (2, 8)):
    r = rows[p]
    assert r["area_status"] == "ok", r
    assert r["area_cached"] == "0", r
    assert int(r["npu_cells"]) > 0 and int(r["npu_flip_flops"]) > 0, r
    desc = json.load(open(f"{out}/descriptions/p{p}.json"))
    bits = 8 * sum(m["size_bytes"] for m in desc["hardware"]["memories"].values())
    assert int(r["sram_bits"]) == bits, (r["sram_bits"], bits)
    rec = json.load(open(f"{out}/area/p{p}.json"))
    mods = {m["module"]: m for m in rec["area"]["npu"]["modules"]}
    assert mods["ember_mac_column"]["instances"] == side, mods["ember_mac_column"]
    assert mods["ember_vector_lane"]["instances"] == side, mods["ember_vector_lane"]
    mac[side] = side * mods["ember_mac_column"]["cells"]
    assert rec["cells"] == int(r["npu_cells"]), rec
assert mac[8] >= 3 * mac[4], f"MAC array cells {mac}: 8 x 8 should be about 4x 4 x 4"
assert int(rows[2]["npu_cells"]) > int(rows[1]["npu_cells"]), "the NPU did not grow"
print(f"area: 4x4 {rows[1]['npu_cells']} cells, 8x8 {rows[2]['npu_cells']} cells; MAC array {mac}")
EOF
grep -q 'NPU logic cells' "$out/first/dse.html" || fail "no area chart in dse.html"
grep -Eq '^area: 2 points synthesized .*0 from the cache' "$out/first.stdout" ||
  fail "first sweep: no 'area: 2 points synthesized' line"

# Again: everything from the cache, no synthesis.
: >"$out/yosys.calls"
start=$(date +%s)
sweep again "$out/yosys-logged"
echo "second sweep: $(($(date +%s) - start)) s"
synths=$(grep -vc '^-V$' "$out/yosys.calls")
((synths == 0)) || fail "second sweep ran Yosys $synths times: $(cat "$out/yosys.calls")"
grep -Eq '^area: 0 points synthesized .*2 from the cache' "$out/again.stdout" ||
  fail "second sweep: not from the cache"
"$python" - "$out/first/dse.csv" "$out/again/dse.csv" <<'EOF' || fail "second sweep: figures differ"
import csv, sys
a, b = ([r for r in csv.DictReader(open(f))] for f in sys.argv[1:3])
for x, y in zip(a, b):
    for k in ("area_status", "npu_cells", "npu_flip_flops", "sram_bits", "area_pareto"):
        assert x[k] == y[k], (k, x[k], y[k])
    assert y["area_cached"] == ("1" if y["area_status"] == "ok" else ""), y
EOF

# A synthesis that fails (a fresh cache): a per-point message, the sweep goes on (exit 0).
axes=(--axis array=4 --axis queue_depth=2)
cache=$out/cache-failing
sweep failing "$out/yosys-failing"
grep -Eq '^0,4,2,lenet,ok,.*,failed,' "$out/failing/dse.csv" || fail "no failed area row"
grep -q 'ERROR: this Yosys always fails' "$out/failing/dse.csv" || fail "the CSV lacks Yosys' error"
grep -q 'point 0 area: failed: synthesis failed' "$out/failing.stdout" &&
  grep -q '^ERROR: this Yosys always fails' "$out/failing.stdout" ||
  fail "the table does not name the failed synthesis and Yosys' error"

# No Yosys: exit status 1 naming it, before any work.
"$dse" "$model" --axis array=4 --area --yosys ember-no-such-yosys --out "$out/none" \
  --no-progress >"$out/none.stdout" 2>&1
status=$?
cat "$out/none.stdout"
((status == 1)) || fail "no Yosys: exit status $status, expected 1"
grep -q "Yosys not found: no 'ember-no-such-yosys' on PATH" "$out/none.stdout" ||
  fail "no Yosys: not named"
[[ -z $(find "$out" -name '*.tmp*' -o -name .area) ]] || fail "temporary files left in $out"
echo "PASS"
