"""Several commands at once on one tree (issue 9, item 1).

A learner runs `check` in one terminal and `run` in another, or an editor plugin builds while
they type. Before the build lock, two builds in one folder broke each other: "Text file busy",
a missing binary, or a false link error blamed on the learner's file. These tests start
several commands at once on one fresh copy of the repository and check every verdict.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

from puzzlelib import build as bld

# Words that only a broken concurrent build prints; none may appear in any command's output.
BROKEN_BUILD_SIGNS = ("Text file busy", "No such file or directory", "undefined reference", "Build of ",
                      "could not start")


def fresh_tree(dest: Path, puzzle: str = "p14") -> Path:
    """A copy of the repository with one puzzle and no build folder."""
    root = dest / "repo"
    root.mkdir()
    shutil.copy2(str(REPO / "CMakeLists.txt"), str(root / "CMakeLists.txt"))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("harness", "scripts"):
        shutil.copytree(str(REPO / folder), str(root / folder), ignore=ignore)
    for folder in ("puzzles", "solutions"):
        shutil.copytree(str(REPO / folder / puzzle), str(root / folder / puzzle), ignore=ignore)
    return root


def start(root: Path, *args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PUZZLES_TIMEOUT="300")
    for name in ("PUZZLES_ROOT", "PUZZLES_BUILD_DIR"):
        env.pop(name, None)  # the copy's own scripts/ and build/
    return subprocess.Popen([sys.executable, str(root / "scripts" / "puzzle.py")] + list(args), cwd=str(root),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            universal_newlines=True, encoding="utf-8")


def finish(proc: subprocess.Popen, timeout: float = 900):
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        output, _ = proc.communicate()
        pytest.fail("a command did not finish in %d s:\n%s" % (timeout, output))
    return proc.returncode, output


@pytest.fixture
def needs_toolchain():
    if not shutil.which("cmake") or not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("needs cmake and a C++ compiler")


def test_three_commands_at_once_on_a_fresh_tree(tmp_path, needs_toolchain):
    root = fresh_tree(tmp_path)
    learner = root / "puzzles" / "p14" / "p14.cu"
    skeleton = learner.read_text(encoding="utf-8")
    solved = (root / "solutions" / "p14" / "p14.cu").read_text(encoding="utf-8")
    # Round 1 builds everything from nothing; later rounds change the learner's file, so that
    # its binary is rebuilt while the other commands build and run.
    rounds = [("solved", solved), ("unsolved", skeleton), ("solved", solved)]
    for number, (state, text) in enumerate(rounds, 1):
        learner.write_text(text + "\n// round %d\n" % number, encoding="utf-8")
        procs = {
            "check": start(root, "check", "p14", "--simple", "--quick", "--seed", "5", "--backend", "cpu"),
            "run": start(root, "run", "p14", "--simple", "--backend", "cpu"),
            "run --solution": start(root, "run", "p14", "--simple", "--solution", "--backend", "cpu"),
        }
        results = {name: finish(proc) for name, proc in procs.items()}
        where = "round %d (%s learner file)" % (number, state)
        for name, (code, output) in results.items():
            for sign in BROKEN_BUILD_SIGNS:
                assert sign not in output, "%s, %s: %r in its output:\n%s" % (where, name, sign, output)
        code, output = results["run --solution"]
        assert code == 0 and "\u2705 p14 --simple passed" in output, (where, output)
        code, output = results["run"]
        check_code, check_output = results["check"]
        if state == "solved":
            assert code == 0 and "\u2705 p14 --simple passed" in output, (where, output)
            assert check_code == 0 and "\u2705 p14 --simple: pass" in check_output, (where, check_output)
        else:
            assert code == 1 and "\u274c p14 --simple failed: wrong answer" in output, (where, output)
            assert check_code == 1 and "failed at case 1 of" in check_output, (where, check_output)
    # Each command ran its own copy of the binary and removed it when it ended.
    assert list((root / "build" / bld.SNAPSHOT_DIR).iterdir()) == []


LOCK_HOLDER = """
import sys, time
sys.path.insert(0, {scripts!r})
from pathlib import Path
from puzzlelib import build as bld
with bld.BuildLock(Path({build!r})):
    print("locked", flush=True)
    time.sleep({hold})
"""

LOCK_TAKER = """
import sys, time
sys.path.insert(0, {scripts!r})
from pathlib import Path
from puzzlelib import build as bld
start = time.monotonic()
try:
    with bld.BuildLock(Path({build!r}), timeout={timeout}):
        print("got the lock after %.1f s" % (time.monotonic() - start), flush=True)
except bld.SetupError:
    print("gave up after %.1f s" % (time.monotonic() - start), flush=True)
"""


def _python(code: str, **fmt) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code.format(scripts=str(REPO / "scripts"), **fmt)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def test_build_lock_waits_for_the_holder_and_says_so(tmp_path):
    build = str(tmp_path / "build")
    holder = _python(LOCK_HOLDER, build=build, hold=3)
    assert holder.stdout.readline().strip() == "locked"
    taker = _python(LOCK_TAKER, build=build, timeout=60)
    out, err = taker.communicate(timeout=60)
    holder.communicate(timeout=60)
    waited = float(out.split("after ")[1].split(" s")[0])
    assert out.startswith("got the lock") and waited >= 1.5, (out, err)
    assert "waiting for another command that is building in" in err


def test_build_lock_gives_up_with_advice(tmp_path):
    build = str(tmp_path / "build")
    holder = _python(LOCK_HOLDER, build=build, hold=20)
    assert holder.stdout.readline().strip() == "locked"
    try:
        taker = _python(LOCK_TAKER, build=build, timeout=1)
        out, err = taker.communicate(timeout=60)
    finally:
        holder.kill()
        holder.communicate()
    assert out.startswith("gave up"), (out, err)
    assert "delete" in err and bld.LOCK_NAME in err  # what to try when no command is running


def test_snapshot_is_private_and_stale_copies_go(tmp_path):
    build = tmp_path / "build"
    binary = tmp_path / "p99_cpu"
    binary.write_text("#!/bin/sh\necho one\n")
    binary.chmod(0o755)
    stale = build / bld.SNAPSHOT_DIR / "p99_cpu.999999999"  # a pid that cannot be running
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    copy = bld.snapshot_binary(build, binary)
    assert copy != binary and copy.name == "p99_cpu.%d" % os.getpid()
    assert not stale.exists()
    binary.write_text("#!/bin/sh\necho two\n")  # a rebuild by another command
    assert subprocess.run([str(copy)], stdout=subprocess.PIPE, universal_newlines=True).stdout == "one\n"
    assert os.access(str(copy), os.X_OK)
