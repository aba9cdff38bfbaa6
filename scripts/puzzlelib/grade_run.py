"""Running untrusted learner programs for `grade`: time and memory limits, process groups, and
the output excerpt of a failing case (the reason of an error is explain.py's).

A driver run is a subprocess in its own session (a timeout kills the whole group) with
RLIMIT_AS (address space) and RLIMIT_CORE set in preexec_fn. The simulator maps fiber stacks and
guard pages with MAP_NORESERVE; they still count towards RLIMIT_AS, about 140 MiB of address
space per simulator worker thread for a 1024-thread block, so `grade` caps the worker count
(CUDASIM_WORKERS) and glibc's malloc arenas (MALLOC_ARENA_MAX) to keep a 4 GiB limit generous.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import threading
import time
from typing import Dict, List, Optional, Tuple

from . import driver_text
from .driver import ERROR, FAIL, PASS, RACE, USAGE, Outcome, parse_result_line, relevant_lines, signal_name
from .explain import explain, format_memory, race_reason, shorten, simulator_reason  # noqa: F401 (re-exported)

MAX_KEPT_LINES = 4000
MAX_LINE_BYTES = 1 << 16

# ------------------------------------------------------------------------------ limits

try:  # POSIX only; on other systems the memory limit is not applied (documented)
    import resource
except ImportError:  # pragma: no cover
    resource = None


def memory_limit_supported() -> bool:
    return resource is not None and hasattr(resource, "RLIMIT_AS")


def parse_memory(text: str) -> Optional[int]:
    """'4096' (MiB), '4G', '512M', '0'/'none'/'off' (no limit) -> bytes or None."""
    t = str(text).strip().lower()
    if t in ("0", "none", "off", "unlimited"):
        return None
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$", t)
    if not m:
        raise ValueError(text)
    value = float(m.group(1))
    unit = {"": 1 << 20, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2)]
    size = int(value * unit)
    if size < (1 << 20):
        raise ValueError(text)
    return size


def _limiter(memory: Optional[int]):
    def apply():  # runs in the child between fork and exec: keep it minimal
        if resource is None:
            return
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ValueError, OSError):
            pass
        if memory is not None and hasattr(resource, "RLIMIT_AS"):
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return apply


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def run_limited(cmd: List[str], timeout: float, memory: Optional[int] = None,
                env: Optional[Dict[str, str]] = None, cwd=None, verdict_fd_env: Optional[str] = None) -> Outcome:
    """Run one driver command like driver.run_driver, with a memory limit and an environment.

    Output lines are capped (MAX_LINE_BYTES each, the last MAX_KEPT_LINES kept) so a program
    that floods its output cannot exhaust the grader's memory.

    verdict_fd_env: the result is read from a pipe of its own, whose descriptor the program finds
    in that environment variable, and never from the output (which learner code can write to).
    """
    start = time.monotonic()
    kwargs = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True
        kwargs["preexec_fn"] = _limiter(memory)
    verdict_read = verdict_write = None
    env = driver_text.environment(env)  # the driver's prose as data, worded here (driver_text.py)
    if verdict_fd_env:
        verdict_read, verdict_write = os.pipe()
        env[verdict_fd_env] = str(verdict_write)
        kwargs["pass_fds"] = (verdict_write,)
    try:
        try:
            proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=None if cwd is None else str(cwd), env=env, **kwargs)
        finally:
            if verdict_write is not None:
                os.close(verdict_write)
    except OSError as e:
        if verdict_read is not None:
            os.close(verdict_read)
        outcome = Outcome(list(map(str, cmd)), 127, ["cannot start %s: %s" % (cmd[0], e)], None, False, 0.0)
        outcome.kind, outcome.reason = ERROR, "could not start the program"
        return outcome

    verdicts = []

    def verdict_reader():
        with os.fdopen(verdict_read, "rb") as f:
            for raw in iter(lambda: f.readline(MAX_LINE_BYTES), b""):
                _, data = parse_result_line(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
                if data is not None:
                    verdicts.append(data)

    kept = collections.deque(maxlen=MAX_KEPT_LINES)
    results = []

    def reader():
        for raw in iter(lambda: proc.stdout.readline(MAX_LINE_BYTES), b""):
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            text, data = parse_result_line(text)
            if data is not None:
                results.append(data)
                if not text.strip():
                    continue
            kept.append(driver_text.render(text))
        proc.stdout.close()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    vthread = None
    if verdict_read is not None:
        vthread = threading.Thread(target=verdict_reader, daemon=True)
        vthread.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    # A grandchild that kept the pipe open (e.g. a forked process) must not hang the grader.
    _kill_group(proc)
    thread.join(timeout=5)
    if vthread is not None:
        vthread.join(timeout=5)
        # Lines can only be added to the verdict pipe (by a process that reopened it through /proc):
        # a failing verdict always outranks a pass, so an added "pass" line changes nothing.
        failing = [v for v in verdicts if v.get("verdict") != PASS]
        results = failing or verdicts
    return Outcome(list(map(str, cmd)), proc.returncode, list(kept), results[-1] if results else None,
                   timed_out, time.monotonic() - start)


# ------------------------------------------------------------------------------ checked runs

NOT_ON_DEVICE = "not-on-device"
CHECK_LEARNER_ENV = "PUZZLES_CHECK_LEARNER"
VERDICT_FD_ENV = "PUZZLES_VERDICT_FD"
ALLOW_HOST_ENV = "PUZZLES_ALLOW_HOST_OUTPUT"
CHECKED_CODES = {PASS: 0, FAIL: 1, RACE: 3, ERROR: 4, NOT_ON_DEVICE: 5}


def run_checked(checker, learner, args: List[str], timeout: float, memory: Optional[int] = None,
                env: Optional[Dict[str, str]] = None, cwd=None, require_device: bool = True,
                sandbox: Optional[List[str]] = None) -> Outcome:
    """One graded case: the checker (pNN_checker, the driver without the learner's file) starts the
    learner's binary, receives its output and compares; its verdict comes back on a pipe the
    learner's process never holds (harness/channel.h). Nothing in the output decides the verdict.

    sandbox: a command prefix (grade_sandbox.Sandbox.prefix) that both processes run under."""
    env = dict(os.environ if env is None else env)
    env[CHECK_LEARNER_ENV] = str(learner)
    env.pop(ALLOW_HOST_ENV, None)
    if not require_device:
        env[ALLOW_HOST_ENV] = "1"
    outcome = run_limited(list(sandbox or []) + [str(checker)] + list(args), timeout, memory, env, cwd,
                          verdict_fd_env=VERDICT_FD_ENV)
    if sandbox:
        outcome.cmd = outcome.cmd[len(sandbox):]
        if outcome.result is None and outcome.returncode is not None and 128 < outcome.returncode < 160:
            # bwrap ends with 128 + N when the checker inside it died of signal N
            outcome.returncode = 128 - outcome.returncode
    return classify_checked(outcome)


def classify_checked(outcome: Outcome) -> Outcome:
    """The verdict of a checked run from the checker's RESULT (outcome.result) and exit code."""
    rc, result = outcome.returncode, outcome.result
    if outcome.timed_out or outcome.reason == "could not start the program":
        return outcome
    if result is None or not result.get("checked"):
        if rc == 2:  # the driver refused the case before anything ran
            outcome.kind, outcome.reason = USAGE, "the driver rejected its command line"
        elif rc is not None and rc < 0:
            outcome.kind, outcome.reason = ERROR, (
                "the grader's checker was killed (%s): the learner's program may have signalled its parent"
                % signal_name(-rc))
        else:
            outcome.kind, outcome.reason = ERROR, "the grader's checker ended without a verdict (exit code %s)" % rc
        return outcome
    verdict, reason = result.get("verdict"), result.get("reason")
    expected_rc = CHECKED_CODES.get(verdict)
    if verdict == ERROR and rc is not None and rc > 128:
        expected_rc = rc  # the learner's process died of signal rc - 128
    if expected_rc is None or rc != expected_rc:
        outcome.kind, outcome.reason = ERROR, "the grader's checker reported %r with exit code %s" % (verdict, rc)
        return outcome
    if verdict == PASS:
        outcome.kind, outcome.reason = PASS, "passed"
    elif verdict == FAIL:
        outcome.kind, outcome.reason = FAIL, "wrong answer"
    elif verdict == RACE:
        outcome.kind, outcome.reason = RACE, race_reason(outcome)
    elif verdict == NOT_ON_DEVICE:
        outcome.kind, outcome.reason = NOT_ON_DEVICE, reason or "not computed on the device"
    else:
        outcome.kind, outcome.reason = ERROR, reason or "kernel error"
    return outcome


def run_capture(cmd: List[str], timeout: float, cwd=None, env=None) -> Tuple[int, str, bool]:
    """(returncode, merged output, timed_out) for a build step; the process group is killed on timeout."""
    kwargs = {"start_new_session": True} if os.name == "posix" else {}
    try:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=None if cwd is None else str(cwd), env=env, **kwargs)
    except OSError as e:
        return 127, "cannot run %s: %s" % (cmd[0], e), False
    try:
        data, _ = proc.communicate(timeout=timeout)
        return proc.returncode, data.decode("utf-8", errors="replace"), False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        data, _ = proc.communicate()
        return -9, data.decode("utf-8", errors="replace"), True
    except BaseException:
        _kill_group(proc)
        raise


# ------------------------------------------------------------------------------ excerpts

def excerpt(lines: List[str], replace: Optional[Dict[str, str]] = None, limit: int = 20,
            max_chars: int = 4000, report: Optional[List[str]] = None) -> str:
    """The diagnostic part of a failing run's output (relevant_lines), then the simulator's report
    worded from its record (diagnosis.render), paths made relative."""
    picked = relevant_lines(lines, limit) + list(report or [])
    text = "\n".join(picked)
    for old, new in (replace or {}).items():
        if old:
            text = text.replace(old, new)
    if len(text) > max_chars:
        text = text[:max_chars - 20].rstrip() + "\n... (truncated)"
    return text
