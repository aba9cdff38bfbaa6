"""Shared helpers: repository paths, errors, console output."""

from __future__ import annotations

import os
import shlex
import sys
import unicodedata
from pathlib import Path

from .messages import tr

# The command learners type; used in hints and usage text.
PROG = "python3 scripts/puzzle.py"

DEFAULT_TIMEOUT_S = 120.0


class UsageError(Exception):
    """Bad command line or declaration. The CLI prints the message and exits 2."""


class BuildError(Exception):
    """A build or configure step failed; the message has already been printed.
    `log` is the build's output, when there was one (read it here, not from last-build.log,
    which another command may have rewritten since)."""

    def __init__(self, message: str = "build failed", log: str = ""):
        super().__init__(message)
        self.log = log


def repo_root() -> Path:
    """The repository root: parent of scripts/, or $PUZZLES_ROOT (used by the tests)."""
    env = os.environ.get("PUZZLES_ROOT")
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parent.parent.parent


def build_dir(root: Path) -> Path:
    env = os.environ.get("PUZZLES_BUILD_DIR")
    return Path(env).resolve() if env else root / "build"


def test_build_dir(root: Path) -> Path:
    env = os.environ.get("PUZZLES_TEST_BUILD_DIR")
    return Path(env).resolve() if env else root / "build-test"


def run_timeout() -> float:
    """Wall-clock limit for one driver run, from $PUZZLES_TIMEOUT (seconds)."""
    raw = os.environ.get("PUZZLES_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(tr("PUZZLES_TIMEOUT must be a number of seconds, got %s") % repr(raw))
    if value <= 0:
        raise UsageError(tr("PUZZLES_TIMEOUT must be positive, got %s") % repr(raw))
    return value


def ncpu() -> int:
    return os.cpu_count() or 2


def rel(path, root: Path) -> str:
    """`path` relative to the repository root when it lies inside it."""
    p = Path(path)
    try:
        return p.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(p)


def quote_cmd(args) -> str:
    return " ".join(shlex.quote(str(a)) for a in args)


def stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _can_encode(text: str) -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        text.encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def mark(ok: bool) -> str:
    """The pass/fail symbol, with an ASCII fallback for terminals that cannot show emoji."""
    symbol = "\u2705" if ok else "\u274c"
    if _can_encode(symbol):
        return symbol
    return "[PASS]" if ok else "[FAIL]"


def out(text: str = "") -> None:
    print(text, flush=True)


def err(text: str = "") -> None:
    print(text, file=sys.stderr, flush=True)


def fmt_seconds(seconds: float) -> str:
    return "%.1f s" % seconds


def width(text: str) -> int:
    """Columns the text takes in a terminal: Hangul and other wide characters take two, combining
    marks none, so a Korean table's columns line up."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def table(rows, header=None, indent: str = "") -> str:
    """Left-aligned text table; the last column is not padded."""
    rows = [list(map(str, r)) for r in rows]
    if header:
        rows.insert(0, list(header))
    if not rows:
        return ""
    widths = [max(width(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    lines = []
    for r in rows:
        cells = [c + " " * (widths[i] - width(c)) if i < len(r) - 1 else c for i, c in enumerate(r)]
        lines.append(indent + "  ".join(cells).rstrip())
    return "\n".join(lines)
