#!/usr/bin/env python3
"""No string attribute reads outside the ONNX importer and the typed views (issue 45,
"the rules once"; ember/graph/AttrViews.h):

a node's attributes are read by name (Attrs::getInt, getInts, getFloat, getFloats,
getString, has) only in

- compiler/importer/ (it resolves ONNX's attributes into Ember's canonical ones),
- the views: compiler/include/ember/graph/AttrViews.h and attrs/*.h, and their sources
  compiler/graph/AttrViews.cpp and compiler/graph/*Attrs.cpp,
- the Attrs class itself (compiler/include/ember/graph/Node.h, compiler/graph/Node.cpp).

Everything else in compiler/ (type inference, passes, quantization, the interpreter, the
backends, the driver) reads a view, so that an attribute's name and default are written
once. Writing attributes (Attrs::set) is not a read and stays allowed.

usage: check_attr_reads.py SOURCE_DIR     exit 1, listing every read, when one is found
       check_attr_reads.py --count DIR    print the number of reads (for reports)
       check_attr_reads.py --self-test    the check catches a read and spares comments,
                                          the importer and the views
"""
import os
import re
import sys
import tempfile

# The getters of Attrs (compiler/include/ember/graph/Node.h); `has` only as a member call.
READ = re.compile(r"\b(getInts|getInt|getFloats|getFloat|getString)\s*\(|(?:\.|->)\s*has\s*\(")

ALLOWED_DIRS = ("compiler/importer/", "compiler/include/ember/graph/attrs/")
ALLOWED_FILES = {
    "compiler/include/ember/graph/AttrViews.h",
    "compiler/graph/AttrViews.cpp",
    "compiler/include/ember/graph/Node.h",
    "compiler/graph/Node.cpp",
}
VIEW_SOURCE = re.compile(r"^compiler/graph/\w+Attrs\.cpp$")


def allowed(rel):
    return rel.startswith(ALLOWED_DIRS) or rel in ALLOWED_FILES or VIEW_SOURCE.match(rel)


def strip_comments_and_strings(text):
    """The text with comments and string/char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def reads(root):
    """[(relative path, line number, line)] of every string attribute read."""
    found = []
    base = os.path.join(root, "compiler")
    for d, dirs, names in os.walk(base):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith((".cpp", ".h")):
                continue
            path = os.path.join(d, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if allowed(rel):
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            lines = text.split("\n")
            code = strip_comments_and_strings(text).split("\n")
            for no, line in enumerate(code, 1):
                for _ in READ.finditer(line):
                    found.append((rel, no, lines[no - 1].strip()))
    return found


def self_test():
    files = {
        "compiler/passes/Bad.cpp": 'int64_t a = n.attrs().getInt("axis", 0);\n'
        '// a comment may say getInt("axis")\n'
        'const char* s = "getString(";\n'
        "bool h = n->attrs().has(kName);\n",
        "compiler/importer/onnx/Imp.cpp": 'int64_t a = at.getInt("axis", 0);\n',
        "compiler/graph/ReductionAttrs.cpp": 'r.axes = a.getInts("axes");\n',
        "compiler/include/ember/graph/attrs/X.h": 'bool p = a.has("x");\n',
        "compiler/backends/cpu/Gen.cpp": "auto* t = ctx.builder().getInt8Ty();\n",
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        got = [(rel, no) for rel, no, _ in reads(root)]
    want = [("compiler/passes/Bad.cpp", 1), ("compiler/passes/Bad.cpp", 4)]
    if got != want:
        print(f"self-test FAILED: found {got}, expected {want}")
        return 1
    print("self-test: a getInt and a has() in a pass are caught; comments, strings, the "
          "importer and the views are not")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) == 3 and argv[1] == "--count":
        print(len(reads(argv[2])))
        return 0
    if len(argv) != 2:
        print(__doc__)
        return 2
    found = reads(argv[1])
    for rel, no, line in found:
        print(f"{rel}:{no}: string attribute read outside the importer and the views "
              f"(use a view of ember/graph/AttrViews.h): {line}")
    if found:
        print(f"{len(found)} string attribute read(s) outside compiler/importer/ and the views")
        return 1
    print("no string attribute reads outside compiler/importer/ and the views")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
