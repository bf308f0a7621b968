#!/usr/bin/env python3
"""One checked path for every run (issue 47 item 1): the same programs run as single runs
(`ember-sim P.elf`, `ember-run P.elf --device sim`, and `--device rtl` when built) and as
`ember-sim --jobs` get the same verdict (exit status and fault kind or refusal rule);
under --jobs an --input name no binary has is refused, an error names the job (index and
file), and a faulted job's platform cycles include its NPU cycles. A description this
build has no firmware for (ember-v1 with another leakage figure: another hash) runs on the
engine directly, and the host applies the firmware's DMA_EXTENT rule: the same refusal.

usage: run_verdicts_check.py DIR EMBER_RUN EMBER_SIM EMBER_AS ISA_JSON
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

HEADER = """.isa "ember-v1"
.region "const" const 0x0 0x100
.region "in" input 0x10000 0x400
.region "out" output 0x20000 0x400
.io input "x" dtype=int8 layout=nchwc shape=1x16x8x8 scale=0.05 zp=0 offset=0x10000 size=1024
.io output "y" dtype=int8 layout=nchwc shape=1x16x8x8 scale=0.05 zp=0 offset=0x20000 size=1024
.zero 256
"""
COPY = """  dma.ld sram=act sram_addr=0 dram_addr={src} size0=64 size1=1 size2=1 push_next
  vmov dst_mem=act src_mem=act dst_addr=64 src_addr=0 n0=64 n1=1 dst_s0=1 src_s0=1 pop_prev push_next
  dma.st sram=act sram_addr=64 dram_addr=0x20000 size0=64 size1=1 size2=1 pop_prev
  finish
"""
GEMM = ("  gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=255 n2=1 act_s0=0 act_s1=0 "
        "act_s2=0 acc_s0=0 acc_s1=0 wgt_s2=0\n")

PROGRAMS = {
    # copies its input to its output: done everywhere
    "valid": HEADER + COPY.format(src="0x10000"),
    # loads from 0x100000, past its memory map (which ends at 0x20400, window 0x30000):
    # the firmware's DMA_EXTENT rule refuses it, exit 1
    "dma_extent": HEADER + COPY.format(src="0x100000"),
    # 100 gemms of 65,074 cycles each, far past the default budget: exit 3
    "budget": '.isa "ember-v1"\n' + GEMM * 100 + "  finish\n",
}
# The verdicts, written down from docs/firmware.md and docs/simulator.md (not from a run).
EXPECTED = {
    "valid": (0, "done"),
    "dma_extent": (1, "refused DMA_EXTENT"),
    "budget": (3, "fault cycle-budget"),
}
JOB_LINE = re.compile(r"^job (\d+) (\S+): (done|refused: (\w+)|fault: ([a-z-]+) at instruction \d+"
                      r"|timeout), (\d+) cycles \((\d+) on the platform: link (\d+) \+ firmware (\d+) "
                      r"\+ NPU (\d+)\)$", re.M)

failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def single_verdict(rc, err):
    """The verdict of a single run from its exit status and stderr."""
    m = re.search(r"refused the job: rule (\w+)", err)
    if m:
        return rc, "refused " + m.group(1)
    m = re.search(r": fault ([a-z-]+) at cycle \d+", err)
    if m:
        return rc, "fault " + m.group(1)
    return rc, "done" if rc == 0 else "error: " + err.strip()


def job_verdicts(out):
    """{index: (verdict, npu cycles, platform cycles)} from --jobs' lines."""
    v = {}
    for m in JOB_LINE.finditer(out):
        kind = ("done" if m.group(3) == "done" else "refused " + m.group(4) if m.group(4)
                else "fault " + m.group(5) if m.group(5) else "timeout")
        v[int(m.group(1))] = (kind, int(m.group(6)), int(m.group(7)),
                              (int(m.group(8)), int(m.group(9)), int(m.group(10))))
    return v


def check_no_firmware(out_dir, ember_run, ember_sim, ember_as, isa_json):
    """A description without a firmware build: the same verdicts from the host's check."""
    with open(isa_json) as f:
        desc = json.load(f)
    desc["energy"]["leakage_per_cycle"] = desc["energy"]["leakage_per_cycle"] * 2 + 1
    edited = os.path.join(out_dir, "edited.json")
    with open(edited, "w") as f:
        json.dump(desc, f)
    for name in ("valid", "dma_extent"):
        src = os.path.join(out_dir, name + ".s")
        elf = os.path.join(out_dir, name + ".edited.elf")
        subprocess.run([ember_as, "--isa", edited, src, "-o", elf], check=True)
        want = EXPECTED[name]
        rc, _, err = run([ember_sim, "--isa", edited, elf, "--no-table"])
        got = single_verdict(rc, err)
        expect(got == want, f"no firmware build: ember-sim {name}: {got} == {want}")
        rc, _, err = run([ember_run, "--isa", edited, elf, "--device", "sim"])
        got = single_verdict(rc, err)
        expect(got == want, f"no firmware build: ember-run {name}: {got} == {want}")
        if name == "dma_extent":
            # the last byte: 0x100000 + 64 rows x 16 bytes - 1; the window: the memory
            # map's end (0x20400) rounded up to 64 KiB
            expect("instruction 0 (dma.ld) reaches DRAM byte 1049599, past the job's DRAM "
                   "window of 196608 bytes" in err,
                   "the host's refusal names the instruction and the window: " + err.strip())
    # --jobs needs the ring, whose control core runs a firmware build: refused, named.
    rc, out, err = run([ember_sim, "--isa", edited, "--jobs",
                        os.path.join(out_dir, "valid.edited.elf")])
    expect(rc == 1 and not out and "no firmware for this description" in err,
           f"no firmware build: --jobs refused: exit {rc}, {err.strip()!r}")


def main():
    out_dir, ember_run, ember_sim, ember_as, isa_json = sys.argv[1:6]
    os.makedirs(out_dir, exist_ok=True)
    elf = {}
    for name, text in PROGRAMS.items():
        src = os.path.join(out_dir, name + ".s")
        with open(src, "w") as f:
            f.write(text)
        elf[name] = os.path.join(out_dir, name + ".elf")
        subprocess.run([ember_as, src, "-o", elf[name]], check=True)
    _, help_text, _ = run([ember_run, "--help"])
    devices = ["sim"] + (["rtl"] if re.search(r"^\s+rtl\s", help_text, re.M) else [])
    print("ember-run devices:", devices)

    # A single run's JSON report carries the job's platform cycles and their split, the
    # NPU's part its cycles (docs/simulator.md, the report's keys).
    report = os.path.join(out_dir, "valid.report.json")
    rc, _, err = run([ember_sim, elf["valid"], "--no-table", "--report", report])
    with open(report) as f:
        r = json.load(f)
    pc = r.get("platform_cycles", {})
    expect(rc == 0 and pc.get("total") == pc.get("link", -1) + pc.get("firmware", -1) +
           pc.get("npu", -1) and pc.get("npu") == r["cycles"] and pc.get("firmware", 0) >= 500,
           f"ember-sim --report: platform_cycles {pc} adds up, its NPU part the cycles "
           f"{r['cycles']}")

    # Each program alone: every way of running it gives the expected verdict.
    names = list(PROGRAMS)
    for name in names:
        want = EXPECTED[name]
        rc, _, err = run([ember_sim, elf[name], "--no-table"])
        expect(single_verdict(rc, err) == want,
               f"ember-sim {name}: {single_verdict(rc, err)} == {want}")
        for dev in devices:
            rc, _, err = run([ember_run, elf[name], "--device", dev])
            expect(single_verdict(rc, err) == want,
                   f"ember-run {name} --device {dev}: {single_verdict(rc, err)} == {want}")
        rc, out, err = run([ember_sim, "--jobs", elf[name]])
        jobs = job_verdicts(out)
        got = (rc, jobs[0][0] if 0 in jobs else out + err)
        expect(got == want, f"ember-sim --jobs {name}: {got} == {want}")

    # All three through one ring: each job's verdict is its single run's; a faulted job's
    # platform cycles include the NPU's.
    rc, out, err = run([ember_sim, "--jobs", ",".join(elf[n] for n in names)])
    jobs = job_verdicts(out)
    expect(rc == 1, f"ember-sim --jobs of all three: exit {rc} == 1 (the first job not done "
           "was refused)")
    for k, name in enumerate(names):
        got = jobs.get(k, ("missing",))[0]
        expect(got == EXPECTED[name][1], f"--jobs job {k} ({name}): {got} == {EXPECTED[name][1]}")
    for k, (kind, npu, plat, (link, fw, npu_part)) in jobs.items():
        expect(plat >= npu, f"job {k} ({kind}): platform cycles {plat} >= NPU cycles {npu}")
        # docs/firmware.md section 6: platform = link + firmware + NPU, the NPU's part its
        # cycles (none for a refused job), the firmware's at least its job_cycles.
        expect(plat == link + fw + npu_part,
               f"job {k} ({kind}): {plat} == link {link} + firmware {fw} + NPU {npu_part}")
        expect(npu_part == (0 if kind.startswith("refused") else npu),
               f"job {k} ({kind}): NPU part {npu_part} is its NPU cycles {npu}")
        expect(fw >= 500 and link > 0, f"job {k} ({kind}): firmware {fw} >= 500 (ember-v1's "
               f"job_cycles), link {link} > 0")
    expect(jobs.get(2, ("", 0, 0))[1] > 0, "the budget job ran on the NPU")
    expect(re.search(r"job 2 \(\S*budget\.elf\): fault cycle-budget at cycle", err) is not None,
           "the budget job's fault record names the job: " + " ".join(err.strip().splitlines()[-1:]))
    # An explicit budget: the NPU's cycle-budget fault, as a single run (not the
    # firmware's watchdog timeout).
    rc, out, _ = run([ember_sim, "--jobs", elf["budget"], "--cycle-budget", "100000"])
    got = (rc, job_verdicts(out).get(0, ("missing",))[0])
    rc1, _, err1 = run([ember_sim, elf["budget"], "--no-table", "--cycle-budget", "100000"])
    expect(got == single_verdict(rc1, err1) == (3, "fault cycle-budget"),
           f"--cycle-budget 100000: --jobs {got}, single {single_verdict(rc1, err1)}")

    # An --input name that no binary has: refused (a single run refuses it too).
    x = os.path.join(out_dir, "x.npy")
    np.save(x, np.zeros((1, 16, 8, 8), np.float32))
    rc, out, err = run([ember_sim, "--jobs", f"{elf['budget']},{elf['valid']}",
                        "--input", f"z={x}"])
    expect(rc == 1 and "no binary of --jobs has an input named 'z'" in err and not out,
           f"--jobs --input z: exit {rc}, nothing run, {err.strip()!r}")
    rc, _, err = run([ember_sim, elf["valid"], "--no-table", "--input", f"z={x}"])
    expect(rc == 1 and "no input named 'z'" in err, f"single run --input z: exit {rc}")
    # A name one binary has feeds it; the other runs without it.
    rc, out, _ = run([ember_sim, "--jobs", f"{elf['valid']},{elf['valid']}", "--input", f"x={x}"])
    expect(rc == 0 and len(job_verdicts(out)) == 2, f"--jobs --input x: exit {rc}")

    # A wrong-shaped input: the error names the job (index and file), nothing runs.
    bad = os.path.join(out_dir, "bad.npy")
    np.save(bad, np.zeros((1, 3, 8, 8), np.float32))
    rc, out, err = run([ember_sim, "--jobs", f"{elf['budget']},{elf['valid']}",
                        "--input", f"x={bad}"])
    expect(rc == 1 and not out and re.search(r"error: job 1 \(\S*valid\.elf\): \S*bad\.npy "
                                             r"\(input 'x'\): holds shape \[1, 3, 8, 8\]", err),
           f"--jobs wrong shape: exit {rc}, {err.strip()!r}")
    # A binary that does not load: named by its job.
    junk = os.path.join(out_dir, "junk.elf")
    with open(junk, "wb") as f:
        f.write(b"not an elf")
    rc, out, err = run([ember_sim, "--jobs", f"{elf['valid']},{junk}"])
    expect(rc == 1 and not out and re.search(r"error: job 1 \(\S*junk\.elf\): ", err),
           f"--jobs unreadable binary: exit {rc}, {err.strip()!r}")

    check_no_firmware(out_dir, ember_run, ember_sim, ember_as, isa_json)

    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all verdicts agree")


if __name__ == "__main__":
    main()
