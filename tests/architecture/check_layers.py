#!/usr/bin/env python3
"""The dependency rules of ARCHITECTURE.md section 1, checked on the sources and on the
build's link graph:

- base/ includes and links nothing of Ember's;
- isa/ uses base/ only;
- simulator/, rtl/ and firmware/ never include or link anything of compiler/ (they know
  the binary and the ISA description, as hardware would);
- runtime/ runs binaries and never uses compiler/ either.

usage: check_layers.py SOURCE_DIR LINK_GRAPH
LINK_GRAPH is BUILD/ember_link_graph.txt, written when the build is configured. Exit 1,
listing every violation, when a rule is broken.
"""
import os
import re
import sys

# Where each part's headers live: an include of one of these prefixes is a use of the part.
HEADER_ROOTS = {
    "base": "base/include",
    "isa": "isa/include",
    "compiler": "compiler/include",
    "sim": "simulator/include",
    "runtime": "runtime/include",
}
# Part -> parts it may use (by include or by link).
ALLOWED = {
    "base": set(),
    "isa": {"base"},
    "simulator": {"base", "isa"},
    "rtl": {"base", "isa", "simulator", "generated"},
    "firmware": {"generated"},
    "runtime": {"base", "isa", "simulator", "rtl", "firmware", "generated"},
    "generated": set(),
}
# Library targets of each part (for the link graph).
TARGET_PART = {
    "ember_base": "base",
    "ember_isa": "isa",
    "ember_sim": "simulator",
    "ember_verilated": "rtl",
    "ember_rtlsim": "rtl",
    "ember_rtlsoc": "rtl",
    "ember_runtime": "runtime",
    # The header `ember-isa gen` writes from the description (ember_npu_isa.h): data, not
    # code, so the firmware may include it.
    "ember_isa_generated_headers": "generated",
}
# Families of library targets named by a pattern (one per description, ...).
TARGET_PATTERNS = [
    (re.compile(r"^ember_rtl_[A-Za-z0-9_.-]+$"), "rtl"),
    (re.compile(r"^ember_(fw|firmware)[A-Za-z0-9_.-]*$"), "firmware"),
]


def part_of(target):
    if target in TARGET_PART:
        return TARGET_PART[target]
    for pattern, part in TARGET_PATTERNS:
        if pattern.match(target):
            return part
    return None
COMPILER_TARGET = re.compile(r"^ember_(core|interp|backends|passes|onnx|quant|lir|npu|cpu|compiler)$")


def header_index(src):
    """Maps every public header path (as included) to the part that owns it."""
    index = {}
    for part, root in HEADER_ROOTS.items():
        top = os.path.join(src, root)
        for dirpath, _, files in os.walk(top):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), top)
                index[rel] = "simulator" if part == "sim" else part
    return index


def include_violations(src, index):
    bad = []
    inc = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
    for part, allowed in ALLOWED.items():
        top = os.path.join(src, part)
        if not os.path.isdir(top):
            continue
        for dirpath, _, files in os.walk(top):
            for f in files:
                if not f.endswith((".h", ".hpp", ".c", ".cpp", ".cc", ".sv", ".in")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, errors="replace") as fh:
                    for n, line in enumerate(fh, 1):
                        m = inc.match(line)
                        if not m:
                            continue
                        owner = index.get(m.group(1))
                        if owner and owner != part and owner not in allowed:
                            bad.append(f"{os.path.relpath(path, src)}:{n}: includes "
                                       f"{m.group(1)} of {owner}/ ({part}/ may use "
                                       f"{', '.join(sorted(allowed)) or 'nothing of Ember'})")
    return bad


def link_violations(graph):
    """`graph` lines are "TARGET: DEP DEP ..." (every library TARGET links, transitively),
    written by the root CMakeLists.txt at configure time."""
    closure = {}
    with open(graph) as fh:
        for line in fh:
            if ":" in line:
                target, deps = line.split(":", 1)
                closure[target.strip()] = deps.split()
    bad = []
    for target in ["ember_base", "ember_isa", "ember_sim"]:
        if target not in closure:
            bad.append(f"link graph: target {target} not found (did the build change?)")
    for target in closure:
        part = part_of(target)
        if part is None:
            bad.append(f"link graph: {target} belongs to no part this test knows")
            continue
        for dep in closure[target]:
            dep_part = part_of(dep)
            if COMPILER_TARGET.match(dep):
                bad.append(f"link graph: {target} ({part}/) links {dep} of compiler/")
            elif dep_part and dep_part != part and dep_part not in ALLOWED[part]:
                bad.append(f"link graph: {target} ({part}/) links {dep} of {dep_part}/")
            elif dep.startswith("ember_") and not dep_part and dep != "ember_warnings":
                bad.append(f"link graph: {target} ({part}/) links {dep}, a target of no "
                           f"part this test knows (add it to TARGET_PART)")
    return bad


def main():
    src, graph = sys.argv[1], sys.argv[2]
    bad = include_violations(src, header_index(src)) + link_violations(graph)
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} violation(s) of the dependency rules (ARCHITECTURE.md section 1)")
        return 1
    print("dependency rules hold: base/, isa/, simulator/, runtime/ (and rtl/, firmware/ when "
          "present)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
