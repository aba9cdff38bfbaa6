"""A sandbox for each graded case: bubblewrap (`bwrap`, Debian's bubblewrap package).

The learner's launchers and, on the simulator, kernels are ordinary C++ that runs with the
grader's rights. Where bwrap works (it needs Linux user namespaces, or to run as root), each case
runs in a sandbox with:

  - no network (a network namespace with only a loopback device, down);
  - its own PID namespace: it sees and can signal only its own processes (`kill(-1, SIGKILL)`
    ends its own case), and dies with the grader (--die-with-parent);
  - a filesystem of the system's read-only program folders (/usr, /lib*, /bin, /sbin, the dynamic
    loader's /etc files), the staged tree and the binaries read-only, a private /tmp, and one
    writable output folder; nothing else: not the other submissions, not the pristine tree
    (solutions/ included), not the home directory or the rest of /etc.

Where it does not work, `sandbox_probe` says why, and grade prints and reports that cases run
unsandboxed (docs/instructors.md, "What it does not cover").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
LOADER_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
SANDBOX_ENV = "PUZZLES_GRADE_SANDBOX"  # "off": run cases without a sandbox (a test of the fallback)


class Sandbox:
    """The bwrap command line for one submission's cases."""

    def __init__(self, bwrap: str):
        self.bwrap = bwrap

    def prefix(self, read_only: Sequence[Path], writable: Sequence[Path], cwd: Path) -> List[str]:
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                "--setenv", "TMPDIR", "/tmp", "--setenv", "HOME", "/tmp"]
        for path in SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        for path in LOADER_FILES:
            if os.path.exists(path):
                args += ["--ro-bind", path, path]
        for path in read_only:
            args += ["--ro-bind", str(path), str(path)]
        for path in writable:
            Path(path).mkdir(parents=True, exist_ok=True)
            args += ["--bind", str(path), str(path)]
        return args + ["--chdir", str(cwd), "--"]


def sandbox_probe() -> Tuple[Optional[Sandbox], str]:
    """(a Sandbox, a description) where one works here, else (None, why not)."""
    if os.environ.get(SANDBOX_ENV, "").strip().lower() in ("off", "0", "no", "none"):
        return None, "off (%s=off): learner code runs with the grader's rights" % SANDBOX_ENV
    if not os.path.isdir("/proc/self/ns"):
        return None, "off (not Linux: no namespaces): learner code runs with the grader's rights"
    bwrap = shutil.which("bwrap")
    if not bwrap:
        return None, ("off (bwrap not found; Debian/Ubuntu: apt-get install bubblewrap): learner code runs "
                      "with the grader's rights")
    probe_dir = Path(tempfile.mkdtemp(prefix="puzzle-sandbox-probe-"))
    try:
        sandbox = Sandbox(bwrap)
        true = shutil.which("true") or "/bin/true"
        cmd = sandbox.prefix([], [probe_dir], probe_dir) + [true]
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, "off (bwrap did not start: %s): learner code runs with the grader's rights" % e
        if proc.returncode != 0:
            why = proc.stdout.decode("utf-8", errors="replace").strip().splitlines()
            return None, ("off (bwrap failed: %s; user namespaces may be disabled, e.g. sysctl "
                          "kernel.unprivileged_userns_clone=0 or a container without them): learner code runs "
                          "with the grader's rights" % (why[-1] if why else "exit code %d" % proc.returncode))
        return sandbox, ("bwrap (%s): no network, own PID namespace, read-only staged tree and binaries, "
                         "private /tmp, no other submissions, pristine tree or home directory" % bwrap)
    finally:
        shutil.rmtree(str(probe_dir), ignore_errors=True)
