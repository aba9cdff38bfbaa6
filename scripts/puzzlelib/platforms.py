"""Builds of the simulator for another compiler or machine, for the test command: clang (a step of
`test` when clang++ is installed) and AArch64 Linux under qemu-user (`test --aarch64`, or
scripts/cross_aarch64.py). Each builds only what it checks: the simulator's Catch2 tests and
p14 --simple, its solution and a planted race, through `check` as a learner runs it."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional, Tuple

from .build import configure_cmd
from .common import err, ncpu, out, quote_cmd

# The planted race of p14 --simple (tests/planted/p14): Kogge-Stone without the read/write split.
# Its header says what `check` must answer.
RACE_PLANT = "simple_no_read_write_split"
# The cross toolchain's C and C++ libraries (and Boost, where it was built into them).
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"
# Runs an AArch64 program under qemu-aarch64 with one C library and a bounded address space.
QEMU_RUN = Path(__file__).resolve().parents[1] / "qemu-aarch64.sh"
AARCH64_APT = ["g++-aarch64-linux-gnu", "qemu-user"]
AARCH64_BOOST_APT = "libboost-context-dev:arm64"


def run(cmd: List[str], env=None, cwd=None) -> int:
    out("$ " + quote_cmd(cmd))
    try:
        return subprocess.call(cmd, env=env, cwd=cwd)
    except OSError as e:
        err("cannot run %s: %s" % (cmd[0], e))
        return 127


def plant_header(root: Path, name: str) -> dict:
    """The `// key: value` lines that start tests/planted/p14/<name>.plant."""
    h = {"also": []}
    for line in (root / "tests" / "planted" / "p14" / (name + ".plant")).read_text().splitlines():
        m = re.match(r"//\s*(\w+):\s*(.*)", line)
        if not m:
            break
        if m.group(1) == "also":
            h["also"].append(m.group(2))
        else:
            h[m.group(1)] = m.group(2)
    return h


def available_targets(build: Path) -> List[str]:
    """The targets a configured build folder has (Ninja or Makefiles)."""
    proc = subprocess.run(["cmake", "--build", str(build), "--target", "help"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    names = set()
    for line in proc.stdout.splitlines():
        m = re.match(r"^(?:\.\.\. )?([\w.+-]+)(?::| |$)", line.strip())
        if m:
            names.add(m.group(1))
    return sorted(names)


def sim_test_targets(build: Path, backends: Tuple[str, ...], profiler: bool = True) -> Tuple[List[str], str]:
    """The programs of the simulator's "sim" tests (Catch2 cases, the fiber switch and, unless
    profiler is false, the profiler) for the given fiber backends ("boost": the library the puzzles
    use), and a ctest -R pattern that selects their tests."""
    have = set(available_targets(build))
    if "cudasim_tests_ucontext" not in have:
        # Without Boost there is one library, cudasim, which is the ucontext build.
        backends = ("ucontext",)
    wanted = []
    for backend in backends:
        suffix = "_ucontext" if backend == "ucontext" and "cudasim_tests_ucontext" in have else ""
        wanted += ["cudasim_tests" + suffix, "cudasim_fiber_tests_" + backend]
        if profiler:
            wanted.append("cudasim_profile_tests" + suffix)
    return [t for t in wanted if t in have], "^sim-(%s)/" % "|".join(backends)


def check_p14(root: Path, wrap: Callable[[Path], Path], build: Path, env=None) -> bool:
    """`check p14 --simple` of the solution (passes) and of the planted race (a race, with the
    file:line of both accesses), run through `wrap` (the binary, or a qemu launcher of it)."""
    ok = True
    check = [sys.executable, str(root / "scripts" / "puzzle.py"), "check", "p14", "--simple", "--backend", "cpu",
             "--seed", "1", "--binary"]
    solution = wrap(build / "bin" / "p14_solution_cpu")
    out("$ " + quote_cmd(check + [str(solution)]))
    proc = subprocess.run(check + [str(solution)], cwd=str(root), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        err("p14 --simple (the solution): expected check to pass, got exit %d" % proc.returncode)
        ok = False
    h = plant_header(root, RACE_PLANT)
    planted = wrap(build / "bin" / ("planted_p14_%s_cpu" % RACE_PLANT))
    out("$ " + quote_cmd(check + [str(planted)]))
    proc = subprocess.run(check + [str(planted)], cwd=str(root), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900)
    sys.stdout.write(proc.stdout)
    text = proc.stdout
    # The report names where each of the two accesses happened in the planted file.
    lines = set(re.findall(r"%s\.cu:(\d+)" % RACE_PLANT, text))
    problems = []
    if proc.returncode != 1:
        problems.append("exit %d, not 1" % proc.returncode)
    if not re.search(r"p14 --simple: %s \(" % h["expect"], text):
        problems.append("no '%s' verdict" % h["expect"])
    for pattern in [h["match"]] + h["also"]:
        if not re.search(pattern, text):
            problems.append("no /%s/" % pattern)
    if not lines:
        problems.append("no file:line of %s.cu (the symbolizer gave none)" % RACE_PLANT)
    if problems:
        err("p14 --simple (planted race %s): %s" % (RACE_PLANT, "; ".join(problems)))
        ok = False
    else:
        out("planted race reported, at %s.cu line%s %s" % (RACE_PLANT, "s" if len(lines) > 1 else "",
                                                          ", ".join(sorted(lines, key=int))))
    return ok


def failures(tests_ok: bool, check_ok: bool) -> str:
    return ", ".join(what for what, ok in (("ctest failed", tests_ok), ("check p14 --simple failed", check_ok)) if not ok)


# ---- clang -----------------------------------------------------------------------------------

def find_clang() -> Optional[Tuple[str, str]]:
    """clang and clang++ (or the newest versioned pair Debian installs), or None."""
    for suffix in [""] + ["-%d" % v for v in range(20, 10, -1)]:
        cc, cxx = shutil.which("clang" + suffix), shutil.which("clang++" + suffix)
        if cc and cxx:
            return cc, cxx
    return None


# Catch2 cases that fail with clang for a known reason, left out of the clang step (the g++ build
# runs them): clang inlines the kernel into its launch and gives the first of two atomicExch calls
# no line, so the report names the launch's line instead of the atomic's.
CLANG_KNOWN_FAILURES = ["checker: a 64-bit read of a word written by two 32-bit atomics is a mixed-access race"]


def clang_step(root: Path, build: Path, jobs: str) -> Tuple[Optional[bool], str]:
    """The Catch2 tests of the simulator (the library the puzzles use) and the planted p14 race,
    built with clang in `build`. (None, why) when clang is not installed."""
    found = find_clang()
    if not found:
        return None, "clang++ is not installed (Debian: apt-get install clang)"
    cc, cxx = found
    configure = configure_cmd(root, build, ["-DPUZZLES_TESTS=ON", "-DPUZZLES_CUDA=OFF", "-DCMAKE_C_COMPILER=" + cc,
                                            "-DCMAKE_CXX_COMPILER=" + cxx])
    if run(configure) != 0:
        return False, "configure failed"
    # Lean, for CI's time: the profiler's counting does not depend on the compiler.
    targets, tests = sim_test_targets(build, ("boost",), profiler=False)
    targets += ["p14_solution_cpu", "planted_p14_%s_cpu" % RACE_PLANT]
    if run(["cmake", "--build", str(build), "-j", jobs, "--target"] + targets) != 0:
        return False, "build failed"
    # Both halves run, whichever fails: each says something of its own about the platform.
    skip = "|".join([re.escape(name) for name in CLANG_KNOWN_FAILURES] + ["/profiler$"])
    tests_ok = run(["ctest", "--output-on-failure", "-j", jobs, "-R", tests, "-E", skip], cwd=str(build)) == 0
    check_ok = check_p14(root, lambda p: p, build)
    return tests_ok and check_ok, failures(tests_ok, check_ok)


# ---- AArch64 under qemu ----------------------------------------------------------------------

def aarch64_missing() -> List[str]:
    """The apt packages the AArch64 step needs and does not find (Boost for arm64 is optional)."""
    missing = []
    if not shutil.which("aarch64-linux-gnu-g++"):
        missing.append("g++-aarch64-linux-gnu")
    if not shutil.which("qemu-aarch64"):
        missing.append("qemu-user")
    return missing


def aarch64_has_boost() -> bool:
    return any(Path("/usr/lib/aarch64-linux-gnu").glob("libboost_context.so*")) or \
        any(Path(AARCH64_SYSROOT, "lib").glob("libboost_context.so*"))


def install_aarch64_tools() -> None:
    """As root with apt-get: the cross compiler, qemu-user and Boost.Context for arm64 (multiarch)."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["dpkg", "--add-architecture", "arm64"], env=env)
    run(["apt-get", "update"], env=env)
    run(["apt-get", "install", "-y", "--no-install-recommends"] + AARCH64_APT, env=env)
    if run(["apt-get", "install", "-y", "--no-install-recommends", AARCH64_BOOST_APT], env=env) != 0:
        err("no %s: the AArch64 build uses ucontext fibers (the native AArch64 switch is not tested)"
            % AARCH64_BOOST_APT)


def aarch64_symbolizer() -> Optional[str]:
    """A symbolizer that reads AArch64 ELF on this machine: llvm-symbolizer reads every target,
    the machine's own addr2line only its own."""
    for name in ("llvm-symbolizer", "aarch64-linux-gnu-addr2line"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def qemu_launcher(build: Path, binary: Path, symbolizer: Optional[str]) -> Path:
    """A script that runs `binary` under qemu-aarch64: `check --binary` runs it like the binary."""
    folder = build / "qemu"
    folder.mkdir(exist_ok=True)
    script = folder / binary.name
    lines = ["#!/bin/sh", "# Runs %s under qemu-aarch64 (written by scripts/puzzlelib/platforms.py)." % binary.name]
    if symbolizer:
        lines.append("CUDASIM_SYMBOLIZER=%s; export CUDASIM_SYMBOLIZER" % symbolizer)
    lines.append('exec "%s" "%s" "$@"' % (QEMU_RUN, binary))
    script.write_text("\n".join(lines) + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def aarch64_step(root: Path, build: Path, jobs: str, install: bool) -> Tuple[Optional[bool], str]:
    """Cross-compiles the simulator's Catch2 tests and p14 for AArch64 Linux and runs them under
    qemu-aarch64. (None, why) when the tools are missing and cannot be installed."""
    missing = aarch64_missing()
    if missing and install:
        install_aarch64_tools()
        missing = aarch64_missing()
    if missing:
        return None, "missing %s (Debian: sudo apt-get install %s; for the native AArch64 fiber switch also " \
                     "sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install %s)" % (
                         ", ".join(missing), " ".join(AARCH64_APT), AARCH64_BOOST_APT)
    if not aarch64_has_boost():
        out("note: no Boost.Context for arm64 (%s): the simulator is built with ucontext fibers" % AARCH64_BOOST_APT)
    toolchain = root / "harness" / "cmake" / "aarch64-linux-gnu.cmake"
    configure = configure_cmd(root, build, ["-DCMAKE_TOOLCHAIN_FILE=" + str(toolchain), "-DPUZZLES_TESTS=ON",
                                            "-DPUZZLES_CUDA=OFF"])
    if run(configure) != 0:
        return False, "configure failed"
    targets, tests = sim_test_targets(build, ("boost", "ucontext"))
    targets += ["p14_solution_cpu", "planted_p14_%s_cpu" % RACE_PLANT]
    if run(["cmake", "--build", str(build), "-j", jobs, "--target"] + targets) != 0:
        return False, "build failed"
    # Each test is a run under qemu (CMAKE_CROSSCOMPILING_EMULATOR of the toolchain file).
    tests_ok = run(["ctest", "--output-on-failure", "-j", jobs, "-R", tests], cwd=str(build)) == 0
    symbolizer = aarch64_symbolizer()
    if not symbolizer:
        return False, "no symbolizer reads AArch64 ELF (apt-get install llvm, or binutils-aarch64-linux-gnu)"
    check_ok = check_p14(root, lambda p: qemu_launcher(build, p, symbolizer), build)
    return tests_ok and check_ok, failures(tests_ok, check_ok)


def default_jobs() -> str:
    return str(ncpu())
