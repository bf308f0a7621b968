"""What the tools' end-to-end check scripts share: run a command and demand its exit
status, and one named check that ends the script on failure. Imported by the scripts
beside it (python3 tests/tools/X.py puts this folder first on sys.path)."""

import subprocess
import sys


def run(cmd, want_rc=0):
    """Runs `cmd`, echoing it and its output (stdout and stderr merged); exits the script
    unless its status is `want_rc`. Returns the output."""
    print("$ " + " ".join(map(str, cmd)), flush=True)
    p = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    print(p.stdout, flush=True)
    if p.returncode != want_rc:
        sys.exit(f"FAILED: exit status {p.returncode}, expected {want_rc}")
    return p.stdout


def expect(cond, what):
    """Exits the script with `what` unless `cond`; prints it as passed otherwise."""
    if not cond:
        sys.exit("FAILED: " + what)
    print("ok: " + what)
