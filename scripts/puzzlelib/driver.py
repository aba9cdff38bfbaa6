"""Running a driver binary and turning its exit status into a verdict.

Driver exit codes (docs/architecture.md): 0 pass, 1 wrong answer, 2 usage error, 3 race,
4 kernel error. The last line is `RESULT {json}`; the CLI hides it from the learner.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import subprocess
import threading
import time
from typing import Callable, List, Optional

from . import driver_text

RESULT_RE = re.compile(r"RESULT (\{.*\})\s*$")
# The harness's report of a failed CUDA call, as data (harness.cpp, report_failed_call).
HARNESS_ERROR_RE = re.compile(r"^HARNESS_ERROR (\{.*\})\s*$")
MAX_KEPT_LINES = 4000

# Verdict kinds used by run/check/list.
PASS, FAIL, RACE, ERROR, USAGE = "pass", "fail", "race", "error", "usage"


class Outcome:
    """What one driver run produced."""

    def __init__(self, cmd: List[str], returncode: Optional[int], lines: List[str],
                 result: Optional[dict], timed_out: bool, seconds: float):
        self.cmd = cmd
        self.returncode = returncode
        # output without the RESULT line (SAY lines in words: driver_text.SaidLine) and the harness's
        # HARNESS_ERROR line, which is kept as data:
        # {"case": "call"|"kernels", "call", "what", "error", "site"} (harness.cpp), or None
        self.harness_error = None
        self.lines = []
        for line in lines:
            failed = parse_harness_error(line)
            if failed is None:
                self.lines.append(line)
            else:
                self.harness_error = failed
        self.result = result
        self.timed_out = timed_out
        self.seconds = seconds
        self.kind, self.reason = classify(returncode, result, timed_out)
        if self.kind == RACE:
            from .explain import race_reason  # explain.py builds on this module
            self.reason = race_reason(self)

    @property
    def diagnosis(self) -> Optional[dict]:
        """The simulator's diagnosis of the error that ended the run (RESULT's "diagnosis"), or None."""
        return diagnosis_record(self.result)

    @property
    def detail(self) -> str:
        """The reason without a repeated verdict word ("race: ..." -> "...")."""
        prefix = self.kind + ": "
        return self.reason[len(prefix):] if self.reason.startswith(prefix) else self.reason

    @property
    def said(self) -> List[dict]:
        """What the driver said as data (its SAY records, driver_text.py), in order."""
        return [line.said for line in self.lines if isinstance(line, driver_text.SaidLine)]

    @property
    def passed(self) -> bool:
        return self.kind == PASS

    def __repr__(self):
        return "Outcome(%s, %r, rc=%r)" % (self.kind, self.reason, self.returncode)


def diagnosis_record(result: Optional[dict]) -> Optional[dict]:
    """RESULT's diagnosis record (docs/architecture.md, "The diagnosis record"), or None. Under
    `grade` the checker passes the learner process's record on as a JSON string, with the kind it
    validated against the exit code beside it ("diagnosis_kind"): that kind is the one believed."""
    d = (result or {}).get("diagnosis")
    if isinstance(d, str):
        try:
            d = json.loads(d)
        except ValueError:
            d = None
        kind = (result or {}).get("diagnosis_kind")
        if not isinstance(kind, str):
            return None
        d = d if isinstance(d, dict) else {}
        d["kind"] = kind
    if not isinstance(d, dict) or not isinstance(d.get("kind"), str):
        return None
    if not isinstance(d.get("facts"), dict):
        d["facts"] = {}
    return d


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except (ValueError, AttributeError):
        return "signal %d" % signum


def classify(returncode: Optional[int], result: Optional[dict], timed_out: bool):
    """(kind, reason): kind is pass/fail/race/error/usage, reason is the learner-facing text."""
    if timed_out:
        return ERROR, "timed out"
    if returncode is None:
        return ERROR, "did not finish"
    if returncode < 0:
        return ERROR, "crashed (%s)" % signal_name(-returncode)
    reported = (result or {}).get("verdict")
    if returncode == 0:
        if result is None:
            # A program that exits 0 without its RESULT line (e.g. exit() in learner code)
            # must never count as a pass.
            return ERROR, "crashed (exited without reporting a result)"
        if reported in (FAIL, RACE, ERROR):
            returncode = {FAIL: 1, RACE: 3, ERROR: 4}[reported]
        else:
            return PASS, "passed"
    if returncode == 1:
        return FAIL, "wrong answer"
    if returncode == 2:
        return USAGE, "the driver rejected its command line"
    if returncode == 3:
        return RACE, "race: result depends on thread order"
    if returncode == 4:
        return ERROR, "kernel error"
    if returncode > 128 and returncode - 128 < 65:
        return ERROR, "crashed (%s)" % signal_name(returncode - 128)
    return ERROR, "crashed (exit code %d)" % returncode


def parse_result_line(line: str):
    """(text before RESULT, parsed dict) or (line, None) when the line carries no RESULT."""
    m = RESULT_RE.search(line)
    if not m:
        return line, None
    try:
        data = json.loads(m.group(1))
    except ValueError:
        return line, None
    if not isinstance(data, dict):
        return line, None
    return line[:m.start()], data


def parse_harness_error(line: str) -> Optional[dict]:
    """The data of a `HARNESS_ERROR {json}` line, or None for any other line."""
    m = HARNESS_ERROR_RE.match(line)
    if not m:
        return None
    try:
        data = json.loads(m.group(1))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


# addr2line's "(discriminator 1)" tells a learner nothing about the line it follows.
DISCRIMINATOR_RE = re.compile(r" \(discriminator \d+\)")


def tidy_line(line: str) -> str:
    """A driver output line as the learner sees it."""
    return DISCRIMINATOR_RE.sub("", line)


def _kill(proc: subprocess.Popen) -> None:
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def run_driver(cmd: List[str], timeout: float,
               on_line: Optional[Callable[[str], None]] = None, cwd=None) -> Outcome:
    """Run one driver command, stdout and stderr merged.

    on_line, when given, receives every output line (RESULT hidden) as it arrives.
    The process runs in its own process group so a timeout can end all of it.
    """
    start = time.monotonic()
    kwargs = {}
    if os.name == "posix":
        kwargs["start_new_session"] = True
    try:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=cwd, env=driver_text.environment(), **kwargs)
    except OSError as e:
        lines = ["cannot start %s: %s" % (cmd[0], e)]
        if on_line:
            on_line(lines[0])
        outcome = Outcome(list(map(str, cmd)), 127, lines, None, False, 0.0)
        # Not the learner's fault: the binary is missing or unusable (a setup problem, exit 2).
        outcome.kind, outcome.reason = USAGE, "could not start the program"
        return outcome

    kept = collections.deque(maxlen=MAX_KEPT_LINES)
    results = []

    def reader():
        for raw in iter(proc.stdout.readline, b""):
            text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            text, data = parse_result_line(text)
            text = driver_text.render(tidy_line(text))
            if data is not None:
                results.append(data)
                if not text.strip():
                    continue
            kept.append(text)
            if on_line and parse_harness_error(text) is None:  # data for the Outcome, not for the learner
                on_line(text)
        proc.stdout.close()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        proc.wait()
    except BaseException:  # Ctrl-C: the child is in its own session and did not see it
        _kill(proc)
        proc.wait()
        raise
    thread.join(timeout=5)
    return Outcome(list(map(str, cmd)), proc.returncode, list(kept),
                   results[-1] if results else None, timed_out, time.monotonic() - start)


def relevant_lines(lines: List[str], limit: int = 20) -> List[str]:
    """The part of a failing case's output worth showing, chosen by what a line is, never by its
    words: the driver's own lines (said as data: driver_text.SaidLine) over what the program
    printed (printf output can run to thousands of lines); without any, the last lines."""
    # The backend line (harness.cpp, show mode) is the same for every case; the summary names it.
    lines = [l for l in lines if l.strip() and not l.startswith("backend:  ")]
    if len(lines) <= limit:
        return lines
    picked = [l for l in lines if isinstance(l, driver_text.SaidLine)]
    if not picked:
        picked = lines[-limit:]
    if len(picked) > limit:
        picked = picked[:limit - 1] + ["... (%d more lines)" % (len(picked) - limit + 1)]
    return picked
