#!/usr/bin/env python3
"""ember-run --requests --html opened in a real browser (docs/systems.md section 4): a
model replicated over a system of four NPUs is served, the page is loaded in headless
Chromium, which must log no console message; its DOM must hold a timeline row per device
with one NPU bar per request the device ran (16 requests over 4 replicas: 4 each, as the
report's runs say), and the screenshot must show the bars: the stage-0 NPU colour
(#4e79a7) covers at least a quarter of each device row's plot. Exits non-zero on the first
difference."""

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import zlib

from checks import expect  # this folder is on sys.path

STAGE0 = (0x4E, 0x79, 0xA7)


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    expect(depth == 8 and color in (2, 6) and interlace == 0,
           f"{path}: 8-bit RGB(A), not interlaced (depth {depth}, colour type {color})")
    bpp = 3 if color == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ember-run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--calibrate", required=True)
    ap.add_argument("--system", required=True, help="four devices")
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    page, shot, report = (os.path.join(args.work, f) for f in ("serve.html", "serve.png", "r.json"))
    cmd = [args.ember_run, args.model, "--calibrate", args.calibrate, "--system", args.system,
           "--requests", "16", "--concurrency", "8", "--random-input", "1", "--html", page,
           "--report", report]
    print("$ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    with open(page) as f:
        text = f.read()
    expect(not re.search(r"<script|https?://", text.replace("http://www.w3.org", "")),
           "the page refers to no script and no network")
    with open(report) as f:
        runs = {d["name"]: d["runs"] for d in json.load(f)["devices"]}
    expect(runs == {f"npu{i}": 4 for i in range(4)}, f"the report: 4 runs per device ({runs})")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--user-data-dir=" + os.path.join(args.work, "profile"), "--enable-logging=stderr",
             "--v=0"]
    url = "file://" + os.path.abspath(page)
    shot_log = subprocess.run([args.chromium] + flags + ["--window-size=1240,760",
                                                         "--screenshot=" + shot, url],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    dom = subprocess.run([args.chromium] + flags + ["--dump-dom", url], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    expect("CONSOLE" not in shot_log + dom.stderr, "no console message while loading the page")
    for name, n in runs.items():
        m = re.search(r"<g class=\"device\" data-device=\"%s\">(.*?)</g>" % name, dom.stdout, re.S)
        expect(m is not None, f"the rendered timeline has a row for {name}")
        bars = len(re.findall(r"<rect class=\"npu\"", m.group(1)))
        expect(bars == n, f"{name}'s row: {bars} NPU bars == its {n} runs")
    expect(os.path.exists(shot), "chromium wrote a screenshot")
    w, h, px = read_png(shot)
    rows = {y for y in range(h) if STAGE0 in px[y]}
    # Bars are 20 px high with 6 px between devices: group the coloured rows into bands.
    bands, start = [], None
    for y in range(h + 1):
        on = y in rows
        if on and start is None:
            start = y
        if not on and start is not None:
            bands.append((start, y))
            start = None
    widths = [max(sum(1 for p in px[y] if p == STAGE0) for y in range(a, b)) for a, b in bands]
    print(f"stage-0 bands in the screenshot (pixel rows, most such pixels in one): "
          f"{list(zip(bands, widths))}")
    expect(len([x for x in widths if x >= w // 4]) == 4,
           f"the screenshot shows four device rows of NPU bars over a quarter of the width ({w})")
    print("serve html: all checks passed")


if __name__ == "__main__":
    main()
