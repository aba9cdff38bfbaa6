"""CMake configure/build, learner-friendly compiler errors, backend selection."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from .common import BuildError, err, ncpu, quote_cmd, rel, stdout_is_tty
from .messages import tr

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
# g++ follows a diagnostic with the source line, a caret line and up to a few label lines
# ("      |       int*"); keep all of them.
CONTEXT_LINES = 8
# The simulator's headers refuse what it cannot simulate with #error or static_assert, whose
# text explains why and what to use instead: such errors are shown even though they are not in
# the learner's file.
SIM_HEADER = re.compile(r"(^|/)harness/sim/")
SIM_EXPLANATION = re.compile(r"#error|static assertion failed|static_assert")

# CUDA names a learner may use that the CPU simulator does not provide, and what to use instead.
# g++ only says "was not declared in this scope; did you mean ...", which guesses a spelling.
UNSUPPORTED_CUDA = {
    "cudaLaunchKernel": "the kernel<<<blocks, threads, shared bytes>>>(args) syntax",
    "cudaLaunchCooperativeKernel": "separate kernel launches (the end of a kernel is the barrier between blocks)",
    "__match_any_sync": "__ballot_sync",
    "__match_all_sync": "__ballot_sync",
    "__reduce_and_sync": "__ballot_sync or a __shfl_xor_sync loop",
    "__reduce_or_sync": "__ballot_sync or a __shfl_xor_sync loop",
    "__reduce_xor_sync": "a __shfl_xor_sync loop",
    "__nanosleep": "nothing: simulated threads do not run concurrently, so waiting does not help",
}
UNDECLARED = re.compile(r"[\'‘`\"](?P<name>[A-Za-z_][\w:]*)[\'’`\"] (?:was not declared in this scope"
                        r"|is not a namespace-name|is not a member of|has not been declared|does not name a type"
                        r"|is not a class, namespace, or enumeration)"
                        r"|use of undeclared identifier [\'‘`\"](?P<clang>[A-Za-z_][\w:]*)"
                        r"|(?P<header>cooperative_groups(?:\.h|/\w+\.h)?): No such file")
CUDA_LOOKING = re.compile(r"^(cuda[A-Z]\w*|__\w+_sync|atomic[A-Z]\w*)$")
# Libraries built on CUDA that the simulator does not have: a missing header (`thrust/sort.h: No
# such file`), or the simulator's own cub/cub.cuh #error.
MISSING_LIBRARY = re.compile(r"\b(?P<lib>thrust|cub)/[\w./]+: No such file|(?P<cub_error>cudasim: CUB is not available)")
LIBRARY_ADVICE = {
    "thrust": "Thrust (<thrust/...>) is not supported by the CPU simulator: write the kernel yourself (for a sum or a "
              "scan, a reduction as in puzzles/p12 or a scan as in puzzles/p14), and do the host's share with the C++ "
              "standard library (std::sort, std::accumulate, std::inclusive_scan from <algorithm> and <numeric>). "
              "On a GPU, nvcc builds the Thrust code unchanged.",
    "cub": "CUB (<cub/...>) is not supported by the CPU simulator: write the warp or block collective with __shfl_*_sync "
           "and shared memory, or use cooperative groups (cg::reduce, cg::inclusive_scan from <cooperative_groups/reduce.h>), "
           "which the simulator has. On a GPU, nvcc builds the CUB code unchanged.",
}

CMAKE_MISSING = """\
CMake is not installed (the `cmake` command was not found). Install it, then run the same command again:
  Debian/Ubuntu:  sudo apt-get install cmake g++
  macOS:          brew install cmake
  or with pixi:   pixi run <task>   (https://pixi.sh installs cmake and a compiler for you)"""


def have_cmake() -> bool:
    return shutil.which("cmake") is not None


def _capture(cmd: List[str], cwd=None, on_line: Optional[Callable[[str], None]] = None) -> Tuple[int, str]:
    """Run cmd, stdout and stderr merged; on_line sees each line as it arrives (for progress)."""
    proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=cwd)
    lines = []
    for raw in iter(proc.stdout.readline, b""):
        line = raw.decode("utf-8", errors="replace")
        lines.append(line)
        if on_line:
            on_line(line.rstrip("\r\n"))
    proc.stdout.close()
    return proc.wait(), "".join(lines)


# ---- one build at a time per build directory -------------------------------------------------
#
# Two commands on one tree (a `check` in one terminal, a `run` in another, an editor plugin)
# must not build the same targets at once: ninja/make in parallel on one directory relink a
# binary while the other links against half-written objects, which showed up as false link
# errors blamed on the learner's file. Every configure and build takes an exclusive lock on
# <build>/.build.lock; a command that waits says so, and gives up after LOCK_TIMEOUT_S.

LOCK_NAME = ".build.lock"
LOCK_TIMEOUT_S = 1800.0
LOCK_POLL_S = 0.2


class BuildLock:
    """An exclusive advisory lock on a build directory (fcntl/msvcrt), reentrant per process."""

    _held = {}  # type: dict   resolved path -> [file object, depth]

    def __init__(self, build: Path, root: Optional[Path] = None, timeout: Optional[float] = None):
        self.build = Path(build)
        self.root = root
        self.timeout = LOCK_TIMEOUT_S if timeout is None else timeout
        self.key = str(self.build.resolve())

    def __enter__(self):
        held = BuildLock._held.get(self.key)
        if held:
            held[1] += 1
            return self
        self.build.mkdir(parents=True, exist_ok=True)
        f = open(str(self.build / LOCK_NAME), "a+")
        start = time.monotonic()
        told = False
        while not _try_lock(f):
            waited = time.monotonic() - start
            if waited > self.timeout:
                f.close()
                err(tr("Another command has been building in %s for over %d minutes. If none is running, "
                       "delete %s and run the same command again.")
                    % (self._where(), self.timeout // 60, self._where(LOCK_NAME)))
                raise SetupError("build lock timeout")
            if not told and waited > 0.5:
                progress(tr("waiting for another command that is building in %s ...") % self._where())
                told = True
            time.sleep(LOCK_POLL_S)
        BuildLock._held[self.key] = [f, 1]
        return self

    def __exit__(self, *exc):
        held = BuildLock._held[self.key]
        held[1] -= 1
        if held[1] == 0:
            del BuildLock._held[self.key]
            _unlock(held[0])
            held[0].close()
        return False

    def _where(self, name: str = "") -> str:
        path = self.build / name if name else self.build
        return rel(path, self.root) if self.root else str(path)


def _try_lock(f) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt
        try:
            f.seek(0)
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def _unlock(f) -> None:
    try:
        import fcntl
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    except ImportError:
        import msvcrt
        f.seek(0)
        msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)


# A command runs a private copy of the binary it built: a later build by another command may
# relink the original while this one runs it ("Text file busy", or a half-written binary).
SNAPSHOT_DIR = "run"
_snapshots = []  # type: List[Path]


def _remove_snapshots() -> None:
    for path in _snapshots:
        try:
            path.unlink()
        except OSError:
            pass


atexit.register(_remove_snapshots)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def snapshot_binary(build: Path, binary: Path) -> Path:
    """A copy of `binary` that only this process runs; removed when the process exits.
    Call with the build lock held. Copies left by processes that died are removed here."""
    folder = build / SNAPSHOT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        pid = old.name.rsplit(".", 1)[-1]
        if pid.isdigit() and not _pid_alive(int(pid)):
            try:
                old.unlink()
            except OSError:
                pass
    copy = folder / ("%s.%d" % (binary.name, os.getpid()))
    tmp = folder / ("%s.%d.tmp" % (binary.name, os.getpid()))
    shutil.copy2(str(binary), str(tmp))
    os.replace(str(tmp), str(copy))  # never exec a half-copied file
    if copy not in _snapshots:
        _snapshots.append(copy)
    return copy


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
        err(tr(CMAKE_MISSING))
        raise SetupError("cmake missing")
    with BuildLock(build, root):
        if is_configured(build):
            return
        cmd = configure_cmd(root, build)
        progress(tr("configuring %s (the first time takes a while) ...") % rel(build, root))
        rc, text = _capture(cmd)
        status("")
        if rc == 0 and fell_back_to_ucontext(text):
            err(tr(UCONTEXT_HINT))
    if rc != 0:
        tail = text.rstrip().splitlines()[-40:]
        err(tr("CMake could not configure the project (%s):") % quote_cmd(cmd))
        for line in tail:
            err("  " + line)
        err(tr("Fix the problem above (often a missing compiler or library), then run the same command again."))
        raise SetupError("configure failed")


def status(text: str) -> None:
    """A transient progress note on a terminal; nothing when output is redirected."""
    if not stdout_is_tty():
        return
    sys.stdout.write("\r\033[K" + text)
    sys.stdout.flush()


def progress(text: str) -> None:
    """A progress note on every kind of output: transient on a terminal, otherwise one line on
    stderr (so that redirected stdout keeps only the program's result)."""
    if stdout_is_tty():
        status(text)
    elif text:
        err(text)


# ninja: "[3/12] Building CXX object ..."; make: "[ 50%] Building CXX object ..."
BUILD_STEP = re.compile(r"^\[\s*\d+(?:/\d+|%)\]\s")


def _build_progress(target: str, root: Path) -> Callable[[str], None]:
    def on_line(line: str) -> None:
        if BUILD_STEP.match(line):
            step = normalize_paths(line, root)
            step = step if len(step) <= 110 else step[:107] + "..."
            progress(tr("building %s: %s") % (target, step))
    return on_line


UCONTEXT_HINT = ("note: Boost.Context was not found, so the simulator uses its slower ucontext fibers "
                 "(README.md, Start, says how much); for speed install libboost-context-dev (apt) or boost (brew), "
                 "then delete the build folder.")


def fell_back_to_ucontext(configure_output: str) -> bool:
    """True when harness/CMakeLists.txt reported the ucontext fallback while configuring."""
    return "cudasim fibers: ucontext" in configure_output


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
    with BuildLock(build, root):
        ensure_configured(root, build)
        cmd = ["cmake", "--build", str(build), "--target", target, "-j", str(ncpu())]
        status(tr("building %s ...") % target)
        start = time.monotonic()
        rc, text = _capture(cmd, on_line=_build_progress(target, root))
        status("")
        if rc == 0:
            return time.monotonic() - start
        if unknown_target(text, target):
            raise TargetMissing(target)
        log = build / "last-build.log"
        try:
            log.write_text(text, encoding="utf-8")
        except OSError:
            log = None
    if not report:
        raise BuildError("build failed", text)
    err(build_failure_summary(text, root, source, target))
    if log is not None:
        err(tr("(full build output: %s)") % rel(log, root))
    raise BuildError("build failed", text)


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


def first_error_location(text: str, root, source: str) -> Optional[str]:
    """'puzzles/p14/p14.cu:12' for the first compiler error in the learner's file, or None."""
    for line in text.splitlines():
        m = GCC_DIAG.match(line) or NVCC_DIAG.match(line)
        if m and "error" in m.group("kind") and _mentions(m.group("file"), source, root):
            return "%s:%s" % (source, m.group("line"))
    return None


def normalize_paths(line: str, root: Path) -> str:
    for prefix in {str(root.resolve()), str(root)}:
        line = line.replace(prefix + "/", "").replace(prefix + "\\", "")
    return line


def build_failure_summary(text: str, root: Path, source: Optional[str], target: str) -> str:
    """The compiler diagnostics that concern the learner's file, with a little context, the
    simulator headers' own explanations, and what to use instead of CUDA the simulator lacks."""
    lines = text.splitlines()
    explained = []  # type: List[List[str]]  #error/static_assert text from the simulator's headers
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
        path = m.group("file").replace("\\", "/")
        if "error" in kind and SIM_HEADER.search(path) and SIM_EXPLANATION.search(line):
            if block not in explained:
                explained.append(block)
        elif _mentions(m.group("file"), source, root):
            picked.append(block)
        elif "error" in kind:
            fallback.append(block)
    if not picked and not explained:
        picked = fallback or [[l] for l in lines[-20:]]
    where = source or target
    head = ["", tr("Build of %s failed (%s):") % (target, where), ""]
    body = []
    if explained:
        body.append("  " + tr("The CPU simulator refuses something this file uses; its explanation:"))
        for block in explained[:MAX_DIAGNOSTICS]:
            body += ["  " + normalize_paths(l, root) for l in block]
        body.append("")
    for block in picked[:MAX_DIAGNOSTICS]:
        body += ["  " + normalize_paths(l, root) for l in block]
    if len(picked) > MAX_DIAGNOSTICS:
        body.append("  " + tr("... and %d more") % (len(picked) - MAX_DIAGNOSTICS))
    advice = unsupported_cuda_advice(text)
    if advice:
        body += [""] + ["  " + a for a in advice]
    return "\n".join(head + body + ["", tr("Fix the first error above, then run the same command again.")])


def unsupported_cuda_advice(text: str) -> List[str]:
    """'__match_any_sync is not supported by the CPU simulator; use __ballot_sync.' for each CUDA
    name the compiler could not find, in order of first appearance, after what to use instead of
    Thrust or CUB when the file includes them."""
    advice = []  # type: List[str]
    seen = set()
    for m in MISSING_LIBRARY.finditer(text):
        lib = m.group("lib") or "cub"
        if lib not in seen:
            seen.add(lib)
            advice.append(tr(LIBRARY_ADVICE[lib]))
    for m in UNDECLARED.finditer(text):
        name = m.group("name") or m.group("clang") or "cooperative_groups"
        name = name.split("::")[-1] if name.split("::")[-1] in UNSUPPORTED_CUDA else name.split("::")[0]
        if name in seen:
            continue
        seen.add(name)
        if name in UNSUPPORTED_CUDA:
            advice.append(tr("%s is not supported by the CPU simulator; use %s.") % (name, tr(UNSUPPORTED_CUDA[name])))
        elif CUDA_LOOKING.match(name):
            advice.append(tr("%s is not part of the CPU simulator's CUDA (harness/sim/README.md lists what is); "
                             "if it is a typo, the compiler's \"did you mean\" above is its guess.") % name)
    if advice:
        advice.append(tr("(On a machine with an NVIDIA GPU and the CUDA toolkit, --backend gpu builds with nvcc.)"))
    return advice


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

    The binary returned is this process's own copy (snapshot_binary), so that another command
    building in the same folder cannot change it while it runs.
    Raises BuildError after reporting a failed build (report=False: silently), and
    SetupError when nothing can be built (e.g. --backend gpu without a GPU).
    """
    with BuildLock(build, root):
        kind, binary, note = _build_for_backend(root, build, puzzle, solution, backend, report)
        return kind, snapshot_binary(build, binary), note


def _build_for_backend(root: Path, build: Path, puzzle, solution: bool, backend: str, report: bool):
    source = puzzle.source(solution)
    note = ""
    if backend in ("auto", "gpu"):
        has_gpu = gpu_present()
        if not has_gpu:
            if backend == "gpu":
                err(tr(NO_GPU))
                raise SetupError("no gpu")
            note = "no GPU found"
        else:
            target = puzzle.target(solution, "gpu")
            try:
                build_target(root, build, target, source, report)
                return "gpu", binary_path(build, target), ""
            except TargetMissing:
                if backend == "gpu":
                    err(tr(NO_GPU_TARGET) % (target, rel(build, root), rel(build, root)))
                    raise SetupError("no gpu target")
                note = "built without nvcc"
    target = puzzle.target(solution, "cpu")
    try:
        build_target(root, build, target, source, report)
    except TargetMissing:
        if report:
            err(tr("The build has no target %s: is the puzzle added to CMake with add_puzzle(%s)? "
                   "If the puzzle is new, delete %s and try again.") % (target, puzzle.name, rel(build, root)))
        raise BuildError("no target")
    return "cpu", binary_path(build, target), note


def binary_path(build: Path, target: str) -> Path:
    path = build / "bin" / target
    if not path.exists() and (build / "bin" / (target + ".exe")).exists():
        path = build / "bin" / (target + ".exe")
    return path


def backend_label(backend: str, note: str = "") -> str:
    text = {"cpu": "cpu (CPU simulator)", "gpu": "gpu (CUDA)"}.get(backend, backend)
    return text + ("; " + tr(note) if note else "")
