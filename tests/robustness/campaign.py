#!/usr/bin/env python3
"""An adversarial campaign against Ember's tools (issue 47, docs/robustness.md section 4).

From a seed, generates hostile inputs of nine families and runs the built tools on them:

  models        tiny ONNX models with byte flips, truncations, wrong opsets, absurd or
                negative shapes, dangling node inputs  (emberc, ember-run)
  packages      an emberc package with a mutated manifest (CRCs resealed) or flipped
                bytes  (ember-run, ember-objdump)
  descriptions  isa/ember-v1.json with JSON mutations  (ember-isa check, ember-as, emberc)
  npy           a valid input with corrupt headers, dtypes, shapes, data, NaN  (ember-run,
                ember-sim)
  paths         outputs equal to inputs, to each other, to folders, empty names
  python        ember.compile / load / run with hostile arrays and arguments
  jobs          ember-sim --jobs with mixes of good and bad binaries
  dse           ember-dse with bad axes (one tiny model, one point)
  rtl           ember-run BIN --device rtl --cycle-budget N on mutated binaries

Every run has a timeout, a data limit (RLIMIT_DATA: 6 GiB, 10 for --jobs) and a folder of its own whose files
(names, sizes, hashes) are listed before and after. A run is classified as:

  crash      killed by a signal, exit >= 128, or a crash text in its output (Segmentation,
             AddressSanitizer, terminate called, Fatal Python error, Aborted)
  hang       the timeout ran out
  exit0-bad  exit 0 on an input the generator knows is invalid (a file protobuf cannot
             parse, a description the schema refuses, a truncated .npy, an output that
             equals an input, ...); a mutation that may stay valid is never counted here
  stray      a file created or changed outside the run's declared outputs
  unclear    a refusal with no message, an exit status other than 0-3, or (Python) an
             exception other than ember.Error / ValueError / TypeError
  accepted   exit 0 on an input that may be valid
  ok         a refusal: exit 1, 2 or 3 with a message

Prints one table per family and exits 1 on any crash, hang, exit0-bad or stray file.

    /usr/bin/python3 tests/robustness/campaign.py --build build --seed 47 --runs-per-family 160
"""
import argparse
import concurrent.futures
import copy
import hashlib
import json
import os
import random
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

FAMILIES = ["models", "packages", "descriptions", "npy", "paths", "python", "jobs", "dse", "rtl"]
CRASH_TEXT = ["Segmentation", "AddressSanitizer", "UndefinedBehaviorSanitizer", "terminate called",
              "Fatal Python error", "Aborted (core dumped)", "core dumped", "runtime error:"]
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = {"emberc": "emberc", "ember-run": "ember-run", "ember-sim": "ember-sim",
         "ember-as": "ember-as", "ember-isa": "ember-isa", "ember-objdump": "ember-objdump",
         "ember-dse": "ember-dse"}


class Case:
    """One run: argv (tool names are replaced by their paths), the files to create in the
    run's folder, the outputs it may write (paths relative to the folder; a folder name
    covers everything under it), whether the generator knows the input is invalid."""

    def __init__(self, family, what, argv, files, outputs=(), invalid=False, timeout=60, env=None):
        self.family, self.what, self.argv, self.files = family, what, argv, files
        self.outputs, self.invalid, self.timeout, self.env = list(outputs), invalid, timeout, env or {}
        # The --jobs device reserves 8 GiB for its DRAM window (docs/firmware.md), which
        # RLIMIT_DATA counts: its runs get 10 GiB, every other run 6 GiB.
        self.memory_gib = 10 if family == "jobs" else 6


# ---------------------------------------------------------------------------------------
# Fixtures: built once per campaign in the work folder.

def crc32c(data, crc=0):
    table = crc32c.table
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _crc_table():
    out = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        out.append(c)
    return out


crc32c.table = _crc_table()


def package_entries(blob):
    """The entries of a package (docs/package.md section 1) as [(name, bytes)]."""
    n = struct.unpack_from("<I", blob, 12)[0]
    out = []
    for i in range(n):
        name, off, size = struct.unpack_from("<56sQQ", blob, 56 + 80 * i)
        out.append((name.rstrip(b"\0").decode(), blob[off:off + size]))
    return blob[16:48], out


def package_build(isa_hash, entries):
    """A package of ENTRIES with correct CRCs and layout (the writer's rules)."""
    n = len(entries)
    pos = 56 + 80 * n
    table, data = b"", b""
    for name, body in entries:
        pos = (pos + 7) // 8 * 8
        table += struct.pack("<56sQQII", name.encode(), pos, len(body), crc32c(body), 0)
        pos += len(body)
    head = b"EMBERPKG" + struct.pack("<II", 1, n) + isa_hash
    out = bytearray(head + struct.pack("<II", crc32c(table, crc32c(head)), 0) + table)
    for _, body in entries:
        out += b"\0" * ((-len(out)) % 8) + body
    out += b"\0" * ((-len(out)) % 8)
    return bytes(out)


def build_fixtures(work, tools):
    """Tiny models, their binary and package, a valid input, the description."""
    fx = {}
    models = os.path.join(work, "models")
    subprocess.run([sys.executable, os.path.join(SRC, "tests/compiler/npu/make_tiny_models.py"),
                    "--out", models], check=True)
    for name in ["tiny_cnn", "tiny_softmax", "identity"]:
        fx[name + ".onnx"] = open(os.path.join(models, name + ".onnx"), "rb").read()
    elf, pkg = os.path.join(work, "cnn.elf"), os.path.join(work, "sm.pkg")
    subprocess.run([tools["emberc"], os.path.join(models, "tiny_cnn.onnx"), "-o", elf, "-q"], check=True)
    subprocess.run([tools["emberc"], os.path.join(models, "tiny_softmax.onnx"), "-o", pkg, "-q"], check=True)
    fx["cnn.elf"], fx["sm.pkg"] = open(elf, "rb").read(), open(pkg, "rb").read()
    x = np.random.default_rng(1).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    path = os.path.join(work, "x.npy")
    np.save(path, x)
    fx["x.npy"] = open(path, "rb").read()
    fx["isa"] = open(os.path.join(SRC, "isa/ember-v1.json"), "rb").read()
    fx["schema"] = json.load(open(os.path.join(SRC, "isa/schema.json")))
    fx["empty.s"] = open(os.path.join(SRC, "tests/isa/data/empty.s"), "rb").read()
    fx["conv_tile.s"] = open(os.path.join(SRC, "tests/isa/data/conv_tile.s"), "rb").read()
    return fx


# ---------------------------------------------------------------------------------------
# Mutations.

def flip_bytes(rng, blob, count=None, lo=0, hi=None):
    b = bytearray(blob)
    hi = len(b) if hi is None else hi
    for _ in range(count or rng.randint(1, 8)):
        i = rng.randrange(lo, hi)
        b[i] ^= rng.randint(1, 255)
    return bytes(b)


def onnx_parses(blob):
    import warnings
    import onnx
    warnings.simplefilter("ignore", RuntimeWarning)  # protobuf's "Unexpected end-group tag"
    try:
        m = onnx.ModelProto()
        m.ParseFromString(blob)
        return True
    except Exception:  # noqa: BLE001 - any parse failure makes the file invalid
        return False


def schema_errors(value, schema, root, path="", limit=1):
    """The subset of JSON Schema libember_isa implements (isa/schema.json's description):
    the first error found, or None."""
    if "$ref" in schema:
        ref = schema["$ref"]
        node = root
        for part in ref.lstrip("#/").split("/"):
            node = node[part]
        return schema_errors(value, node, root, path)
    t = schema.get("type")
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool}
    if t == "integer":
        if isinstance(value, bool) or not (isinstance(value, int) or
                                           (isinstance(value, float) and value.is_integer())):
            return f"{path}: not an integer"
    elif t == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{path}: not a number"
    elif t in kinds and not isinstance(value, kinds[t]) or (t == "object" and isinstance(value, bool)):
        return f"{path}: not {t}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{path}: not in enum"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{path}: below minimum"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{path}: above maximum"
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", 1 << 60):
            return f"{path}: length"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", 1 << 60):
            return f"{path}: items"
        if "items" in schema:
            for i, v in enumerate(value):
                e = schema_errors(v, schema["items"], root, f"{path}/{i}")
                if e:
                    return e
    if isinstance(value, dict):
        for k in schema.get("required", []):
            if k not in value:
                return f"{path}: missing {k}"
        props = schema.get("properties", {})
        for k, v in value.items():
            if k in props:
                e = schema_errors(v, props[k], root, f"{path}/{k}")
                if e:
                    return e
            elif schema.get("additionalProperties") is False:
                return f"{path}: extra {k}"
            elif isinstance(schema.get("additionalProperties"), dict):
                e = schema_errors(v, schema["additionalProperties"], root, f"{path}/{k}")
                if e:
                    return e
    return None


def json_nodes(doc, path=()):
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from json_nodes(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from json_nodes(v, path + (i,))


def json_set(doc, path, value, delete=False):
    node = doc
    for p in path[:-1]:
        node = node[p]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value


def mutate_json(rng, doc):
    """One random mutation of DOC (a copy): (new doc, text of what changed)."""
    doc = copy.deepcopy(doc)
    nodes = [(p, v) for p, v in json_nodes(doc) if p]
    path, value = rng.choice(nodes)
    kind = rng.choice(["zero", "negative", "huge", "1e308", "string", "remove", "null", "list",
                       "float", "bool"])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        new = {"zero": 0, "negative": -abs(value) - 1, "huge": 2 ** 63 + 5, "1e308": 1e308,
               "string": "abc", "null": None, "list": [value], "float": value + 0.5,
               "bool": True}.get(kind)
    else:
        new = {"zero": 0, "negative": -1, "huge": 2 ** 64, "1e308": 1e308, "string": "",
               "null": None, "list": [], "float": 0.5, "bool": False}.get(kind)
    if kind == "remove" and isinstance(path[-1], str):
        json_set(doc, path, None, delete=True)
    else:
        json_set(doc, path, new)
    return doc, f"/{'/'.join(map(str, path))} {kind}"


def dumps(doc):
    return json.dumps(doc, allow_nan=True).encode()


# ---------------------------------------------------------------------------------------
# The families: each gen_* returns one Case from the random generator.

def gen_models(rng, fx):
    import onnx
    base_name = rng.choice(["tiny_cnn.onnx", "identity.onnx"])
    base = fx[base_name]
    kind = rng.choice(["flip", "flip", "truncate", "opset", "shape", "negative_dim", "dangling",
                       "empty", "garbage", "ir_version"])
    invalid = False
    if kind == "flip":
        blob = flip_bytes(rng, base)
    elif kind == "truncate":
        blob = base[:rng.randrange(1, len(base))]
    elif kind == "empty":
        blob = b""
    elif kind == "garbage":
        blob = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 4096)))
    else:
        m = onnx.load_from_string(base)
        if kind == "opset":
            m.opset_import[0].version = rng.choice([0, 1, 5, 99999, -3])
            invalid = m.opset_import[0].version <= 0 or m.opset_import[0].version > 1000
        elif kind == "ir_version":
            m.ir_version = rng.choice([0, -1, 1, 999])
        elif kind == "shape":
            dims = m.graph.input[0].type.tensor_type.shape.dim
            dims[rng.randrange(len(dims))].dim_value = rng.choice([0, 65536, 1 << 31, 1 << 40])
        elif kind == "negative_dim":
            dims = m.graph.input[0].type.tensor_type.shape.dim
            dims[rng.randrange(len(dims))].dim_value = -rng.randint(1, 100)
            invalid = True
        elif kind == "dangling":
            m.graph.node[rng.randrange(len(m.graph.node))].input[0] = "no_such_value"
            invalid = True
        blob = m.SerializeToString()
    if not onnx_parses(blob) or kind in ("empty",):
        invalid = True
    tool = rng.choice(["emberc", "emberc", "ember-run", "ember-run-sim"])
    if tool == "emberc":
        argv = ["emberc", "m.onnx", "-o", "out.elf", "-q"]
        outputs = ["out.elf"]
    else:
        argv = ["ember-run", "m.onnx", "--random-input", "1", "--quiet"]
        if tool == "ember-run-sim":
            argv += ["--device", "sim"]
        outputs = []
    return Case("models", f"{base_name} {kind} -> {tool}", argv, {"m.onnx": blob}, outputs,
                invalid)


def manifest_mutation(rng, manifest):
    """A mutation of the package manifest: (doc, what, sure invalid)."""
    kind = rng.choice(["random", "random", "random", "outputs_empty", "outputs_dup",
                       "value_oob", "backend", "version", "format", "segments_empty",
                       "not_json", "drop_key"])
    doc = copy.deepcopy(manifest)
    if kind == "random":
        doc, what = mutate_json(rng, doc)
        return doc, what, False
    if kind == "outputs_empty":
        doc["outputs"] = []
    elif kind == "outputs_dup":
        doc["outputs"] = doc["outputs"] + doc["outputs"][:1]
    elif kind == "value_oob":
        doc["outputs"][0]["value"] = rng.choice([len(doc["values"]), 9999, -2])
    elif kind == "backend":
        doc["segments"][rng.randrange(len(doc["segments"]))]["backend"] = "gpu"
    elif kind == "version":
        doc["version"] = rng.choice([0, 2, "1"])
    elif kind == "format":
        doc["format"] = "not-a-package"
    elif kind == "segments_empty":
        doc["segments"] = []
    elif kind == "not_json":
        return None, kind, True
    elif kind == "drop_key":
        key = rng.choice(["inputs", "outputs", "values", "segments"])
        del doc[key]
        kind += " " + key
    return doc, kind, True


def gen_packages(rng, fx):
    isa_hash, entries = package_entries(fx["sm.pkg"])
    kind = rng.choice(["manifest", "manifest", "manifest", "entry_flip", "header_flip",
                       "truncate", "entry_drop", "entry_rename"])
    invalid = True
    if kind == "manifest":
        manifest = json.loads(dict(entries)["manifest.json"])
        doc, what, invalid = manifest_mutation(rng, manifest)
        body = b"{\"format\": \"ember-package\", " if doc is None else dumps(doc)
        entries = [(n, body if n == "manifest.json" else b) for n, b in entries]
        blob = package_build(isa_hash, entries)
        kind = "manifest " + what
    elif kind == "entry_flip":
        n = struct.unpack_from("<I", fx["sm.pkg"], 12)[0]
        _, off, size = struct.unpack_from("<56sQQ", fx["sm.pkg"], 56 + 80 * rng.randrange(n))
        blob = flip_bytes(rng, fx["sm.pkg"], lo=off, hi=off + size)
    elif kind == "header_flip":
        blob = flip_bytes(rng, fx["sm.pkg"], count=1, lo=0, hi=48)
    elif kind == "truncate":
        blob = fx["sm.pkg"][:rng.randrange(0, len(fx["sm.pkg"]) - 8)]
    elif kind == "entry_drop":
        entries.pop(rng.randrange(len(entries)))
        blob = package_build(isa_hash, entries)
    else:
        i = rng.randrange(len(entries))
        entries[i] = ("seg9.elf" if i else "manifest.jsn", entries[i][1])
        blob = package_build(isa_hash, entries)
    if rng.random() < 0.7:
        argv, outputs = ["ember-run", "p.pkg", "--random-input", "1", "--out", "o", "--quiet"], ["o"]
    else:
        argv, outputs = ["ember-objdump", "p.pkg"], []
    return Case("packages", kind + " -> " + argv[0], argv, {"p.pkg": blob}, outputs, invalid)


def gen_descriptions(rng, fx):
    doc = json.loads(fx["isa"])
    kind = rng.choice(["json", "json", "json", "json", "syntax", "truncate", "type"])
    if kind == "json":
        doc, what = mutate_json(rng, doc)
        blob = dumps(doc)
        invalid = schema_errors(doc, fx["schema"], fx["schema"]) is not None
    elif kind == "syntax":
        text = fx["isa"]
        i = rng.randrange(len(text))
        blob = text[:i] + rng.choice([b"{", b"]", b",,", b"\0", b"\"", b"NaN"]) + text[i:]
        what, invalid = "syntax", True
        try:
            json.loads(blob)
            invalid = False  # the insertion happened to keep it JSON (inside a string)
        except ValueError:
            pass
    elif kind == "truncate":
        blob = fx["isa"][:rng.randrange(0, len(fx["isa"]) - 2)]
        what, invalid = "truncate", True
    else:
        blob = dumps(rng.choice([[], 1, "ember", None, [doc]]))
        what, invalid = "top-level type", True
    use = rng.choice(["check", "check", "as", "emberc"])
    if use == "check":
        argv, outputs = ["ember-isa", "check", "d.json"], []
    elif use == "as":
        argv, outputs = ["ember-as", "p.s", "--isa", "d.json", "-o", "p.elf"], ["p.elf"]
    else:
        argv, outputs = ["emberc", "m.onnx", "--isa", "d.json", "-o", "m.elf", "-q"], ["m.elf"]
    files = {"d.json": blob, "p.s": fx["empty.s"], "m.onnx": fx["identity.onnx"]}
    return Case("descriptions", f"{what} -> {use}", argv, files, outputs, invalid)


def npy_header(descr, fortran, shape):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def npy_blob(header, data, magic=b"\x93NUMPY", version=b"\x01\x00"):
    h = header.encode("latin1")
    pad = (-(len(magic) + 2 + 2 + len(h) + 1)) % 64
    h = h + b" " * pad + b"\n"
    return magic + version + struct.pack("<H", len(h)) + h + data


def gen_npy(rng, fx):
    x = np.random.default_rng(rng.randrange(1 << 30)).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    data = x.tobytes()
    good = "'<f4'", "False", "(1, 3, 16, 16)"
    kind = rng.choice(["truncate", "magic", "version", "header_len", "dtype", "shape", "fortran",
                       "nul_dtype", "nan", "inf", "bad_header", "huge_shape", "extra_data",
                       "big_endian", "flip"])
    invalid, unknown_ok = True, False
    descr, fortran, shape = good
    blob = None
    if kind == "truncate":
        blob = fx["x.npy"][:rng.randrange(0, len(fx["x.npy"]) - 1)]
    elif kind == "magic":
        blob = b"\x93NUMPX" + fx["x.npy"][6:]
    elif kind == "version":
        blob = npy_blob(npy_header(*good), data, version=rng.choice([b"\x09\x00", b"\x00\x00"]))
    elif kind == "header_len":
        b = bytearray(fx["x.npy"])
        struct.pack_into("<H", b, 8, rng.choice([0, 1, 0xFFFF, len(b)]))
        blob = bytes(b)
    elif kind == "dtype":
        descr = rng.choice(["'<f8'", "'|i1'", "'<i8'", "'<c8'", "'|O'", "'<U4'", "'<f2'"])
    elif kind == "shape":
        shape = rng.choice(["(1, 3, 16, 15)", "(3, 16, 16)", "()", "(1, 3, 16, 16, 1)", "(-1, 3, 16, 16)"])
    elif kind == "fortran":
        fortran, unknown_ok = "True", True
    elif kind == "nul_dtype":
        descr = "'<f4\\x00junk'"
    elif kind == "nan":
        x.flat[rng.randrange(x.size)] = np.nan
        blob, invalid = npy_blob(npy_header(*good), x.tobytes()), True
    elif kind == "inf":
        x.flat[rng.randrange(x.size)] = np.inf
        blob, invalid = npy_blob(npy_header(*good), x.tobytes()), False
    elif kind == "bad_header":
        blob = npy_blob(rng.choice(["{'descr': '<f4'", "[1, 2]", "{}", "{'descr': '<f4', 'shape': (1,3,16,16)}",
                                    "__import__('os')"]), data)
    elif kind == "huge_shape":
        shape = rng.choice(["(1, 3, 65536, 65536)", "(9223372036854775807,)", "(4294967296, 4294967296)"])
    elif kind == "extra_data":
        blob = fx["x.npy"] + b"\0" * rng.randint(1, 100)
    elif kind == "big_endian":
        descr, data, invalid = "'>f4'", x.astype(">f4").tobytes(), False
    elif kind == "flip":
        blob = flip_bytes(rng, fx["x.npy"], lo=0, hi=128)
        invalid = False
    if blob is None:
        blob = npy_blob(npy_header(descr, fortran, shape), data)
    use = rng.choice(["run-sim", "run-interp", "sim"])
    if unknown_ok or (kind == "nan" and use == "run-interp"):
        invalid = False  # a float run may take NaN (an int8 run may not: docs/robustness.md)
    if use == "run-sim":
        argv = ["ember-run", "cnn.elf", "--device", "sim", "--input", "x=x.npy", "--out", "o", "--quiet"]
    elif use == "run-interp":
        argv = ["ember-run", "m.onnx", "--input", "x=x.npy", "--out", "o", "--quiet"]
    else:
        argv = ["ember-sim", "cnn.elf", "--input", "x=x.npy", "--out", "o", "--no-table", "--no-progress"]
    files = {"x.npy": blob, "cnn.elf": fx["cnn.elf"], "m.onnx": fx["tiny_cnn.onnx"]}
    return Case("npy", f"{kind} -> {use}", argv, files, ["o"], invalid)


RUN_SIM = ["ember-run", "cnn.elf", "--device", "sim", "--random-input", "1", "--quiet"]
DIR = ("dir",)


def path_scenarios(fx):
    """(what, argv, extra files, declared outputs, sure invalid) for the paths family."""
    base = {"cnn.elf": fx["cnn.elf"], "m.onnx": fx["identity.onnx"], "p.s": fx["empty.s"],
            "d.json": fx["isa"], "folder": DIR, "x.npy": fx["x.npy"]}
    return base, [
        ("emberc -o input", ["emberc", "m.onnx", "-o", "m.onnx"], {}, [], True),
        ("emberc -o empty", ["emberc", "m.onnx", "-o", ""], {}, [], True),
        ("emberc -o folder", ["emberc", "m.onnx", "-o", "folder"], {}, [], True),
        ("emberc -o symlink to input", ["emberc", "m.onnx", "-o", "l.elf"],
         {"l.elf": ("symlink", "m.onnx")}, ["l.elf"], True),
        ("emberc -o hard link to input", ["emberc", "m.onnx", "-o", "h.elf"],
         {"h.elf": ("hardlink", "m.onnx")}, ["h.elf"], True),
        ("emberc -o --dump-lir same", ["emberc", "m.onnx", "-o", "a.elf", "--dump-lir", "a.elf"],
         {}, ["a.elf"], True),
        ("emberc --dump-profile input", ["emberc", "m.onnx", "-o", "a.elf", "--dump-profile", "m.onnx"],
         {}, ["a.elf"], True),
        ("emberc -o --isa", ["emberc", "m.onnx", "-o", "d.json", "--isa", "d.json"], {}, [], True),
        ("emberc -o missing folder", ["emberc", "m.onnx", "-o", "no/such/a.elf"], {}, ["no"], False),
        ("run --report input", RUN_SIM + ["--report", "cnn.elf"], {}, [], True),
        ("run --report empty", RUN_SIM + ["--report", ""], {}, [], True),
        ("run --report = --trace", RUN_SIM + ["--report", "r.json", "--trace", "r.json"], {}, ["r.json"], True),
        ("run --html = --report", RUN_SIM + ["--report", "r.json", "--html", "r.json"], {}, ["r.json"], True),
        ("run --report OUT/output", RUN_SIM + ["--out", "o", "--report", "o/logits.npy"], {}, ["o"], True),
        ("run --out input file", RUN_SIM + ["--out", "cnn.elf"], {}, [], True),
        ("run --out onto --input", ["ember-run", "cnn.elf", "--device", "sim", "--input",
                                    "x=o/logits.npy", "--out", "o", "--quiet"],
         {"o": DIR, "o/logits.npy": fx["x.npy"]}, [], True),
        ("run --report folder", RUN_SIM + ["--report", "folder"], {}, [], True),
        ("run --trace --isa", RUN_SIM + ["--trace", "d.json", "--isa", "d.json"], {}, [], True),
        # A partitioned run writes one report (no per-segment files): the package stays.
        ("run package named like a segment report", ["ember-run", "r.seg1.json", "--random-input",
                                                     "1", "--device", "sim", "--report", "r.json",
                                                     "--quiet"],
         {"r.seg1.json": fx["sm.pkg"]}, ["r.json"], False),
        ("sim --report input", ["ember-sim", "cnn.elf", "--report", "cnn.elf", "--no-progress"], {}, [], True),
        ("sim --report = --trace", ["ember-sim", "cnn.elf", "--report", "r.json", "--trace", "r.json",
                                    "--no-progress"], {}, ["r.json"], True),
        ("sim --out file", ["ember-sim", "cnn.elf", "--out", "x.npy", "--no-progress"], {}, [], True),
        ("sim --report empty", ["ember-sim", "cnn.elf", "--report", "", "--no-progress"], {}, [], True),
        ("sim --trace symlink to input", ["ember-sim", "cnn.elf", "--trace", "t.json", "--no-progress"],
         {"t.json": ("symlink", "cnn.elf")}, ["t.json"], True),
        ("as -o input", ["ember-as", "p.s", "-o", "p.s"], {}, [], True),
        ("as -o empty", ["ember-as", "p.s", "-o", ""], {}, [], True),
        ("as -o folder", ["ember-as", "p.s", "-o", "folder"], {}, [], True),
        ("as -o --isa", ["ember-as", "p.s", "-o", "d.json", "--isa", "d.json"], {}, [], True),
        ("isa gen --c-header onto --isa", ["ember-isa", "--isa", "d.json", "gen", "--c-header", "d.json"],
         {}, [], True),
        ("isa gen two outputs one file", ["ember-isa", "--isa", "d.json", "gen", "--c-header", "a.h",
                                          "--sv-package", "a.h"], {}, ["a.h"], True),
        ("dse --out file", ["ember-dse", "m.onnx", "--axis", "array=8", "--out", "x.npy", "--no-progress"],
         {}, [], True),
        ("dse --out onto model", ["ember-dse", "m.onnx", "--axis", "array=8", "--out", "m.onnx",
                                  "--no-progress"], {}, [], True),
    ]


def gen_paths(rng, fx):
    base, scenarios = path_scenarios(fx)
    what, argv, extra, outputs, invalid = rng.choice(scenarios)
    files = dict(base)
    files.update(extra)
    return Case("paths", what, argv, files, outputs, invalid)


PY_PRELUDE = """
import sys, numpy as np, ember
try:
%s
except (ember.Error, ValueError, TypeError, KeyError) as e:
    print("refused:", type(e).__name__, e, file=sys.stderr)
    sys.exit(1)
"""

PY_CASES = [
    # (what, code, sure invalid)
    ("huge broadcast view", "p.run({'x': np.broadcast_to(np.float32(1), (1 << 20, 1 << 20))}, device='sim')", True),
    ("huge broadcast right rank", "p.run({'x': np.broadcast_to(np.float32(1), (1 << 14, 3, 1 << 14, 1 << 14))}, "
     "device='sim')", True),
    ("wrong shape", "p.run({'x': np.zeros((1, 3, 16, 15), np.float32)}, device='sim')", True),
    ("wrong rank", "p.run({'x': np.zeros((3, 16, 16), np.float32)}, device='interp')", True),
    ("object dtype", "p.run({'x': np.full((1, 3, 16, 16), None, object)}, device='sim')", True),
    ("string dtype", "p.run({'x': np.full((1, 3, 16, 16), 'a')}, device='sim')", True),
    ("complex dtype", "p.run({'x': np.zeros((1, 3, 16, 16), np.complex64)}, device='sim')", True),
    ("nan int8 sim", "a = np.zeros((1, 3, 16, 16), np.float32); a[0, 1, 2, 3] = np.nan\n"
     "p.run({'x': a}, device='sim')", True),
    ("nan int8 interp", "a = np.zeros((1, 3, 16, 16), np.float32); a[0, 0, 0, 0] = np.nan\n"
     "p.run({'x': a}, device='interp')", True),
    ("0-d", "p.run({'x': np.float32(1)}, device='sim')", True),
    ("None value", "p.run({'x': None}, device='sim')", True),
    ("nested ragged list", "p.run({'x': [[1, 2], [3]]}, device='sim')", True),
    ("unknown input name", "p.run({'x': np.zeros((1, 3, 16, 16), np.float32), 'nope': np.zeros(3)}, "
     "device='sim')", True),
    ("missing input", "p.run({}, device='sim')", True),
    ("inputs not a dict", "p.run([np.zeros((1, 3, 16, 16), np.float32)], device='sim')", True),
    ("key not a string", "p.run({1: np.zeros((1, 3, 16, 16), np.float32)}, device='sim')", True),
    ("bad device", "p.run({'x': np.zeros((1, 3, 16, 16), np.float32)}, device='gpu')", True),
    ("strided view", "a = np.zeros((2, 6, 32, 33), np.float32)[::2, ::2, ::2, 1::2]\n"
     "print(p.run({'x': a}, device='sim'))", False),
    ("big-endian", "p.run({'x': np.zeros((1, 3, 16, 16), '>f4')}, device='sim')", False),
    ("float64", "p.run({'x': np.zeros((1, 3, 16, 16), np.float64)}, device='sim')", False),
    ("inf", "p.run({'x': np.full((1, 3, 16, 16), np.inf, np.float32)}, device='sim')", False),
    ("zero-size", "p.run({'x': np.zeros((0, 3, 16, 16), np.float32)}, device='sim')", True),
    ("save onto empty name", "p.save('')", True),
    ("save onto folder", "p.save('folder')", True),
    ("write_html empty", "p.write_html('')", True),
    ("compile /dev/null", "ember.compile('/dev/null')", True),
    ("compile folder", "ember.compile('folder')", True),
    ("compile bad target", "ember.compile('m.onnx', target='gpu')", True),
    ("compile bad precision", "ember.compile('m.onnx', precision='int4')", True),
    ("compile calibrate random:0", "ember.compile('m.onnx', calibrate='random:0')", True),
    ("compile calibrate random:-1", "ember.compile('m.onnx', calibrate='random:-1')", True),
    ("compile calibrate missing file", "ember.compile('m.onnx', calibrate='no.npy')", True),
    ("compile calibrate nan", "a = np.full((1, 3, 16, 16), np.nan, np.float32); np.save('c.npy', a)\n"
     "ember.compile('m.onnx', calibrate='c.npy')", True),
    ("compile bad calibration", "ember.compile('m.onnx', calibration='magic')", True),
    ("compile isa /dev/zero", "ember.compile('m.onnx', isa='/dev/zero')", True),
    ("compile isa folder", "ember.compile('m.onnx', isa='folder')", True),
    ("compile negative input shape", "ember.compile('m.onnx', input_shapes={'x': (1, 3, -1, 16)})", True),
    ("compile host_kinds int", "ember.compile('m.onnx', host_kinds=[123])", True),
    ("compile bind object", "ember.compile('m.onnx', bind={'x': object()})", True),
    ("load npy", "ember.load('x.npy')", True),
    ("load truncated elf", "open('t.elf', 'wb').write(open('cnn.elf', 'rb').read()[:100])\n"
     "ember.load('t.elf')", True),
    ("load onnx", "ember.load('m.onnx')", True),
    ("load isa /dev/zero", "ember.load('cnn.elf', isa='/dev/zero')", True),
]


def gen_python(rng, fx):
    what, code, invalid = rng.choice(PY_CASES)
    body = "    p = ember.load('cnn.elf')\n" + "\n".join("    " + l for l in code.split("\n"))
    files = {"cnn.elf": fx["cnn.elf"], "m.onnx": fx["tiny_cnn.onnx"], "x.npy": fx["x.npy"],
             "folder": DIR, "case.py": (PY_PRELUDE % body).encode()}
    return Case("python", what, ["python", "case.py"], files, ["c.npy", "t.elf"], invalid)


def bad_binary(rng, fx, kind=None):
    """A mutation of cnn.elf: (bytes, what, sure invalid)."""
    elf = fx["cnn.elf"]
    kind = kind or rng.choice(["flip", "flip_header", "truncate", "empty", "onnx", "zeros"])
    if kind == "flip":
        return flip_bytes(rng, elf), kind, False
    if kind == "flip_header":
        return flip_bytes(rng, elf, count=1, lo=0, hi=4), kind, True  # the ELF magic
    if kind == "truncate":
        return elf[:rng.randrange(0, len(elf) // 2)], kind, True
    if kind == "empty":
        return b"", kind, True
    if kind == "onnx":
        return fx["identity.onnx"], kind, True
    return b"\0" * len(elf), kind, True


def gen_jobs(rng, fx):
    files, names, whats, invalid = {"good.elf": fx["cnn.elf"]}, [], [], False
    for j in range(rng.randint(2, 5)):
        pick = rng.choice(["good", "good", "bad", "missing", "folder", "empty name"])
        if pick == "good":
            names.append("good.elf")
        elif pick == "bad":
            blob, what, sure = bad_binary(rng, fx)
            files[f"b{j}.elf"] = blob
            names.append(f"b{j}.elf")
            pick, invalid = what, invalid or sure
        elif pick == "missing":
            names.append("missing.elf")
            invalid = True
        elif pick == "folder":
            files["folder"] = DIR
            names.append("folder")
            invalid = True
        else:
            names.append("")
            invalid = True
        whats.append(pick)
    argv = ["ember-sim", "--jobs", ",".join(names), "--no-table", "--no-progress"]
    outputs = []
    if rng.random() < 0.5:
        argv += ["--out", "o"]
        outputs = ["o"]
    extra = rng.choice([[], [], ["--input", "x=x.npy"], ["--input", "nope=x.npy"], ["--cycle-budget", "100"]])
    if extra and extra[1].startswith("nope") or extra[:1] == ["--cycle-budget"]:
        invalid = True
    files["x.npy"] = fx["x.npy"]
    return Case("jobs", "+".join(whats) + " " + " ".join(extra), argv + extra, files, outputs, invalid)


def gen_dse(rng, fx):
    kind = rng.choice(["unknown axis", "bad value", "no values", "negative", "zero", "huge",
                       "pointer missing", "pointer type", "repeated", "bad model", "bad base"])
    axes, invalid, files = [], True, {"m.onnx": fx["identity.onnx"], "d.json": fx["isa"]}
    model = "m.onnx"
    if kind == "unknown axis":
        axes = ["frob=1"]
    elif kind == "bad value":
        axes = [rng.choice(["array=big", "act_kib=1.5.2", "array=8,,", "clock_mhz=nan"])]
    elif kind == "no values":
        axes = [rng.choice(["array=", "=8", "array"])]
    elif kind == "negative":
        axes, invalid = [rng.choice(["array=-8", "act_kib=-1", "dma_latency=-5"])], False
    elif kind == "zero":
        axes, invalid = [rng.choice(["array=0", "act_kib=0", "queue_depth=0", "clock_mhz=0"])], False
    elif kind == "huge":
        axes, invalid = [rng.choice(["array=1000000", "act_kib=99999999999", "burst_bytes=4294967296"])], False
    elif kind == "pointer missing":
        axes = ["/hardware/nope/x=1"]
    elif kind == "pointer type":
        axes, invalid = ["/name=1"], False
    elif kind == "repeated":
        axes, invalid = ["array=8", "array=16"], False
    elif kind == "bad model":
        files["m.onnx"] = fx["identity.onnx"][:40]
        axes = ["array=8"]
    else:
        files["d.json"] = fx["isa"][:100]
        axes = ["array=8"]
    argv = ["ember-dse", model, "--base", "d.json", "--out", "o", "--no-progress", "--calibrate", "random:1"]
    for a in axes:
        argv += ["--axis", a]
    return Case("dse", kind + " " + " ".join(axes), argv, files, ["o"], invalid, timeout=120)


def gen_rtl(rng, fx):
    kind = rng.choice(["flip", "truncate", "small budget", "zero budget", "good"])
    files = {"b.elf": fx["cnn.elf"]}
    budget, invalid = str(rng.choice([100000, 1000000])), False
    if kind in ("flip", "truncate"):
        files["b.elf"], kind, invalid = bad_binary(rng, fx, kind)
    elif kind == "small budget":
        budget, invalid = str(rng.choice([1, 100, 1000])), True  # the program needs ~7,600 cycles
    elif kind == "zero budget":
        budget, invalid = rng.choice(["0", "-1", "abc"]), True
    argv = ["ember-run", "b.elf", "--device", "rtl", "--cycle-budget", budget, "--random-input", "1",
            "--quiet"]
    return Case("rtl", f"{kind} budget {budget}", argv, files, [], invalid, timeout=120)


GENERATORS = {"models": gen_models, "packages": gen_packages, "descriptions": gen_descriptions,
              "npy": gen_npy, "paths": gen_paths, "python": gen_python, "jobs": gen_jobs,
              "dse": gen_dse, "rtl": gen_rtl}


# ---------------------------------------------------------------------------------------
# Running and classifying.

def make_files(folder, files):
    for name, body in sorted(files.items(), key=lambda kv: kv[1] != DIR):
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if body == DIR:
            os.makedirs(path, exist_ok=True)
        elif isinstance(body, tuple) and body[0] == "symlink":
            os.symlink(body[1], path)
        elif isinstance(body, tuple) and body[0] == "hardlink":
            os.link(os.path.join(folder, body[1]), path)
        else:
            with open(path, "wb") as f:
                f.write(body)


def listing(folder):
    """{relative path: (kind, size, hash)} of everything under FOLDER (links not followed)."""
    out = {}
    for root, dirs, names in os.walk(folder):
        for n in dirs + names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, folder)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p), "")
            elif os.path.isdir(p):
                out[rel] = ("dir", 0, "")
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", os.path.getsize(p), hashlib.sha256(f.read()).hexdigest())
    return out


def declared(rel, outputs):
    return any(rel == o or rel.startswith(o.rstrip("/") + "/") for o in outputs)


def memory_limit(gib):
    """A preexec function: at most GIB GiB of data (RLIMIT_DATA), no core files."""
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (gib << 30, gib << 30))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return limit


def run_case(case, tools, build, keep):
    folder = tempfile.mkdtemp(prefix=f"ember-{case.family}-")
    try:
        make_files(folder, case.files)
        before = listing(folder)
        argv = [tools.get(a, a) if i == 0 else a for i, a in enumerate(case.argv)]
        if argv[0] == "python":
            argv[0] = sys.executable
        env = dict(os.environ, TMPDIR=folder, PYTHONPATH=os.path.join(build, "python"),
                   PYTHONDONTWRITEBYTECODE="1", **case.env)
        env.pop("EMBER_ISA", None)
        start = time.monotonic()
        try:
            p = subprocess.run(argv, cwd=folder, env=env, capture_output=True, timeout=case.timeout,
                               preexec_fn=memory_limit(case.memory_gib), stdin=subprocess.DEVNULL)
            rc, out = p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            rc, out = None, ((e.stdout or b"") + (e.stderr or b"")).decode("utf-8", "replace")
        seconds = time.monotonic() - start
        after = listing(folder)
        stray = sorted(k for k, v in after.items() if before.get(k) != v and not declared(k, case.outputs))
        stray += sorted(k for k in before if k not in after and not declared(k, case.outputs))
        verdict = classify(case, rc, out, stray)
        return verdict, rc, out, stray, seconds
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def classify(case, rc, out, stray):
    if rc is None:
        return "hang"
    if rc < 0 or rc >= 128 or any(t in out for t in CRASH_TEXT):
        return "crash"
    if stray:
        return "stray"
    if rc == 0:
        return "exit0-bad" if case.invalid else "accepted"
    if rc in (1, 2, 3) and out.strip():
        if case.family == "python" and "Traceback" in out:
            return "unclear"
        return "ok"
    return "unclear"


COLUMNS = ["ok", "accepted", "crash", "hang", "exit0-bad", "stray", "unclear"]
FAILING = {"crash", "hang", "exit0-bad", "stray"}


def command_line(case, tools):
    return " ".join(repr(a) if (not a or " " in a) else a for a in case.argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="/work/main/build", help="the build folder (tools/*, python/)")
    ap.add_argument("--seed", type=int, default=47)
    ap.add_argument("--runs-per-family", type=int, default=160)
    ap.add_argument("--runs", action="append", default=[], metavar="FAMILY=K",
                    help="runs of one family (overrides --runs-per-family; repeatable)")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--jobs", type=int, default=2, help="runs at once")
    ap.add_argument("--keep", action="store_true", help="keep every run's folder")
    ap.add_argument("--verbose", action="store_true", help="print every run")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    tools = {name: os.path.join(build, "tools", name, name) for name in TOOLS}
    families = [f for f in args.families.split(",") if f]
    for f in families:
        if f not in GENERATORS:
            ap.error(f"unknown family '{f}' (families: {', '.join(FAMILIES)})")
    counts = {f: args.runs_per_family for f in families}
    for spec in args.runs:
        f, _, k = spec.partition("=")
        if f not in counts or not k.isdigit():
            ap.error(f"--runs {spec}: expects FAMILY=K with a family of --families")
        counts[f] = int(k)
    needed = {"dse": ["ember-dse"], "packages": ["ember-objdump"], "paths": ["ember-dse"]}
    for f in families:
        for t in ["emberc", "ember-run", "ember-sim", "ember-as", "ember-isa"] + needed.get(f, []):
            if not os.access(tools[t], os.X_OK):
                sys.exit(f"campaign: {tools[t]}: not built (family {f}); build it first")
    work = tempfile.mkdtemp(prefix="ember-campaign-")
    fx = build_fixtures(work, tools)
    cases = []
    for f in families:
        rng = random.Random(f"{args.seed}:{f}")
        cases += [GENERATORS[f](rng, fx) for _ in range(counts[f])]
    table = {f: dict.fromkeys(COLUMNS, 0) for f in families}
    failures, start = [], time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_case, c, tools, build, args.keep): c for c in cases}
        for fut in concurrent.futures.as_completed(futures):
            case = futures[fut]
            verdict, rc, out, stray, seconds = fut.result()
            table[case.family][verdict] += 1
            if args.verbose:
                print(f"{case.family:12} {verdict:9} rc={rc} {seconds:5.1f}s {case.what}", flush=True)
            if verdict in FAILING or (args.verbose and verdict == "unclear"):
                failures.append((case, verdict, rc, out, stray))
    shutil.rmtree(work, ignore_errors=True)
    print(f"seed {args.seed}: {len(cases)} runs in {time.monotonic() - start:.0f} s")
    print(f"{'family':14}{'runs':>6}" + "".join(f"{c:>10}" for c in COLUMNS))
    for f in families:
        row = table[f]
        print(f"{f:14}{sum(row.values()):>6}" + "".join(f"{row[c]:>10}" for c in COLUMNS))
    total = {c: sum(table[f][c] for f in families) for c in COLUMNS}
    print(f"{'total':14}{len(cases):>6}" + "".join(f"{total[c]:>10}" for c in COLUMNS))
    for case, verdict, rc, out, stray in failures:
        print(f"\n{verdict.upper()} [{case.family}] {case.what}: exit {rc}"
              + (f", stray files {stray}" if stray else ""))
        print(f"  command: {command_line(case, tools)}")
        tail = out.strip().splitlines()[-4:]
        for line in tail:
            print("  | " + line[:300])
    return 1 if any(v in FAILING for _, v, *_ in failures) else 0


if __name__ == "__main__":
    sys.exit(main())
