#!/usr/bin/env python3
"""A package for a system of unequal devices (docs/systems.md sections 3 and 4,
docs/package.md): emberc pipelines a small model over isa/systems/ember-v1-mixed.json (an
ember-v1 then the large variant) and writes the package with -o; its manifest names the
large description for the stage on the large device only, and that stage's ELF carries
the hash its manifest entry names. ember-run serves it over the system with every output
bit-exact against the whole model compiled for one ember-v1 (--reference). Without
--system the package is refused, naming the segment, the description and --system; a
package of two ember-v1 stages served on the mixed system is refused, naming the device,
the stage and both descriptions. Exits non-zero on the first difference."""

import argparse
import json
import os
import re
import struct

from checks import expect, run  # this folder is on sys.path


def entries(path):
    """The package's entries by name (docs/package.md section 1), read here from the bytes."""
    with open(path, "rb") as f:
        data = f.read()
    expect(data[:8] == b"EMBERPKG", f"{path}: the package magic")
    count = struct.unpack_from("<I", data, 12)[0]
    out = {}
    for i in range(count):
        name, off, size = struct.unpack_from("<56sQQ", data, 56 + 80 * i)
        out[name.rstrip(b"\0").decode()] = data[off:off + size]
    return data[16:48], out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--emberc", required=True)
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--calibrate", required=True)
    ap.add_argument("--mixed", required=True, help="isa/systems/ember-v1-mixed.json")
    ap.add_argument("--equal2", required=True, help="two ember-v1 devices")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    elf = os.path.join(args.work, "whole.elf")
    pkg = os.path.join(args.work, "mixed.pkg")
    run([args.emberc, args.model, "--calibrate", args.calibrate, "-o", elf, "--quiet"])
    out = run([args.emberc, args.model, "--calibrate", args.calibrate, "--system", args.mixed,
               "-o", pkg])
    expect("2 NPU stage(s)" in out, "the package holds two NPU stages")

    header_hash, ents = entries(pkg)
    m = json.loads(ents["manifest.json"])
    npu = [s for s in m["segments"] if s["backend"] == "npu"]
    expect(len(npu) == 2, "the manifest has two NPU segments")
    expect(m["isa"] == "ember-v1" and "isa" not in npu[0] and "isa_hash" not in npu[0],
           "the package and stage 0 (device small) are ember-v1's, stage 0 names no description")
    expect(npu[1].get("isa") == "ember-v1-large",
           "stage 1 (device large) names its description ember-v1-large")
    want = bytes.fromhex(npu[1]["isa_hash"])
    expect(len(want) == 32 and want != header_hash, "stage 1's isa_hash is another SHA-256 "
           "than the package header's (ember-v1's)")
    s0, s1 = ents[npu[0]["entry"]], ents[npu[1]["entry"]]
    expect(want in s1 and want not in s0 and header_hash in s0 and header_hash not in s1,
           "stage 1's ELF carries the hash its manifest entry names, stage 0's the header's")

    report = os.path.join(args.work, "serve.json")
    out = run([args.ember_run, pkg, "--system", args.mixed, "--requests", "8", "--concurrency",
               "2", "--random-input", "1", "--reference", elf, "--report", report])
    expect(re.search(r"reference: the outputs of \d+ distinct input\(s\) are bit-exact with "
                     + re.escape(elf), out), "served over the mixed system: bit-exact with the "
           "whole model on one ember-v1")
    with open(report) as f:
        r = json.load(f)
    expect(r["completed"] == 8 and r["refused"] == 0, "8 requests completed")
    expect([d["name"] for d in r["devices"]] == ["small", "large"]
           and all(d["runs"] == 8 for d in r["devices"]), "each device ran its stage 8 times")

    out = run([args.ember_run, pkg, "--random-input", "1"], want_rc=1)
    expect(re.search(r"mixed\.pkg:manifest\.json: /segments/\d+/isa_hash: segment seg\d+\.elf is "
                     r"built for NPU description 'ember-v1-large' \(hash [0-9a-f]{16}\.\.\.\), "
                     r"not 'ember-v1'.*ember-run PKG --system SYS\.json --requests N", out),
           "without --system the package is refused, naming the segment, the description "
           "and --system")

    equal = os.path.join(args.work, "equal2.pkg")
    run([args.emberc, args.model, "--calibrate", args.calibrate, "--system", args.equal2,
         "-o", equal])
    out = run([args.ember_run, equal, "--system", args.mixed, "--requests", "2",
               "--random-input", "1"], want_rc=1)
    expect(re.search(r"ember-v1-mixed\.json: device large: runs 'ember-v1-large', stage 1 of "
                     r"\S*equal2\.pkg is built for 'ember-v1'", out),
           "two ember-v1 stages on the mixed system: refused, naming device, stage and both "
           "descriptions")
    print("serve unequal e2e: all checks passed")


if __name__ == "__main__":
    main()
