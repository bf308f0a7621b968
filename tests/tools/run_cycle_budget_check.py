#!/usr/bin/env python3
"""ember-run --cycle-budget (issue 47 item 8): every device that counts cycles (sim, and
rtl when built) takes the budget, with ember-sim's default when it is not given; a run
past it exits 3 with ember-sim's fault record; the RTL stops soon after the budget in
host time and prints progress only to a terminal, and only on long runs.

usage: run_cycle_budget_check.py DIR EMBER_RUN EMBER_SIM EMBER_AS MODEL.onnx [--long]
"""
import os
import pty
import re
import subprocess
import sys
import time

FAULT = re.compile(r": (fault cycle-budget at cycle \d+, engine \w+, instruction \d+): (.*)")


def run(args, env=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def on_terminal(args, env):
    """Runs `args` with stderr on a pseudo-terminal; returns (status, what it printed)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(timeout=120), out.decode(errors="replace")


def fault_of(stderr, what):
    m = FAULT.search(stderr)
    if not m:
        sys.exit(f"FAIL {what}: no cycle-budget fault in: {stderr!r}")
    return m.group(1), m.group(2)


def expect(cond, what):
    if not cond:
        sys.exit("FAIL " + what)
    print("ok  ", what)


def program(path, gemms):
    """`gemms` long gemms (65,074 cycles each on ember-v1) whose default budget (one pass
    over the rows they walk) is far below what they need."""
    lines = ['.isa "ember-v1"']
    lines += ["  gemm act_addr=0 acc_addr=0 wgt_addr=0 n0=255 n1=255 n2=1 act_s0=0 act_s1=0 "
              "act_s2=0 acc_s0=0 acc_s1=0 wgt_s2=0"] * gemms
    lines.append("  finish")
    with open(path + ".s", "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run([EMBER_AS, path + ".s", "-o", path + ".elf"], check=True)
    return path + ".elf"


def main():
    global EMBER_AS
    out, ember_run, ember_sim, EMBER_AS, model = sys.argv[1:6]
    os.makedirs(out, exist_ok=True)
    rc, help_text, _ = run([ember_run, "--help"])
    devices = ["sim"] + (["rtl"] if re.search(r"^\s+rtl\s", help_text, re.M) else [])
    print("devices:", devices)
    env = dict(os.environ)
    env.pop("EMBER_PROGRESS_AFTER", None)

    # An explicit budget: ember-sim's fault record on every device, exit 3.
    long_elf = program(os.path.join(out, "long"), 100)
    rc, _, err = run([ember_sim, long_elf, "--no-table", "--cycle-budget", "100000"])
    expect(rc == 3, f"ember-sim --cycle-budget 100000 exits 3 (got {rc})")
    ref, ref_reason = fault_of(err, "ember-sim")
    expect("at cycle 100000," in ref, "ember-sim faults at the budget: " + ref)
    for dev in devices:
        t0 = time.monotonic()
        rc, stdout, err = run([ember_run, long_elf, "--device", dev, "--quiet",
                               "--cycle-budget", "100000"], env)
        wall = time.monotonic() - t0
        expect(rc == 3, f"ember-run --device {dev} --cycle-budget 100000 exits 3 (got {rc})")
        rec, reason = fault_of(err, dev)
        expect(rec == ref, f"{dev}: the fault record is ember-sim's ({rec})")
        expect(reason.startswith("cycle budget of 100000 cycles exceeded"),
               f"{dev}: the reason names the budget ({reason})")
        expect(err.count("\n") == 1, f"{dev}: one line on stderr, no progress off a terminal")
        host = float(re.search(r"time: \S+ ([0-9.]+) s on the host", stdout).group(1))
        print(f"     {dev}: {host:.3f} s on the host for the run, {wall:.3f} s in all")
        # Issue 47 asks for the budget within a second; the bound leaves room for a loaded
        # machine (measured 0.6 s for the RTL on a shared 2-core host).
        expect(host < 2.0, f"{dev}: stops within 2 s of host time ({host:.3f} s)")

    # The default budget scales with the program (2^20 cycles of slack plus each
    # instruction's one-pass time): the same cycle as ember-sim's. 20 gemms need 1.3 M
    # cycles and get about 1.07 M; the RTL's run to it takes seconds, so it is checked
    # only with --long.
    short_elf = program(os.path.join(out, "short"), 20)
    rc, _, err = run([ember_sim, short_elf, "--no-table"])
    expect(rc == 3, f"ember-sim's default budget stops 20 long gemms (got {rc})")
    ref, _ = fault_of(err, "ember-sim default")
    for dev in devices if "--long" in sys.argv else ["sim"]:
        rc, _, err = run([ember_run, short_elf, "--device", dev, "--quiet"], env)
        expect(rc == 3 and fault_of(err, dev)[0] == ref,
               f"{dev}: the default budget is ember-sim's ({ref})")
    rc, _, _ = run([ember_run, short_elf, "--quiet", "--cycle-budget", "2000000"], env)
    expect(rc == 0, "a budget above the program's need lets it finish")

    # A model's NPU segments take the budget too.
    rc, _, err = run([ember_run, model, "--random-input", "1", "--device", "sim",
                      "--cycle-budget", "10"], env)
    expect(rc == 3 and "fault cycle-budget at cycle 10," in err,
           "a model on sim with --cycle-budget 10 faults (exit 3): " + err.strip())

    # Command-line errors (2): a budget of 0, a negative one, and one for a device that
    # counts no cycles.
    for bad in ["0", "-1", "x"]:
        rc, _, err = run([ember_run, short_elf, "--cycle-budget", bad])
        expect(rc == 2 and "--cycle-budget" in err, f"--cycle-budget {bad} is a usage error")
    rc, _, err = run([ember_run, model, "--random-input", "1", "--device", "interp",
                      "--cycle-budget", "1000"])
    expect(rc == 2 and "--cycle-budget: counts NPU cycles" in err,
           "--cycle-budget on interp is a usage error: " + err.strip())

    # Progress: on a terminal only, and only once the run is long (EMBER_PROGRESS_AFTER
    # shortens the wait from its default of 2 s so the test stays fast).
    dev = devices[-1]
    args = [ember_run, long_elf, "--device", dev, "--quiet", "--cycle-budget", "300000"]
    rc, text = on_terminal(args, dict(env, EMBER_PROGRESS_AFTER="0"))
    expect(rc == 3 and f"[{dev}] cycle " in text, f"{dev}: progress on a terminal: {text!r}")
    rc, text = on_terminal(args[:-1] + ["50000"], env)
    expect(rc == 3 and "[" + dev + "]" not in text, f"{dev}: none on a short run")
    print("PASS")


if __name__ == "__main__":
    main()
