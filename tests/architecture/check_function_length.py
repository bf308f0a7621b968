#!/usr/bin/env python3
"""No function over 100 lines outside tests (issue 45): brace-matched function bodies of
Ember's C and C++ sources (comments and string literals removed first), outermost
functions only (a lambda counts with the function it is in).

usage: check_function_length.py SOURCE_DIR   (exit 1 listing every function too long)
       check_function_length.py --self-test  (the check must catch a long function)

KNOWN lists the functions still too long when this check came (they may only shrink or
leave the list; an entry that is no longer too long is itself reported, so the list stays
true).
"""
import os
import re
import sys

LIMIT = 100
PARTS = ["base", "isa", "compiler", "platform", "simulator", "rtl/harness", "firmware",
         "runtime", "tools", "python/src", "bench"]
# "file:signature start" -> lines when listed (2026-12-06).
KNOWN = {
}


def strip(s):
    s = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), s, flags=re.S)
    s = re.sub(r"//[^\n]*", "", s)
    s = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + "\n" * m.group(0).count("\n"), s,
               flags=re.S)
    s = re.sub(r'"(\\.|[^"\\\n])*"', '""', s)
    s = re.sub(r"'(\\.|[^'\\\n])*'", "''", s)
    return s


FN_END = re.compile(r"\)\s*(const|override|noexcept|final|mutable|->[^;{}]*|\s)*$")
CONTROL = re.compile(r"\b(if|for|while|switch|catch)\s*\(")
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def long_functions(text):
    """(lines, start line, name) of every outermost function body over LIMIT lines."""
    s = strip(text)
    stack, found, line, last = [], [], 1, 0
    for i, ch in enumerate(s):
        if ch == "\n":
            line += 1
        elif ch == "{":
            pre = s[last:i]
            stmt = pre.split(";")[-1].split("}")[-1]
            is_fn = bool(FN_END.search(pre)) and not CONTROL.search(stmt[-200:])
            names = NAME.findall(stmt)
            stack.append((line, is_fn, names[0] if names else "?"))
            last = i + 1
        elif ch == "}":
            if stack:
                start, is_fn, name = stack.pop()
                if is_fn and line - start > LIMIT and not any(x[1] for x in stack):
                    found.append((line - start, start, name))
            last = i + 1
        elif ch == ";":
            last = i + 1
    return found


def main(src):
    bad, seen = [], set()
    for part in PARTS:
        for d, dirs, files in os.walk(os.path.join(src, part)):
            dirs[:] = [x for x in dirs if x not in ("tests", "build")]
            for f in sorted(files):
                if not f.endswith((".c", ".cc", ".cpp", ".h")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, src)
                with open(path, errors="replace") as fh:
                    for n, start, name in long_functions(fh.read()):
                        key = f"{rel}:{name}"
                        if key in KNOWN and n <= KNOWN[key]:
                            seen.add(key)
                            continue
                        bad.append(f"{rel}:{start}: {name} is {n} lines (limit {LIMIT}"
                                   + (f", listed at {KNOWN[key]}" if key in KNOWN else "") + ")")
    for key in sorted(set(KNOWN) - seen):
        bad.append(f"{key}: listed in KNOWN but no longer over {LIMIT} lines: remove it")
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} function(s) over {LIMIT} lines")
        return 1
    print(f"every function outside tests is at most {LIMIT} lines "
          f"({len(KNOWN)} listed, still to split)")
    return 0


def self_test():
    body = "int f(int x) {\n" + "  x += 1;\n" * (LIMIT + 5) + "  return x;\n}\n"
    short = "int g() {\n  if (1) {\n  }\n  return 0;\n}\n"
    assert [n for n, _, name in long_functions(body) if name == "f"], "missed a long function"
    assert not long_functions(short), "flagged a short function"
    print("self-test: a long function is caught, a short one is not")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if sys.argv[1:] == ["--self-test"] else main(sys.argv[1]))
