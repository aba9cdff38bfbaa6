"""CMake configure/build, learner-friendly compiler errors, backend selection."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Optional, Tuple

from .common import BuildError, err, ncpu, quote_cmd, rel, stdout_is_tty

# g++/clang: file:line:col: error: msg    nvcc/MSVC: file(line): error: msg
GCC_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+)(?::(?P<col>\d+))?:\s*"
                      r"(?P<kind>fatal error|error|note|warning)\b")
NVCC_DIAG = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\)\s*:\s*"
                       r"(?P<kind>fatal error|error|note|warning)\b")
# file: error: msg (no position), e.g. from harness/sim/cu2cpp.py
FILE_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):\s*(?P<kind>fatal error|error)\b")
# Lines that describe a failure without a file position (linker, make, ninja).
OTHER_ERROR = re.compile(r"undefined reference|multiple definition|\berror\b|Error \d+|FAILED:", re.I)
MAX_DIAGNOSTICS = 12
CONTEXT_LINES = 3

CMAKE_MISSING = """\
CMake is not installed (the `cmake` command was not found). Install it, then run the same command again:
  Debian/Ubuntu:  sudo apt-get install cmake g++
  macOS:          brew install cmake
  or with pixi:   pixi run <task>   (https://pixi.sh installs cmake and a compiler for you)"""


def have_cmake() -> bool:
    return shutil.which("cmake") is not None


def _capture(cmd: List[str], cwd=None) -> Tuple[int, str]:
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, cwd=cwd)
    return proc.returncode, proc.stdout.decode("utf-8", errors="replace")


def is_configured(build: Path) -> bool:
    return (build / "CMakeCache.txt").is_file() and (
        (build / "build.ninja").is_file() or (build / "Makefile").is_file())


def configure_cmd(root: Path, build: Path, extra: Optional[List[str]] = None) -> List[str]:
    cmd = ["cmake", "-S", str(root), "-B", str(build), "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
    if not (build / "CMakeCache.txt").is_file() and shutil.which("ninja"):
        cmd += ["-G", "Ninja"]  # a generator can only be chosen for a fresh build dir
    return cmd + list(extra or [])


def ensure_configured(root: Path, build: Path) -> None:
    """Configure the build dir on first use. Raises BuildError (already reported) on failure."""
    if not have_cmake():
        err(CMAKE_MISSING)
        raise SetupError("cmake missing")
    if is_configured(build):
        return
    cmd = configure_cmd(root, build)
    status("configuring %s ..." % rel(build, root))
    rc, text = _capture(cmd)
    status("")
    if rc != 0:
        tail = text.rstrip().splitlines()[-40:]
        err("CMake could not configure the project (%s):" % quote_cmd(cmd))
        for line in tail:
            err("  " + line)
        err("Fix the problem above (often a missing compiler or library), then run the same command again.")
        raise SetupError("configure failed")


def status(text: str) -> None:
    """A transient progress note on a terminal; nothing when output is redirected."""
    if not stdout_is_tty():
        return
    sys.stdout.write("\r\033[K" + text)
    sys.stdout.flush()


def unknown_target(text: str, target: str) -> bool:
    t = re.escape(target)
    return bool(re.search(r"No rule to make target [`'\"]?%s['\"]?\.\s+Stop" % t, text)
                or re.search(r"unknown target '%s'" % t, text))


class TargetMissing(Exception):
    pass


class SetupError(BuildError):
    """Nothing can be built or run (no cmake, configure failed, no GPU for --backend gpu, ...).
    The reason has been printed; the whole command stops."""


def build_target(root: Path, build: Path, target: str, source: Optional[str] = None,
                 report: bool = True) -> float:
    """Build one target incrementally; returns seconds.

    Raises TargetMissing when the build system does not know the target (e.g. a `_gpu` target
    without nvcc) and BuildError, after printing a summary, when compilation fails.
    """
    ensure_configured(root, build)
    cmd = ["cmake", "--build", str(build), "--target", target, "-j", str(ncpu())]
    status("building %s ..." % target)
    start = time.monotonic()
    rc, text = _capture(cmd)
    status("")
    if rc == 0:
        return time.monotonic() - start
    if unknown_target(text, target):
        raise TargetMissing(target)
    if not report:
        raise BuildError("build failed")
    log = build / "last-build.log"
    try:
        log.write_text(text, encoding="utf-8")
    except OSError:
        log = None
    err(build_failure_summary(text, root, source, target))
    if log is not None:
        err("(full build output: %s)" % rel(log, root))
    raise BuildError("build failed")


def _diag(line: str):
    return GCC_DIAG.match(line) or NVCC_DIAG.match(line) or FILE_DIAG.match(line)


def _mentions(path: str, source: Optional[str], root: Path) -> bool:
    if not source:
        return True
    p = path.strip().replace("\\", "/")
    if p.endswith(source) or rel(p, root) == source:
        return True
    # The simulator compiles a translated copy of the learner file; it keeps the file name.
    return Path(p).name.startswith(Path(source).name)


def normalize_paths(line: str, root: Path) -> str:
    for prefix in {str(root.resolve()), str(root)}:
        line = line.replace(prefix + "/", "").replace(prefix + "\\", "")
    return line


def build_failure_summary(text: str, root: Path, source: Optional[str], target: str) -> str:
    """The compiler diagnostics that concern the learner's file, with a little context."""
    lines = text.splitlines()
    picked = []  # type: List[List[str]]   diagnostics about the learner's file
    fallback = []  # type: List[List[str]]  any other error lines, in order
    skip_until = 0
    for i, line in enumerate(lines):
        if i < skip_until:
            continue
        m = _diag(line)
        if not m:
            if OTHER_ERROR.search(line):
                fallback.append([line])
            continue
        kind = m.group("kind")
        if kind == "warning":
            continue
        block = [line]
        for follow in lines[i + 1:i + 1 + CONTEXT_LINES]:
            if _diag(follow) or not follow.strip() or not follow.startswith((" ", "\t", "|")):
                break
            block.append(follow)
        skip_until = i + len(block)
        if _mentions(m.group("file"), source, root):
            picked.append(block)
        elif "error" in kind:
            fallback.append(block)
    if not picked:
        picked = fallback or [[l] for l in lines[-20:]]
    where = source or target
    head = ["", "Build of %s failed (%s):" % (target, where), ""]
    body = []
    for block in picked[:MAX_DIAGNOSTICS]:
        body += ["  " + normalize_paths(l, root) for l in block]
    if len(picked) > MAX_DIAGNOSTICS:
        body.append("  ... and %d more" % (len(picked) - MAX_DIAGNOSTICS))
    return "\n".join(head + body + ["", "Fix the first error above, then run the same command again."])


def gpu_present() -> bool:
    """True when `nvidia-smi -L` succeeds and lists a GPU."""
    if not shutil.which("nvidia-smi"):
        return False
    try:
        proc = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    text = proc.stdout.decode("utf-8", errors="replace")
    return proc.returncode == 0 and any(l.startswith("GPU ") for l in text.splitlines())


NO_GPU = """\
--backend gpu needs an NVIDIA GPU, but `nvidia-smi -L` lists none on this machine.
Use --backend cpu (the CPU simulator, which also finds races) or --backend auto."""

NO_GPU_TARGET = """\
This machine has a GPU, but the build has no GPU target %s: CMake did not find nvcc when it
configured %s. Install the CUDA toolkit (or use `pixi run -e cuda ...`), then delete %s and run the
same command again; or use --backend cpu."""


def build_for_backend(root: Path, build: Path, puzzle, solution: bool, backend: str,
                      report: bool = True):
    """Build the target for `backend` (auto/cpu/gpu). Returns (backend, binary path, note).

    Raises BuildError after reporting a failed build (report=False: silently), and
    SetupError when nothing can be built (e.g. --backend gpu without a GPU).
    """
    source = puzzle.source(solution)
    note = ""
    if backend in ("auto", "gpu"):
        has_gpu = gpu_present()
        if not has_gpu:
            if backend == "gpu":
                err(NO_GPU)
                raise SetupError("no gpu")
            note = "no GPU found"
        else:
            target = puzzle.target(solution, "gpu")
            try:
                build_target(root, build, target, source, report)
                return "gpu", binary_path(build, target), ""
            except TargetMissing:
                if backend == "gpu":
                    err(NO_GPU_TARGET % (target, rel(build, root), rel(build, root)))
                    raise SetupError("no gpu target")
                note = "built without nvcc"
    target = puzzle.target(solution, "cpu")
    try:
        build_target(root, build, target, source, report)
    except TargetMissing:
        if report:
            err("The build has no target %s: is the puzzle added to CMake with add_puzzle(%s)? "
                "If the puzzle is new, delete %s and try again." % (target, puzzle.name, rel(build, root)))
        raise BuildError("no target")
    return "cpu", binary_path(build, target), note


def binary_path(build: Path, target: str) -> Path:
    path = build / "bin" / target
    if not path.exists() and (build / "bin" / (target + ".exe")).exists():
        path = build / "bin" / (target + ".exe")
    return path


def backend_label(backend: str, note: str = "") -> str:
    text = {"cpu": "cpu (CPU simulator)", "gpu": "gpu (CUDA)"}.get(backend, backend)
    return text + ("; " + note if note else "")
