#!/usr/bin/env python3
"""Every switch over node kinds is either complete or named (issue 45, "the rules once"):

A `switch` in compiler/ whose cases are node kinds (`case NodeKind::X` or, where the file
says `using K = NodeKind`, `case K::X`) is one of two things:

- complete: no `default:`, every kind of Nodes.def a case. The compiler's -Wswitch (an
  error here) then catches a kind added to Nodes.def and forgotten; this script checks it
  too;
- named: it has a `default:`. Then it must be listed in SWITCHES_FILE with the kinds that
  deliberately take its default, and named (its file and function) in the
  add-an-operator checklist of the documentation (the section headed "Adding an
  operator"). Every kind of Nodes.def must be a case of it or listed as taking its
  default, so a kind added to Nodes.def fails this check until someone has looked at
  each named switch and decided.

usage: check_kind_switches.py SOURCE_DIR     exit 1, listing every problem
       check_kind_switches.py --list DIR     print the switches found
       check_kind_switches.py --self-test    the check catches a new kind, an unnamed
                                             switch and an incomplete complete one
"""
import json
import os
import re
import sys
import tempfile

NODES_DEF = "compiler/include/ember/graph/Nodes.def"
SWITCHES_FILE = "tests/architecture/data/kind_switches.json"

KIND = re.compile(r"^\s*EMBER_NODE\(\s*(\w+)\s*,", re.M)
SWITCH = re.compile(r"\bswitch\s*\(")
# A function header: a name and an opening parenthesis on a line that does not end a
# statement, indented less than the switch (the nearest one above the switch).
HEADER = re.compile(r"^(\s*)(?:[\w:<>,*&\s]+?[\s*&])?(~?\w+)\s*\([^;]*$")
KEYWORDS = {"if", "for", "while", "switch", "return", "catch", "sizeof", "case"}
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")


def kinds_of(root):
    with open(os.path.join(root, NODES_DEF), encoding="utf-8") as f:
        return KIND.findall(f.read())


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def body_of(text, start):
    """The text of the block that opens at the first '{' after `start`."""
    i = text.index("{", start)
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
    return text[i + 1:]


def function_of(lines, line_no):
    """The name of the function around line `line_no` (1-based)."""
    indent = len(lines[line_no - 1]) - len(lines[line_no - 1].lstrip())
    for k in range(line_no - 2, -1, -1):
        m = HEADER.match(lines[k])
        if m and len(m.group(1)) < indent and m.group(2) not in KEYWORDS:
            return m.group(2)
    return "?"


def switches(root):
    """[(id "path:function", set of case kinds, has default)] of every kind switch."""
    found = []
    for d, dirs, names in os.walk(os.path.join(root, "compiler")):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith((".cpp", ".h")):
                continue
            path = os.path.join(d, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                text = strip_comments(f.read())
            prefixes = ["NodeKind"]
            alias = re.search(r"using\s+(\w+)\s*=\s*(?:ember::)?NodeKind\s*;", text)
            if alias:
                prefixes.append(alias.group(1))
            case = re.compile(r"\bcase\s+(?:ember::)?(?:%s)::(\w+)\s*:" % "|".join(prefixes))
            lines = text.split("\n")
            for m in SWITCH.finditer(text):
                body = body_of(text, m.end())
                cases = set(case.findall(body))
                if not cases:
                    continue
                line_no = text.count("\n", 0, m.start()) + 1
                fn = function_of(lines, line_no)
                has_default = re.search(r"\bdefault\s*:", body) is not None
                found.append((f"{rel}:{fn}", cases, has_default))
    return found


def checklist_text(root):
    """The "Adding an operator" section of the documentation ("" when there is none)."""
    for d, dirs, names in sorted(os.walk(os.path.join(root, "docs"))):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(".md"):
                continue
            with open(os.path.join(d, name), encoding="utf-8") as f:
                lines = f.read().split("\n")
            for i, line in enumerate(lines):
                h = HEADING.match(line)
                if h and re.search(r"adding an operator", h.group(2), re.I):
                    level = len(h.group(1))
                    out = []
                    for nxt in lines[i + 1:]:
                        h2 = HEADING.match(nxt)
                        if h2 and len(h2.group(1)) <= level:
                            break
                        out.append(nxt)
                    return "\n".join(out)
    return ""


def problems(root):
    kinds = kinds_of(root)
    with open(os.path.join(root, SWITCHES_FILE), encoding="utf-8") as f:
        listed = json.load(f)
    checklist = checklist_text(root)
    out = []
    seen = set()
    for sid, cases, has_default in switches(root):
        seen.add(sid)
        unknown = sorted(cases - set(kinds))
        if unknown:
            out.append(f"{sid}: cases {unknown} are not kinds of {NODES_DEF}")
        if not has_default:
            missing = [k for k in kinds if k not in cases]
            if missing:
                out.append(f"{sid}: a switch without default misses kinds {missing}")
            continue
        if sid not in listed:
            out.append(f"{sid}: a switch over node kinds with a default is not listed in "
                       f"{SWITCHES_FILE} (list the kinds that take its default) and named in "
                       "the add-an-operator checklist")
            continue
        path, fn = sid.split(":")
        if path not in checklist or fn not in checklist:
            out.append(f"{sid}: not named in the add-an-operator checklist (the docs section "
                       f"'Adding an operator' must mention {path} and {fn})")
        defaulted = set(listed[sid].get("default", []))
        for k in kinds:
            if k not in cases and k not in defaulted:
                out.append(f"{sid}: kind {k} is neither a case nor listed as taking the "
                           f"default in {SWITCHES_FILE}")
        for k in sorted(defaulted & cases):
            out.append(f"{sid}: kind {k} is a case and also listed as taking the default")
        for k in sorted(defaulted - set(kinds)):
            out.append(f"{sid}: listed kind {k} is not in {NODES_DEF}")
    for sid in sorted(set(listed) - seen):
        out.append(f"{SWITCHES_FILE}: {sid} names no switch over node kinds with a default")
    return out


def self_test():
    kinds = ["Relu", "Add", "Conv", "Gemm"]
    files = {
        NODES_DEF: "".join(f'EMBER_NODE({k}, "")\n' for k in kinds),
        "compiler/a/Named.cpp": "using K = NodeKind;\nint macs(const Node& n) {\n"
        "  switch (n.kind()) {\n  case K::Conv:\n    return 1;\n  default:\n    return 0;\n"
        "  }\n}\n",
        "compiler/a/Complete.cpp": "const char* name(NodeKind k) {\n  switch (k) {\n"
        + "".join(f"  case NodeKind::{k}:\n    return \"{k}\";\n" for k in kinds)
        + "  }\n  return \"\";\n}\n",
        "compiler/a/Unnamed.cpp": "bool f(const Node& n) {\n  switch (n.kind()) {\n"
        "  case NodeKind::Add:\n    return true;\n  default:\n    return false;\n  }\n}\n",
        "compiler/a/Other.cpp": "int g(ElemKind k) {\n  switch (k) {\n"
        "  case ElemKind::Int8:\n    return 1;\n  default:\n    return 0;\n  }\n}\n",
        SWITCHES_FILE: json.dumps({"compiler/a/Named.cpp:macs": {"default": ["Relu", "Add",
                                                                              "Gemm"]}}),
        "docs/ops.md": "# Adding an operator\n\n- compiler/a/Named.cpp, `macs`\n\n# Next\n",
    }

    def run(extra_kind):
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                if rel == NODES_DEF and extra_kind:
                    text += f'EMBER_NODE({extra_kind}, "")\n'
                os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            return problems(root)

    base = run(None)
    ok = len(base) == 1 and base[0].startswith("compiler/a/Unnamed.cpp:f:")
    grown = run("Foo")
    ok = ok and any(p.startswith("compiler/a/Named.cpp:macs: kind Foo") for p in grown)
    ok = ok and any(p.startswith("compiler/a/Complete.cpp:name: a switch without default")
                    for p in grown)
    if not ok:
        print("self-test FAILED:\n  " + "\n  ".join(base + ["--- with Foo:"] + grown))
        return 1
    print("self-test: an unnamed switch, and a new kind missing from a named switch and from "
          "a complete one, are caught")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) == 3 and argv[1] == "--list":
        for sid, cases, has_default in switches(argv[2]):
            print(f"{sid}: {len(cases)} cases, {'default' if has_default else 'no default'}")
        return 0
    if len(argv) != 2:
        print(__doc__)
        return 2
    out = problems(argv[1])
    for p in out:
        print(p)
    if out:
        print(f"{len(out)} problem(s) with the switches over node kinds")
        return 1
    print("every switch over node kinds is complete or named")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
