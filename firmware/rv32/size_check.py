#!/usr/bin/env python3
"""Reports the rv32 firmware's code size and stack use and fails above the limits.

usage: size_check.py SIZE_TOOL ELF SU_DIR MAX_TEXT MAX_STACK
Stack: the firmware has no recursion and no calls through pointers, so the sum of every
function's frame (gcc -fstack-usage, all "static") bounds the deepest call chain.
"""
import glob
import subprocess
import sys

size_tool, elf, su_dir, max_text, max_stack = sys.argv[1:6]
out = subprocess.run([size_tool, "-A", elf], capture_output=True, text=True, check=True).stdout
text = sum(int(l.split()[1]) for l in out.splitlines() if l.startswith(".text"))
frames, dynamic = [], []
for su in glob.glob(f"{su_dir}/*.su"):
    for line in open(su):
        fn, nbytes, kind = line.rsplit(None, 2)
        frames.append((int(nbytes), fn.split(":")[-1]))
        if kind != "static":
            dynamic.append(fn)
stack = sum(n for n, _ in frames)
deepest = max(frames) if frames else (0, "-")
print(f"firmware rv32imac: .text {text} bytes (limit {max_text}); stack bound {stack} bytes "
      f"(sum of {len(frames)} frames; largest {deepest[0]} in {deepest[1]}; limit {max_stack})")
bad = []
if text > int(max_text):
    bad.append("code too large")
if stack > int(max_stack):
    bad.append("stack bound too large")
if dynamic:
    bad.append("dynamic stack frames: " + ", ".join(dynamic))
if bad:
    sys.exit("firmware.rv32.size: " + "; ".join(bad))
