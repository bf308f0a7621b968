#!/usr/bin/env python3
"""The dependency rules of ARCHITECTURE.md section 1, checked on the sources and on the
build's link graph:

- base/ includes and links nothing of Ember's;
- isa/ uses base/ only;
- platform/ (what every device shares: job, reports, I/O packing, DRAM image, control-core
  bus) uses base/ and isa/ only;
- simulator/ and rtl/ use the platform layer, never each other; neither they nor
  firmware/ include or link anything of compiler/ (they know the binary and the ISA
  description, as hardware would);
- runtime/ runs binaries and never uses compiler/ either;
- runtime/session/ (the application layer: a model, binary or package run on devices) may
  use the compiler and the runtime;
- tools/ and python/ are thin clients: they include only the application layer
  (session), the runtime, the compile driver (ember/driver/) and public headers of base/,
  isa/ and platform/ (tools also their own command-line library, tools/cli); nothing
  outside tools/ includes or links anything of tools/;
- bench/ is a client too: a benchmark includes what tools and python may, and besides
  only the one component it measures (bench/sim the simulator, bench/cpu the compiler's
  cpu backend, ...: BENCH_MEASURES); a bench folder not listed there is a plain client.

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
    "platform": "platform/include",
    "sim": "simulator/include",
    "session": "runtime/session/include",
    "cli": "tools/cli/include",
    "runtime": "runtime/include",
}
# Part -> parts it may use (by include or by link).
ALLOWED = {
    "base": set(),
    "isa": {"base"},
    "platform": {"base", "isa"},
    "simulator": {"base", "isa", "platform"},
    "rtl": {"base", "isa", "platform", "generated"},
    "firmware": {"generated"},
    "runtime": {"base", "isa", "platform", "simulator", "rtl", "firmware", "generated"},
    "session": {"base", "isa", "platform", "simulator", "rtl", "firmware", "generated",
                "runtime", "compiler", "driver"},
    "tools": {"base", "isa", "platform", "runtime", "session", "driver", "cli"},
    "python": {"base", "isa", "platform", "runtime", "session", "driver"},
    "generated": set(),
}
# What a benchmark may use besides the public API: the component it measures (a benchmark
# of the SystemC engine alone must reach past the session, or it measures the session).
BENCH_PUBLIC = {"base", "isa", "platform", "runtime", "session", "driver"}
BENCH_MEASURES = {
    "bench/cpu": {"compiler"},               # the cpu backend's kernels, per layer
    "bench/lir": {"compiler"},               # the low-level IR's lowering
    "bench/npu": {"compiler", "simulator"},  # the NPU compiler and its programs' cycles
    "bench/sim": {"simulator"},              # the SystemC engine on synthetic programs
    "bench/rtl": {"simulator", "rtl"},       # the Verilated RTL against the engine
    "bench/runtime": {"simulator"},          # the job ring on the SystemC platform
}
ALLOWED["bench"] = set(BENCH_PUBLIC)
for _folder, _measures in BENCH_MEASURES.items():
    ALLOWED[_folder] = BENCH_PUBLIC | _measures
# Library targets of each part (for the link graph).
TARGET_PART = {
    "ember_base": "base",
    "ember_isa": "isa",
    "ember_platform": "platform",
    "ember_sim": "simulator",
    "ember_verilated": "rtl",
    "ember_rtlsim": "rtl",
    "ember_rtlsoc": "rtl",
    "ember_runtime": "runtime",
    "ember_session": "session",
    "ember_python": "python",
    "ember_dse": "session",
    # The header `ember-isa gen` writes from the description (ember_npu_isa.h): data, not
    # code, so the firmware may include it.
    "ember_isa_generated_headers": "generated",
}
# Families of library targets named by a pattern (one per description, ...).
TARGET_PATTERNS = [
    (re.compile(r"^ember_cli[A-Za-z0-9_]*$"), "tools"),
    (re.compile(r"^ember_rtl_[A-Za-z0-9_.-]+$"), "rtl"),
    (re.compile(r"^ember_(fw|firmware)[A-Za-z0-9_.-]*$"), "firmware"),
]


def part_of(target):
    if COMPILER_TARGET.match(target):
        return "compiler"
    if target in TARGET_PART:
        return TARGET_PART[target]
    for pattern, part in TARGET_PATTERNS:
        if pattern.match(target):
            return part
    return None
COMPILER_TARGET = re.compile(r"^ember_(core|interp|backends|passes|onnx|quant|lir|npu|cpu|compiler|driver)$")
# Thin clients: what they link comes with the application layer (transitively, the whole
# stack); their link rule is only that nothing of tools/ is linked.
THIN_CLIENTS = {"python"}


# Where each part's sources are, when not a top-level folder of its name; a part's walk
# leaves out the folders of other parts inside it (runtime/ without runtime/session/).
PART_DIRS = {"session": "runtime/session", "python": "python/src"}


def part_dir(part):
    return PART_DIRS.get(part, part)


def header_index(src):
    """Maps every public header path (as included) to the part that owns it."""
    index = {}
    for part, root in HEADER_ROOTS.items():
        top = os.path.join(src, root)
        for dirpath, _, files in os.walk(top):
            for f in files:
                rel = os.path.relpath(os.path.join(dirpath, f), top)
                owner = "simulator" if part == "sim" else part
                if part == "compiler" and rel.startswith("ember/driver/"):
                    owner = "driver"  # the compile driver: the compiler's public entry
                index[rel] = owner
    return index


# Known violations still to remove (issue 45): FILE -> the parts it may still use. The
# list may only shrink; an entry that no longer matches is itself reported.
EXCEPTIONS = {}
EXCEPTED_LINKS = set()


def include_violations(src, index):
    bad, used = [], set()
    inc = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
    for part, allowed in ALLOWED.items():
        top = os.path.join(src, part_dir(part))
        if not os.path.isdir(top):
            continue
        others = {os.path.join(src, part_dir(p)) for p in ALLOWED if p != part}
        for dirpath, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if os.path.join(dirpath, d) not in others]
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
                        rel = os.path.relpath(path, src)
                        if owner in EXCEPTIONS.get(rel, ()):
                            used.add(rel)
                            continue
                        if owner and owner != part and owner not in allowed:
                            bad.append(f"{os.path.relpath(path, src)}:{n}: includes "
                                       f"{m.group(1)} of {owner}/ ({part}/ may use "
                                       f"{', '.join(sorted(allowed)) or 'nothing of Ember'})")
    for rel in sorted(set(EXCEPTIONS) - used):
        bad.append(f"{rel}: listed in EXCEPTIONS but no longer breaks a rule: remove it")
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
    for target in ["ember_base", "ember_isa", "ember_platform", "ember_sim"]:
        if target not in closure:
            bad.append(f"link graph: target {target} not found (did the build change?)")
    for target in closure:
        part = part_of(target)
        if part is None:
            bad.append(f"link graph: {target} belongs to no part this test knows")
            continue
        for dep in closure[target]:
            dep_part = part_of(dep)
            if part in THIN_CLIENTS:
                if dep_part == "tools" and (target, dep) not in EXCEPTED_LINKS:
                    bad.append(f"link graph: {target} ({part}/) links {dep} of tools/ (a "
                               f"client uses the application layer, never a tool's library)")
                continue
            if COMPILER_TARGET.match(dep) and "compiler" not in ALLOWED[part]:
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
    print("dependency rules hold: base/, isa/, platform/, simulator/, runtime/, "
          "runtime/session/, tools/, python/, bench/ (and rtl/, firmware/ when present)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
