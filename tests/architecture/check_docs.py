#!/usr/bin/env python3
"""The documentation's own checks (issue 45 item 5: docs by topic, one index):

- no Markdown file under docs/ is longer than 600 lines (a longer one is split by topic,
  as docs/compiler.md was into docs/compiler/, and docs/isa.md, docs/rtl.md and
  docs/results.md into docs/isa/, docs/rtl/ and docs/results/); OVERSIZE may list an
  exception with the length it may not exceed (it lists none);
- every relative Markdown link of docs/ (every folder) and README.md leads to a file or
  folder that exists, and a link with a #fragment to a heading of that Markdown file (the
  anchors GitHub makes: lower case, punctuation dropped, spaces to hyphens, -1, -2, ... for
  repeated headings);
- every path `docs/....md` named in their text exists (a plain-text reference to a moved
  document is as broken as a link).

usage: check_docs.py SOURCE_DIR         exit 1, listing every problem, when one is found
       check_docs.py --self-test        the checks catch a long file, a missing file, a
                                        missing anchor and a stale docs/ path
"""
import os
import re
import sys
import tempfile

MAX_LINES = 600
# Documents allowed more than MAX_LINES, each capped at its recorded length: empty, since
# docs/isa.md, docs/rtl.md and docs/results.md (1154, 798 and 688 lines) were split by topic.
OVERSIZE = {}

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
DOC_PATH = re.compile(r"(?<![\w./-])docs/[\w./-]*?\.md\b")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def markdown_files(root):
    files = [os.path.join(root, "README.md")]
    for base, dirs, names in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        files += [os.path.join(base, n) for n in sorted(names) if n.endswith(".md")]
    return [f for f in files if os.path.isfile(f)]


def prose_lines(text):
    """(line number, line) outside fenced code blocks, inline code spans blanked."""
    fence = None
    for no, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            mark = m.group(1)[0]
            if fence is None:
                fence = mark
                continue
            if fence == mark:
                fence = None
                continue
        if fence is None:
            yield no, line


def blank_code_spans(line):
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link counts as its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_anchor_cache = {}


def anchors(path):
    if path not in _anchor_cache:
        seen, out = {}, set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in prose_lines(text):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
        # Explicit anchors: <a name="x"> / <a id="x">.
        out.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
        _anchor_cache[path] = out
    return _anchor_cache[path]


def check_link(root, doc, no, target):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
        return None  # http:, https:, mailto:, ...
    path, _, fragment = target.partition("#")
    if path:
        dest = os.path.normpath(os.path.join(os.path.dirname(doc), path))
        if not os.path.exists(dest):
            return f"{rel(root, doc)}:{no}: link to {target}: {rel(root, dest)} does not exist"
    else:
        dest = doc
    if fragment and dest.endswith(".md") and os.path.isfile(dest):
        if fragment not in anchors(dest):
            return (f"{rel(root, doc)}:{no}: link to {target}: {rel(root, dest)} has no "
                    f"heading with the anchor #{fragment}")
    return None


def rel(root, path):
    return os.path.relpath(path, root)


def check(root):
    problems = []
    for doc in markdown_files(root):
        name = rel(root, doc).replace(os.sep, "/")
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if name.startswith("docs/"):
            limit = OVERSIZE.get(name, MAX_LINES)
            if lines > limit:
                why = (f"more than {MAX_LINES}: split it by topic" if limit == MAX_LINES else
                       f"more than the {limit} it had when the limit of {MAX_LINES} came; split it")
                problems.append(f"{name}: {lines} lines, {why}")
        for no, line in prose_lines(text):
            prose = blank_code_spans(line)
            targets = [m.group(1) for m in LINK.finditer(prose)]
            m = REF_DEF.match(prose)
            if m:
                targets.append(m.group(1))
            for t in targets:
                p = check_link(root, doc, no, t)
                if p:
                    problems.append(p)
        for no, line in enumerate(text.split("\n"), 1):
            # A link's target is checked above; here the text only.
            for m in DOC_PATH.finditer(re.sub(r"\]\([^)]*\)", "]", line)):
                if not os.path.isfile(os.path.join(root, m.group(0))):
                    problems.append(f"{name}:{no}: names {m.group(0)}, which does not exist")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs", "sub"))

        def write(path, text):
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)

        write("README.md", "See [a](docs/a.md#the-heading) and [gone](docs/gone.md).\n")
        write("docs/a.md", "# A\n\n## The heading\n\n[b](sub/b.md#nope) "
              "[self](#a) `[not a link](nowhere.md)`\n\nAs docs/old.md said.\n"
              "```\n[fenced](nowhere.md)\n```\n")
        write("docs/sub/b.md", "# B\n" + "line\n" * MAX_LINES)
        found = check(root)
        expected = ["docs/gone.md does not exist", "has no heading with the anchor #nope",
                    "names docs/old.md", f"docs/sub/b.md: {MAX_LINES + 1} lines"]
        missing = [e for e in expected if not any(e in p for p in found)]
        extra = [p for p in found if not any(e in p for e in expected)]
        for p in found:
            print(p)
        if missing or extra or len(found) != len(expected):
            print(f"self-test FAILED: missing {missing}, unexpected {extra}")
            return 1
    print("self-test: a long file, a missing file, a missing anchor and a stale path are caught")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(os.path.abspath(argv[1]))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} documentation problem(s)")
        return 1
    print(f"docs: every file at most {MAX_LINES} lines (or within its recorded length), "
          "every relative link and docs/ path resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
