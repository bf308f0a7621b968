#!/usr/bin/python3
"""ONNX's backend node tests (package libonnx-testdata) through the command line only:
every case runs as a user would run it, `ember-run MODEL.onnx --input NAME=X.npy ...
--out DIR` on the interpreter, with no private option (ember-conformance, the in-process
runner, binds inputs through a library option instead).

  cli_conformance.py --ember-run BIN [--data DIR] [--filter REGEX] [--sample K]
                     [--jobs N] [--work DIR] [--json OUT] [--min-pass N] [--verbose]

The test data's TensorProto files become .npy files (onnx.numpy_helper). An int64 input
is passed with --bind (int64 inputs of the node tests are shape operands: Reshape's
target, Slice's bounds, TopK's k, ...); the others with --input. When ember-run answers
that an operand "must be known at compile time" and names the graph input it is, that
input is bound too and the case runs again; so is an integer input the operand is
computed from alone ("it is computed from the graph input 'size' alone": a window's
size cast to float); else (an operand computed from inputs) the last input not yet
bound, never the first, as ember-conformance does. Outputs are compared with ONNX's expected
outputs as ember-conformance does (rtol 1e-3, atol 1e-7 for floats, NaN equals NaN;
exact otherwise; the element type and the shape must match).

Prints one line per failing case with --verbose, then
"cli conformance: P of N cases pass (F fail, U unsupported)" (unsupported: ember-run
exits 1 with "ember-run: unsupported: ...", e.g. an operator Ember lacks). Exit status: 1
when a case fails (a wrong output, or any other error) or, with --min-pass N, fewer than N
pass; 77 when DIR does not exist (ctest: skipped); else 0.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

RTOL, ATOL = 1e-3, 1e-7
# .npy element types ember-run reads (base/src/Npy.cpp).
NPY_KINDS = {np.dtype(t) for t in ("float32", "int8", "int32", "int64", "bool", "float64",
                                   "float16", "uint8", "int16", "uint16", "uint32", "uint64")}
BOUND_INPUT = re.compile(r"must be known at compile time; it is the graph input '([^']*)'")
# An operand computed from one graph input alone (a window's size cast to float); the
# runner binds it when it holds integers (a size or a shape, never the data).
DERIVED_INPUT = re.compile(
    r"must be known at compile time; it is computed from the graph input '([^']*)' alone")


class Unsupported(Exception):
    pass


def npy_stem(name):
    """ember-run's output file stem (npyFileStem): [A-Za-z0-9_.-] kept, the rest '_'."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return stem or "_"


def compare(got, want):
    """"" when `got` matches `want`, else why not (ember-conformance's rule)."""
    if got.dtype != want.dtype:
        return f"element type {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if got.dtype.kind == "f":
        a, b = got.astype(np.float64), want.astype(np.float64)
        ok = (np.isnan(a) & np.isnan(b)) | (a == b) | (np.abs(a - b) <= ATOL + RTOL * np.abs(b))
    else:
        ok = got == want
    bad = int(np.size(ok) - np.count_nonzero(ok))
    if bad == 0:
        return ""
    first = int(np.flatnonzero(~np.asarray(ok).reshape(-1))[0])
    return (f"{bad} of {got.size} elements differ; first at {first}: got "
            f"{got.reshape(-1)[first]}, expected {want.reshape(-1)[first]}")


def run_set(ember_run, model, graph_inputs, outputs, data_set, work, bound_names):
    """Runs one test_data_set folder; returns "" or why it failed. Raises Unsupported."""
    args = [ember_run, model, "--out", os.path.join(work, "out"), "--quiet"]
    values = {}
    for i, name in enumerate(graph_inputs):
        path = os.path.join(data_set, f"input_{i}.pb")
        if not os.path.exists(path):
            break
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        a = numpy_helper.to_array(t)
        if a.dtype not in NPY_KINDS:
            raise Unsupported(f"input '{name}' is {a.dtype} (no .npy type ember-run reads)")
        values[name] = a
    while True:
        cmd = list(args)
        for k, (name, a) in enumerate(values.items()):
            npy = os.path.join(work, f"in{k}.npy")
            np.save(npy, a)
            bind = name in bound_names or a.dtype == np.int64
            cmd += ["--bind" if bind else "--input", f"{name}={npy}"]
        shutil.rmtree(os.path.join(work, "out"), ignore_errors=True)
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=120)
        if r.returncode == 0:
            break
        m = BOUND_INPUT.search(r.stderr)
        if m and m.group(1) in values and m.group(1) not in bound_names:
            bound_names.add(m.group(1))
            continue
        m = DERIVED_INPUT.search(r.stderr)
        if m and m.group(1) in values and m.group(1) not in bound_names and \
                values[m.group(1)].dtype.kind in "iu":
            bound_names.add(m.group(1))
            continue
        # An operand computed from inputs: bind the last input still given with --input
        # (never the first, the data), one more at a time.
        given = [n for n, a in values.items() if n not in bound_names and a.dtype != np.int64]
        if "must be known at compile time" in r.stderr and len(given) > 0 and \
                given[-1] != graph_inputs[0]:
            bound_names.add(given[-1])
            continue
        message = " ".join(r.stderr.split()) or f"exit status {r.returncode}"
        if r.returncode == 1 and "ember-run: unsupported: " in r.stderr:
            raise Unsupported(message)
        return message
    for i, name in enumerate(outputs):
        path = os.path.join(data_set, f"output_{i}.pb")
        if not os.path.exists(path):
            continue
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        want = numpy_helper.to_array(t)
        got_path = os.path.join(work, "out", npy_stem(name) + ".npy")
        if not os.path.exists(got_path):
            return f"output '{name}' was not written"
        why = compare(np.load(got_path), want)
        if why:
            return f"{os.path.basename(data_set)}: output '{name}': {why}"
    return ""


def run_case(ember_run, case_dir, work_root):
    """("pass" | "fail" | "unsupported", reason) of one case."""
    name = os.path.basename(case_dir)
    work = tempfile.mkdtemp(prefix=name + ".", dir=work_root)
    try:
        model_path = os.path.join(case_dir, "model.onnx")
        model = onnx.load(model_path)
        g = model.graph
        inits = {t.name for t in g.initializer}
        for vi in list(g.input) + list(g.output):
            if not vi.type.HasField("tensor_type"):
                return "unsupported", f"value '{vi.name}' is not a tensor"
        graph_inputs = [vi.name for vi in g.input if vi.name not in inits]
        outputs = [vi.name for vi in g.output]
        sets = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))
        if not sets:
            return "fail", "no test_data_set_* folder"
        bound = set()
        for s in sets:
            why = run_set(ember_run, model_path, graph_inputs, outputs,
                          os.path.join(case_dir, s), work, bound)
            if why:
                return "fail", why
        return "pass", ""
    except Unsupported as e:
        return "unsupported", str(e)
    except subprocess.TimeoutExpired:
        return "fail", "timed out"
    except Exception as e:  # a test file this script cannot read: the case fails
        return "fail", f"{type(e).__name__}: {e}"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--filter", default="", help="only the cases whose name matches REGEX")
    ap.add_argument("--sample", type=int, default=1,
                    help="only every K-th case in name order (default 1: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--work", default=None, help="folder for temporary files")
    ap.add_argument("--json", default=None, help="write every case's result as JSON")
    ap.add_argument("--min-pass", type=int, default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print(f"cli_conformance: no test data at {args.data} (package libonnx-testdata): skipped")
        return 77
    if args.sample < 1 or args.jobs < 1:
        print("cli_conformance: --sample and --jobs must be at least 1", file=sys.stderr)
        return 2
    cases = sorted(d for d in os.listdir(args.data)
                   if os.path.isfile(os.path.join(args.data, d, "model.onnx"))
                   and re.search(args.filter, d))[::args.sample]
    work_root = args.work or tempfile.mkdtemp(prefix="cli_conformance.")
    os.makedirs(work_root, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda c: (c, *run_case(args.ember_run, os.path.join(args.data, c), work_root)),
            cases))
    counts = {"pass": 0, "fail": 0, "unsupported": 0}
    for name, status, reason in results:
        counts[status] += 1
        if args.verbose and status != "pass":
            print(f"{status:11} {name}: {reason}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"total": {"cases": len(results), **counts},
                       "cases": [{"name": n, "status": s, "reason": r} for n, s, r in results]},
                      f, indent=1)
    print(f"cli conformance: {counts['pass']} of {len(results)} cases pass "
          f"({counts['fail']} fail, {counts['unsupported']} unsupported)")
    if not args.work:
        shutil.rmtree(work_root, ignore_errors=True)
    status = 0
    if counts["fail"]:
        print(f"FAIL: {counts['fail']} case(s) fail (not unsupported: a wrong result or an "
              "error; --verbose lists them)")
        status = 1
    if args.min_pass is not None and counts["pass"] < args.min_pass:
        print(f"FAIL: fewer than {args.min_pass} cases pass")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
