#!/usr/bin/env python3
"""Run a command and check how it ended: exit code, output, time. Used by CTest for the simulator's
errors that end the process (a crash into a guard page, the runaway-thread watchdog, host code
touching device memory...), which an in-process test cannot observe.

    run_expect.py --exit 4 --match 'out of bounds' [--match ...] [--not-match REGEX]
                  [--env K=V ...] [--timeout 30] [--max-seconds 5] -- cmd args...

--match / --not-match are Python regular expressions searched (re.search) in stdout and stderr
together; each may be given several times. Exit status 0 when every check holds, 1 otherwise
(and everything the command printed is shown), 2 on a usage error. Standard library only.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--exit", type=int, required=True, dest="exit_code", help="expected exit status")
    p.add_argument("--match", action="append", default=[], metavar="REGEX", help="must occur in the output")
    p.add_argument("--not-match", action="append", default=[], metavar="REGEX", help="must not occur in the output")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="set in the command's environment")
    p.add_argument("--timeout", type=float, default=30, help="kill the command after this many seconds (default 30)")
    p.add_argument("--max-seconds", type=float, default=None, help="fail if the command takes longer than this")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command")
    a = p.parse_args(argv)
    if a.cmd and a.cmd[0] == "--":
        a.cmd = a.cmd[1:]
    if not a.cmd:
        p.error("no command given (put it after --)")
    for kv in a.env:
        if "=" not in kv:
            p.error("--env wants K=V, got %r" % kv)
    return a


def main(argv):
    a = parse(argv)
    env = dict(os.environ)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    start = time.monotonic()
    timed_out = False
    try:
        # A process group of its own, so that a hang is killed with everything it started.
        proc = subprocess.Popen(a.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as e:
        print("run_expect: cannot run %s: %s" % (a.cmd[0], e))
        return 1
    try:
        out, err = proc.communicate(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    elapsed = time.monotonic() - start
    out = out.decode("utf-8", "replace")
    err = err.decode("utf-8", "replace")
    text = out + err

    problems = []
    if timed_out:
        problems.append("the command did not finish within %g s and was killed" % a.timeout)
    elif proc.returncode != a.exit_code:
        rc = proc.returncode
        how = "killed by signal %d" % -rc if rc < 0 else "exit status %d" % rc
        problems.append("expected exit status %d, got %s" % (a.exit_code, how))
    for rx in a.match:
        if not re.search(rx, text, re.MULTILINE):
            problems.append("the output does not match %r" % rx)
    for rx in a.not_match:
        m = re.search(rx, text, re.MULTILINE)
        if m:
            problems.append("the output matches %r (at %r) but must not" % (rx, m.group(0)[:200]))
    if a.max_seconds is not None and elapsed > a.max_seconds:
        problems.append("took %.1f s, more than the allowed %g s" % (elapsed, a.max_seconds))

    if problems:
        print("run_expect: FAILED: %s" % " ".join(a.cmd))
        for p in problems:
            print("  - " + p)
        print("--- exit status %s after %.2f s" % (proc.returncode, elapsed))
        print("--- stdout\n" + out + ("" if out.endswith("\n") or not out else "\n") + "--- stderr\n" + err)
        return 1
    print("run_expect: ok (exit %d in %.2f s): %s" % (proc.returncode, elapsed, " ".join(a.cmd)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
