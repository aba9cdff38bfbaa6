"""One build for a whole class (`grade --submissions`).

Every submission of a class is graded against the same pristine tree, so the harness, the
simulator, each puzzle's driver objects and its checker are the same for all of them: only the
learner's puzzles/pNN/pNN.cu differs. ClassBuild stages and builds the shared part once (in
<work>/class), then asks Ninja for the three commands that turn the learner file into pNN_cpu
(`ninja -t commands pNN_cpu`: the cu2cpp translation, the compile and the link) and replays them
per submission with that submission's own file and output paths (<work>/class/build/s/<student>),
so submissions compile in parallel without touching each other's files or the shared build.

Without Ninja (a Makefile build has no such query) grade falls back to one full build per
submission, and says so.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple  # noqa: F401 (Dict: type comments)

from . import build as bld
from . import grade_integrity as gi
from .grade_run import run_capture


class ClassBuildError(Exception):
    """The shared part of the class build failed: the pristine tree itself does not build."""


def checker_target(puzzle: str) -> str:
    return "%s_checker" % puzzle


class Compiled:
    """The outcome of compiling one learner file: ok, seconds, reason and diagnostic when not ok,
    the binary, and src_root (the tree the file sits in, for paths in messages)."""

    def __init__(self, ok: bool, seconds: float, reason: Optional[str], diagnostic: Optional[str],
                 binary: Path, src_root: Path):
        self.ok, self.seconds, self.reason, self.diagnostic = ok, seconds, reason, diagnostic
        self.binary, self.src_root = binary, src_root


class ClassBuild:
    def __init__(self, work: Path, pristine: Path, files: List[str], build_timeout: float):
        self.root = work / "class"
        self.tree = self.root / "tree"
        self.build = self.root / "build"
        self.pristine = pristine
        self.files = files
        self.build_timeout = build_timeout
        self.recipes = {}  # type: Dict[str, List[str]]  puzzle -> its learner-specific commands

    # -- the shared part
    def prepare(self, puzzles: List[str], progress=lambda text: None) -> Optional[str]:
        """Stage, configure and build the shared part; returns None, or why the per-submission
        route is not available (then every submission is built on its own)."""
        if not shutil.which("ninja"):
            return "Ninja is not installed (apt-get install ninja-build), so each submission is built on its own"
        files = {}  # type: Dict[str, bytes]
        for rel in self.files:
            if gi.needed_for_build(rel) and (gi.scope(rel) == gi.ALL or gi.scope(rel) in puzzles):
                files[rel] = (self.pristine / rel).read_bytes()
        for name in puzzles:  # the pristine learner file only keeps CMake's source list whole
            skeleton = self.pristine / gi.learner_file(name)
            files[gi.learner_file(name)] = skeleton.read_bytes() if skeleton.is_file() else b""
        gi.sync_tree(self.tree, files)
        if (self.build / "CMakeCache.txt").is_file() and not (self.build / "build.ninja").is_file():
            shutil.rmtree(str(self.build))  # a Makefile build from elsewhere: start over with Ninja
        cmd = bld.configure_cmd(self.tree, self.build, ["-DPUZZLES_CUDA=OFF", "-DPUZZLES_TESTS=OFF"])
        if "-G" not in cmd and not (self.build / "build.ninja").is_file():
            cmd += ["-G", "Ninja"]
        progress("configuring the class build ...")
        rc, text, timed_out = run_capture(cmd, self.build_timeout)
        if rc != 0:
            raise ClassBuildError("CMake could not configure the class build (%s)%s:\n%s" % (
                " ".join(cmd), " (timed out)" if timed_out else "",
                "\n".join("  " + line for line in text.rstrip().splitlines()[-30:])))
        targets = ["puzzle_harness_cpu"]
        for name in puzzles:
            targets += [checker_target(name), "%s_driver_cpu" % name]
        progress("building the harness, the simulator and %d checker%s once ..." % (
            len(puzzles), "" if len(puzzles) == 1 else "s"))
        rc, text, timed_out = run_capture(["cmake", "--build", str(self.build), "--target"] + targets,
                                          self.build_timeout * max(1, len(targets)))
        if rc != 0:
            raise ClassBuildError("the pristine tree does not build (%s):\n%s" % (
                "timed out" if timed_out else "exit code %d" % rc,
                "\n".join("  " + line for line in text.rstrip().splitlines()[-30:])))
        for name in puzzles:
            recipe, why = self._recipe(name)
            if recipe is None:
                return why
            self.recipes[name] = recipe
        return None

    def _recipe(self, name: str) -> Tuple[Optional[List[str]], str]:
        """The commands Ninja would run for pNN_cpu that concern the learner file."""
        rc, text, _ = run_capture(["ninja", "-C", str(self.build), "-t", "commands", "%s_cpu" % name],
                                  self.build_timeout)
        translated = "%s_cpu.cu.cpp" % name
        lines = [line for line in text.splitlines() if translated in line] if rc == 0 else []
        if len(lines) != 3:
            return None, ("Ninja listed %d commands for %s_cpu's learner file, expected 3 (translate, "
                          "compile, link), so each submission is built on its own" % (len(lines), name))
        return lines, ""

    # -- one submission
    def compile(self, name: str, student: str, data: bytes) -> Compiled:
        """Compile one learner file into <build>/s/<student>/bin/pNN_cpu."""
        base = self.build / "s" / student
        src_root = base / "src"
        binary = base / "bin" / ("%s_cpu" % name)
        source = src_root / gi.learner_file(name)
        subs = [
            (str(self.tree / gi.learner_file(name)), str(source)),
            (str(self.build / "generated" / ("%s_cpu.cu.cpp" % name)),
             str(base / "generated" / ("%s_cpu.cu.cpp" % name))),
            ("CMakeFiles/%s_cpu.dir/" % name, "s/%s/obj/%s_cpu.dir/" % (student, name)),
        ]
        output = re.compile(r"(?<![\w.-])bin/%s_cpu(?![\w.-])" % re.escape(name))
        commands = []
        for line in self.recipes[name]:
            for old, new in subs:
                line = line.replace(old, new)
            line = output.sub("s/%s/bin/%s_cpu" % (student, name), line)
            commands.append(line)
        start = time.monotonic()
        for path in (source.parent, base / "generated", base / "obj" / ("%s_cpu.dir" % name) / "generated",
                     binary.parent):
            path.mkdir(parents=True, exist_ok=True)
        stamp = base / (".%s.stamp" % name)
        digest = hashlib.sha256("\0".join(commands).encode() + b"\0" + data).hexdigest()
        if binary.is_file() and stamp.is_file() and stamp.read_text() == digest:
            return Compiled(True, 0.0, None, None, binary, src_root)
        for old in (binary, stamp):
            if old.exists():
                old.unlink()  # never run a binary left from an earlier build
        source.write_bytes(data)
        texts = []
        for command in commands:
            rc, text, timed_out = run_capture(["/bin/sh", "-c", command], self.build_timeout, cwd=self.build)
            texts.append(text)
            if timed_out:
                return Compiled(False, time.monotonic() - start,
                                "compile timed out after %g s" % self.build_timeout, None, binary, src_root)
            if rc != 0:
                break
        seconds = time.monotonic() - start
        text = "\n".join(texts)
        if binary.is_file() and rc == 0:
            stamp.write_text(digest)
            return Compiled(True, seconds, None, None, binary, src_root)
        rel = gi.learner_file(name)
        summary = bld.build_failure_summary(text, src_root, rel, "%s_cpu" % name)
        for prefix in (str(src_root.resolve()) + "/", str(src_root) + "/", str(self.build) + "/"):
            summary = summary.replace(prefix, "")
        where = bld.first_error_location(text, src_root, rel)
        return Compiled(False, seconds, "compile error" + (" at %s" % where if where else ""),
                        summary.strip("\n"), binary, src_root)

    def checker(self, name: str) -> Path:
        return bld.binary_path(self.build, checker_target(name))


def shell_safe(path: Path) -> bool:
    """Whether a path can be substituted into the recorded shell commands as it is."""
    return shlex.quote(str(path)) == str(path)
