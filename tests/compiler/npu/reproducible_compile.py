#!/usr/bin/python3
"""Compiles each model twice with emberc and requires byte-identical binaries.

Usage: reproducible_compile.py --emberc EMBERC --out DIR [--runs N] MODEL.onnx ...
On a difference, names the first differing offset and the ELF section holding it
(read from the binary's section headers, not from Ember's code).
"""
import argparse
import os
import struct
import subprocess
import sys


def sections(data):
    """(name, offset, size) of every section of an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = heads[shstrndx][4]
    out = []
    for h in heads:
        name = data[strtab_off + h[0]:data.index(b"\0", strtab_off + h[0])].decode()
        out.append((name, h[4], h[5]))
    return out


def where(data, offset):
    for name, off, size in sections(data):
        if off <= offset < off + size:
            return "section %s + 0x%x" % (name or "(null)", offset - off)
    return "outside any section (headers)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    failed = 0
    for model in a.models:
        stem = os.path.basename(os.path.dirname(model)) or os.path.splitext(model)[0]
        blobs = []
        for run in range(a.runs):
            path = os.path.join(a.out, "%s.%d.elf" % (stem, run))
            subprocess.run([a.emberc, model, "-o", path, "-q"], check=True)
            with open(path, "rb") as f:
                blobs.append(f.read())
        for run in range(1, a.runs):
            if blobs[run] == blobs[0]:
                continue
            failed += 1
            n = min(len(blobs[0]), len(blobs[run]))
            first = next((i for i in range(n) if blobs[0][i] != blobs[run][i]), n)
            diff = sum(1 for i in range(n) if blobs[0][i] != blobs[run][i])
            print("%s: run %d differs from run 0: %d bytes (sizes %d, %d); first at 0x%x, %s" %
                  (stem, run, diff, len(blobs[0]), len(blobs[run]), first,
                   where(blobs[0], first)))
            break
        else:
            print("%s: %d compiles, identical (%d bytes)" % (stem, a.runs, len(blobs[0])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
