"""`grade`: grading for instructors and CI.

Every variant of every puzzle runs on hidden random inputs (a fresh seed unless --seed or
$PUZZLES_GRADE_SEED, always printed) and the sizes of cases.sweep, each case in its own
subprocess with a time and a memory limit. The learner's files are built in a staged tree made of
the pristine build files (--pristine DIR, or the learner's own files once they matched the
checksum manifest grading/protected.sha256) plus puzzles/pNN/pNN.cu, with -DPUZZLES_CUDA=OFF:
grading runs on the CPU simulator and compares with the CPU reference inside each driver, never
with solutions/.

A class (--submissions) shares one build of everything but the learner files (grade_class.py)
and may be split into CI shards (grade_shard.py); every case runs in a bubblewrap sandbox where
one is available (grade_sandbox.py); grade_export.py writes GitHub Classroom's workflow and
Gradescope's results.json.

docs/instructors.md is the user guide; docs/grading-schema.json describes the JSON report.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional

from . import build as bld
from . import grade_class as gc
from . import grade_export as gx
from . import grade_integrity as gi
from . import grade_report as gr
from . import grade_sandbox as gs
from . import grade_shard as gsh
from .cases import seeded_cases
from .diagnosis import split_output
from .common import PROG, UsageError, err, fmt_seconds, mark, ncpu, out, quote_cmd, stdout_is_tty, table
from .driver import PASS, USAGE
from .grade_run import (excerpt, explain, format_memory, memory_limit_supported,
                        parse_memory, run_capture, run_checked)
from .messages import lang, tr, tr_reason
from .options import lang_choice, parse, positive_int, seed_int, suggest_flag
from .profile_data import split_at
from .puzzles import Puzzle, find_puzzle, load_puzzle

SEED_ENV = "PUZZLES_GRADE_SEED"
ONLY_ENV = "PUZZLES_GRADE_ONLY"
LANG_ENV = "PUZZLES_GRADE_LANG"  # --lang's default (not the locale: CI output stays as configured)
DEFAULT_TIME_LIMIT = 30.0
DEFAULT_MEMORY = "4G"
DEFAULT_BUILD_TIMEOUT = 300.0
MAX_WORKERS = 4  # simulator worker threads per run: each reserves address space (grade_run.py)
# The learner file is also compiled for a GPU when nvcc is found, so that device code calling host
# functions (exit, fopen, std::cout) is a build error, as on a GPU. No GPU is needed to compile.
NVCC_FLAGS = ["-std=c++17", "-arch=sm_90", "-c"]
NVCC_CANDIDATES = ("/usr/local/cuda/bin/nvcc",)
WORKER_ADDRESS_SPACE = 200 << 20  # fiber stacks of a 1024-thread block, malloc arena, thread stack
# The serial-work review note: a passing variant's largest case with n in [MIN, MAX] runs once more
# with the profiler on; fewer than SERIAL_MAX_LANES active threads per warp-level memory
# instruction on average means one thread did the work.
SERIAL_MIN_N, SERIAL_MAX_N, SERIAL_MAX_LANES = 64, 65536, 2.0


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


GRADE_SPEC = {
    "--tree": str, "--pristine": str, "--manifest": str, "--points": str, "--seed": seed_int, "--only": str,
    "--json": str, "--junit": str, "--report-only": None, "--time-limit": positive_float,
    "--memory-limit": str, "--workers": positive_int, "--build-timeout": positive_float, "--work-dir": str,
    "--submissions": str, "--out": str, "--update-manifest": None, "--check-manifest": None, "--nvcc": str,
    "--jobs": positive_int, "--shard": str, "--merge": None, "--gradescope": str, "--classroom": str,
    "--check": None, "--verdict": str, "--lang": lang_choice,
}

GRADE_HELP = """\
usage: {prog} grade [pNN [--VARIANT ...]] [--tree DIR] [--pristine DIR] [--seed S]
                    [--json FILE] [--junit FILE] [--report-only] [limits and options below]
       {prog} grade --submissions DIR [--pristine DIR] [--out DIR] [--junit FILE] [--shard K/N] ...
       {prog} grade --merge DIR... [--out DIR] [--junit FILE]
       {prog} grade --classroom FILE [--check] | --verdict REPORT pNN:VARIANT
       {prog} grade --update-manifest | --check-manifest

Grade a learner's tree: every variant of every puzzle on hidden random inputs (sizes 1, TPB-1,
TPB, TPB+1, non-powers of two, three and more blocks, large), each case in its own process with
a time and a memory limit, on the CPU simulator, against the CPU reference in each driver. Prints
a table and the score; exits 1 when anything did not pass (0 with --report-only), 2 on a usage
or setup error. Instructors: docs/instructors.md.

what and where:
  pNN [--VARIANT ...]  grade only this puzzle (and these variants); also --only
  --only SPEC          comma-separated pNN or pNN:VARIANT items (default: ${only_env})
  --tree DIR           the learner's tree (default: this repository)
  --pristine DIR       a clean copy of the course repository: its harness, build files and
                       drivers are used, the submission contributes only puzzles/pNN/pNN.cu
  --manifest FILE      without --pristine: the checksum manifest the tree's protected files
                       must match (default: grading/protected.sha256); a mismatch is refused
  --points FILE        points per variant (default: grading/points.json)
  --seed S             the hidden inputs' seed (default: ${seed_env}, else a fresh one). On a
                       learner's own tree, `check pNN --VARIANT --seed S --backend cpu` runs
                       the same cases in the same order (without grade's limits); a failing
                       variant prints that command

reports:
  --json FILE          machine-readable report (schema: docs/grading-schema.json)
  --junit FILE         JUnit XML, one testcase per variant (for CI test views)
  --gradescope FILE    Gradescope's results.json (grading/gradescope/ has setup.sh and run_autograder)
  --report-only        exit 0 even when variants fail
  --lang en|ko         the language of what students read: verdicts, reasons and program output in
                       the table, JUnit and Gradescope, and --verdict's text (which otherwise
                       follows the report's); with --classroom, the workflow grades in it. Default
                       ${lang_env}, else en, whatever the locale; JSON keys and machine fields
                       stay English

limits:
  --time-limit S       seconds per run (default {time_limit:g})
  --memory-limit M     address-space limit per run: 4096 (MiB), 4G, 512M, or 0 for none
                       (default {memory}; Linux)
  --workers N          simulator worker threads per run (default: $CUDASIM_WORKERS, else the
                       number of cores, at most {max_workers})
  --build-timeout S    seconds per compile step (default {build_timeout:g})
  --nvcc PATH|off      also compile each learner file for the GPU with this nvcc, so device code
                       that calls host functions is a build error (default: $CUDACXX, nvcc on
                       PATH or /usr/local/cuda/bin/nvcc when found; off: only the simulator)
  --work-dir DIR       keep the staged tree and build here and reuse them (e.g. a CI cache);
                       default: a temporary directory, removed afterwards

batch:
  --submissions DIR    grade every folder in DIR (each a learner tree, or just its
                       puzzles/pNN/pNN.cu files) against --pristine (default: this repository)
  --out DIR            where scores.csv and one JSON report per student go (default: grade-results)
  --jobs N             submissions graded at a time (default: the number of cores); the harness,
                       simulator and checkers are built once, each submission compiles only its
                       learner files
  --shard K/N          grade only the K-th of N shares of the class (a CI matrix job); the
                       shards' --out folders are then merged with --merge
  --merge DIR...       merge the --out folders of every shard into --out: scores.csv, the
                       per-student JSON reports, and --junit FILE

GitHub Classroom:
  --classroom FILE     write the Classroom autograding workflow (one test per variant, the points
                       of grading/points.json); with --check: exit 1 when FILE is stale
  --verdict REPORT pNN:VARIANT
                       exit 0 when that variant passed in the JSON report, else 1 (and say why)

manifest:
  --update-manifest    rewrite grading/protected.sha256 from this repository
  --check-manifest     exit 1 when grading/protected.sha256 is out of date
"""


class GradeSetupError(Exception):
    """Grading cannot proceed at all (no cmake, configure failed); the message says why."""


class Settings:
    def __init__(self, seed: int, time_limit: float, memory: Optional[int], workers: int,
                 build_timeout: float, points: gr.Points, only: Optional[Dict[str, Optional[List[str]]]],
                 nvcc: Optional[str] = None):
        self.nvcc = nvcc  # None: the learner files are not compiled for the GPU
        self.seed = seed
        self.time_limit = time_limit
        self.memory = memory
        self.workers = workers
        self.build_timeout = build_timeout
        self.points = points
        self.only = only

    def run_env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env["CUDASIM_WORKERS"] = str(self.workers)
        env.setdefault("MALLOC_ARENA_MAX", "2")
        env.setdefault("CUDASIM_STALL_SECONDS", "%g" % min(5.0, max(0.5, self.time_limit / 2)))
        return env

    def limits(self) -> dict:
        return {"time_s": self.time_limit, "memory_mib": None if self.memory is None else self.memory >> 20,
                "workers": self.workers, "stall_s": float(self.run_env()["CUDASIM_STALL_SECONDS"]),
                "build_timeout_s": self.build_timeout}


def checker_target(puzzle: str) -> str:
    """The grader's half of a graded run: the driver without the learner's file (harness/channel.h)."""
    return "%s_checker" % puzzle


def shorten_name(name: str) -> str:
    """nvcc's name of a host function, without template arguments: std::operator<< for a stream."""
    name = " ".join(name.split())
    if re.match(r"^[\w:]+$", name):
        return name.lstrip(":")
    m = re.search(r"((?:\w+::)*operator) ?(<<|>>|==|!=|\(\)|\[\]|[-+*/%&|^<>=!]=?)", name)
    if m:
        return m.group(1) + m.group(2)
    return name if len(name) <= 60 else name[:57] + "..."


def find_nvcc(option: Optional[str]) -> Optional[str]:
    """The nvcc to compile learner files for the GPU with, or None (none found, or --nvcc off)."""
    if option is not None:
        if option.strip().lower() in ("off", "no", "none", "0"):
            return None
        found = shutil.which(option)
        if not found:
            raise UsageError("--nvcc %s: no such program (give the path of nvcc, or off)" % option)
        return found
    for candidate in [os.environ.get("CUDACXX", "").strip(), "nvcc"] + list(NVCC_CANDIDATES):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


# ------------------------------------------------------------------------------ filters

def parse_only(spec: str, puzzles: Dict[str, Puzzle]) -> Dict[str, Optional[List[str]]]:
    """'p14,p12:tree' -> {'p14': None (all variants), 'p12': ['tree']}."""
    chosen = {}  # type: Dict[str, Optional[List[str]]]
    for item in [s.strip() for s in spec.replace(" ", ",").split(",") if s.strip()]:
        name, _, variant = item.partition(":")
        puzzle = find_puzzle(puzzles, name)
        if not variant:
            chosen[puzzle.name] = None
            continue
        v = puzzle.variant_by_flag(variant if variant.startswith("--") else "--" + variant)
        if v is None:
            raise UsageError("%s has no variant %r\nVariants of %s:\n%s"
                             % (puzzle.name, variant, puzzle.name, puzzle.variant_help()))
        if puzzle.name in chosen and chosen[puzzle.name] is None:
            continue
        chosen.setdefault(puzzle.name, [])
        if v.name not in chosen[puzzle.name]:
            chosen[puzzle.name].append(v.name)
    return chosen


def only_from_args(p, puzzles: Dict[str, Puzzle]) -> Optional[Dict[str, Optional[List[str]]]]:
    spec = p.get("--only")
    if p.positionals:
        if spec:
            raise UsageError("give puzzles either as arguments or with --only, not both")
        chosen = {}  # type: Dict[str, Optional[List[str]]]
        for name in p.positionals:
            chosen[find_puzzle(puzzles, name).name] = None
        if p.unknown_flags:
            if len(chosen) != 1:
                raise UsageError("variant flags need exactly one puzzle, e.g. `%s grade p14 --simple`" % PROG)
            puzzle = puzzles[next(iter(chosen))]
            names = []
            for flag in p.unknown_flags:
                v = puzzle.variant_by_flag(flag)
                if v is None:
                    guess = suggest_flag(flag, [x.flag for x in puzzle.variants.values()] + list(GRADE_SPEC))
                    raise UsageError("%s has no variant or option %s%s" % (
                        puzzle.name, flag, " (did you mean %s?)" % guess if guess else ""))
                names.append(v.name)
            chosen[puzzle.name] = names
        return chosen
    if p.unknown_flags:
        guess = suggest_flag(p.unknown_flags[0], list(GRADE_SPEC))
        raise UsageError("unknown option %s%s" % (p.unknown_flags[0], " (did you mean %s?)" % guess if guess else ""))
    if spec is None:
        spec = os.environ.get(ONLY_ENV, "").strip() or None
    return parse_only(spec, puzzles) if spec else None


def only_text(only) -> Optional[str]:
    if not only:
        return None
    items = []
    for puzzle, variants in only.items():
        items += [puzzle] if variants is None else ["%s:%s" % (puzzle, v) for v in variants]
    return ",".join(items)


# ------------------------------------------------------------------------------ one tree

class Source:
    """Where the build files come from: a pristine tree, or the learner's tree checked against
    a manifest."""

    def __init__(self, root: Path, pristine: Optional[Path], manifest: Optional[Path]):
        self.root = root
        self.pristine = pristine
        self.manifest = manifest
        self.entries = None  # type: Optional[Dict[str, str]]
        if pristine is None:
            try:
                self.entries = gi.read_manifest(manifest)
            except gi.ManifestError as e:
                raise UsageError("%s\nCreate it with `%s grade --update-manifest` in the course repository, "
                                 "or grade with --pristine DIR." % (e, PROG))
            self.files = sorted(self.entries)
        else:
            for needed in ("CMakeLists.txt", "harness", "puzzles"):
                if not (pristine / needed).exists():
                    raise UsageError("--pristine %s does not look like the course repository (no %s)"
                                     % (pristine, needed))
            self.files = gi.protected_files(pristine)

    @property
    def mode(self) -> str:
        return "pristine" if self.pristine is not None else "manifest"

    def puzzle_names(self) -> List[str]:
        names = sorted({f.split("/")[1] for f in self.files
                        if f.startswith("puzzles/") and f.endswith("/puzzle.json") and f.count("/") == 2})
        return names

    def puzzles(self, tree: Path) -> Dict[str, Puzzle]:
        """The declarations to grade with: the pristine ones, or the tree's (verified) ones."""
        base = self.pristine if self.pristine is not None else tree
        found = {}
        for name in self.puzzle_names():
            try:
                found[name] = load_puzzle(base / "puzzles" / name)
            except (UsageError, OSError):
                found[name] = None  # a tampered or broken declaration: reported as tampered
        return found

    def describe(self) -> str:
        if self.pristine is not None:
            return "pristine copy %s (the submission contributes only puzzles/pNN/pNN.cu)" % self.pristine
        return "the submission's own, checked against %s (%d files)" % (self.manifest, len(self.files))


def _variant_rows(name: str, puzzle: Optional[Puzzle], points: gr.Points):
    if puzzle is not None:
        return [(v.name, v.flag) for v in puzzle.variants.values()]
    spec = points.puzzles.get(name)
    if isinstance(spec, dict) and spec:
        return [(v, "--" + v) for v in spec]
    return [("*", "(all variants)")]


class Grader:
    def __init__(self, root: Path, source: Source, settings: Settings, quiet: bool = False,
                 sandbox: Optional[gs.Sandbox] = None, sandbox_note: str = "off",
                 class_build: Optional[gc.ClassBuild] = None):
        self.root = root
        self.source = source
        self.settings = settings
        self.quiet = quiet
        self.sandbox = sandbox  # None: cases run with the grader's rights (sandbox_note says why)
        self.sandbox_note = sandbox_note
        self.class_build = class_build  # batch mode: the shared build, only learner files per submission

    def say(self, text: str = "") -> None:
        if not self.quiet:
            out(text)

    def progress(self, text: str) -> None:
        if not self.quiet and stdout_is_tty():
            sys.stdout.write("\r\033[K" + text)
            sys.stdout.flush()

    # -- the whole submission
    def grade(self, tree: Path, work: Path, student: str, replay: str, batch: bool = False,
              slug_name: Optional[str] = None) -> dict:
        started_at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        start = time.monotonic()
        s = self.settings
        if self.source.mode == "manifest":
            integrity = gi.verify_manifest(tree, self.source.entries)
        else:
            integrity = gi.compare_with_pristine(tree, self.source.pristine, self.source.files)
        tampered = integrity.tampered_scopes()
        if integrity.status == "ok":
            self.say("integrity: %s" % integrity.message())
        else:
            self.say("integrity: %s: %s" % (integrity.status.upper(), integrity.message()))
        declared = self.source.puzzles(tree)
        graded = {name: decl for name, decl in declared.items()
                  if s.only is None or name in s.only}

        # the learner files
        learner = {}  # type: Dict[str, bytes]
        learner_problem = {}  # type: Dict[str, str]
        for name in declared:
            path = tree / gi.learner_file(name)
            if not (tree / "puzzles").is_dir() and (tree / (name + ".cu")).exists():
                path = tree / (name + ".cu")  # an upload of the learner files alone (Gradescope)
            if path.is_symlink():
                learner_problem[name] = "%s is a symbolic link; submit a regular file" % gi.learner_file(name)
            elif not path.is_file():
                learner_problem[name] = "missing file %s" % gi.learner_file(name)
            else:
                learner[name] = path.read_bytes()

        staged_dir, build_dir = work / "tree", work / "build"
        if self.class_build is not None:
            staged_dir = self.class_build.tree
        buildable = [n for n in graded if gi.ALL not in tampered and n not in tampered
                     and n in learner and declared[n] is not None]
        if buildable and self.class_build is None:
            files = {}  # type: Dict[str, bytes]
            base = self.source.pristine if self.source.pristine is not None else tree
            for rel in self.source.files:
                if not gi.needed_for_build(rel):
                    continue
                owner = gi.scope(rel)
                if owner != gi.ALL and (owner not in declared or owner in tampered or owner not in learner):
                    continue
                files[rel] = (base / rel).read_bytes()
            for name, data in learner.items():
                if name not in tampered:
                    files[gi.learner_file(name)] = data
            gi.sync_tree(staged_dir, files)
            self.configure(staged_dir, build_dir)

        builds, rows, run_notes = [], [], []
        for name, decl in graded.items():
            rows_for = _variant_rows(name, decl, s.points)
            if s.only and s.only.get(name):
                rows_for = [r for r in rows_for if r[0] in s.only[name]]
            why_not = None
            verdict = None
            if gi.ALL in tampered or name in tampered:
                files = tampered.get(gi.ALL, []) + tampered.get(name, [])
                verdict, why_not = "tampered", "protected files differ from the manifest: " + ", ".join(files)
            elif decl is None:
                verdict, why_not = "tampered", "puzzles/%s/puzzle.json cannot be read" % name
            elif name in learner_problem:
                verdict, why_not = "build-error", learner_problem[name]
            if verdict:
                self.say("%s %s: %s (%s)" % (mark(False), name, tr(verdict), tr_reason(why_not)))
                builds.append({"puzzle": name, "ok": False, "seconds": 0.0, "diagnostic": why_not,
                               "device_compile": "not-run"})
                for vname, flag in rows_for:
                    rows.append(self.row(name, vname, flag, verdict, why_not, diagnostic=why_not))
                continue
            if self.class_build is not None:
                compiled = self.class_build.compile(name, slug_name or slug(student), learner[name])
                binary, checker, src_root = compiled.binary, self.class_build.checker(name), compiled.src_root
                ok, seconds, reason, diagnostic = compiled.ok, compiled.seconds, compiled.reason, compiled.diagnostic
            else:
                ok, seconds, reason, diagnostic = self.build(name, staged_dir, build_dir)
                binary = bld.binary_path(build_dir, decl.target(False, "cpu"))
                checker = bld.binary_path(build_dir, checker_target(name))
                src_root = staged_dir
            device = "not-run"
            if ok:
                device, device_seconds, device_reason, device_diagnostic = self.device_compile(
                    name, staged_dir, src_root / gi.learner_file(name), work)
                seconds += device_seconds
                if device == "failed":
                    ok, reason, diagnostic = False, device_reason, device_diagnostic
            builds.append({"puzzle": name, "ok": ok, "seconds": round(seconds, 3), "diagnostic": diagnostic,
                           "device_compile": device})
            if not ok:
                self.say(tr("%s %s: does not build (%s)") % (mark(False), name, tr_reason(reason)))
                for line in (diagnostic or "").splitlines():
                    self.say("    | " + line)
                for vname, flag in rows_for:
                    rows.append(self.row(name, vname, flag, "build-error", reason, diagnostic=diagnostic))
                continue
            for vname, _ in rows_for:
                rows.append(self.run_variant(decl.variants[vname], binary, checker, staged_dir, src_root, work,
                                             run_notes))

        review = []
        for name in graded:
            if name in learner:
                skeleton = self.skeleton(name, tree)
                text = learner[name].decode("utf-8", errors="replace")
                if skeleton is None or text != skeleton:
                    review += gi.review_learner_file(text, skeleton, gi.learner_file(name))
        review = run_notes + review
        points = sum(r["points"] for r in rows)
        max_points = sum(r["max_points"] for r in rows)
        counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in gr.VERDICTS}
        report = {
            "schema_version": gr.SCHEMA_VERSION,
            "tool": "%s grade" % PROG,
            "student": student,
            "batch": batch,
            "tree": str(tree),
            "mode": self.source.mode,
            "pristine": str(self.source.pristine) if self.source.pristine is not None else None,
            "manifest": str(self.source.manifest) if self.source.pristine is None else None,
            "points_file": s.points.source,
            "seed": s.seed,
            "replay": replay,
            "only": only_text(s.only),
            "started_at": started_at,
            "seconds": round(time.monotonic() - start, 3),
            "limits": s.limits(),
            "nvcc": s.nvcc,
            "sandbox": self.sandbox_note,
            "integrity": {"status": integrity.status, "checked_files": integrity.checked,
                          "modified": integrity.modified, "missing": integrity.missing,
                          "message": integrity.message()},
            "score": {"points": points, "max_points": max_points, "percent": gr.percent(points, max_points)},
            "counts": counts,
            "passed": counts["pass"] == len(rows) and integrity.status != "tampered",
            "builds": builds,
            "variants": rows,
            "review": review,
            "lang": lang(),
        }
        return report

    def skeleton(self, name: str, tree: Path) -> Optional[str]:
        """The pristine learner file (the skeleton) to compare with, when one is at hand."""
        if self.source.pristine is not None:
            base = self.source.pristine
        elif tree.resolve() != self.root.resolve():
            base = self.root
        else:
            return None
        path = base / gi.learner_file(name)
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    # -- building
    def configure(self, staged: Path, build: Path) -> None:
        if not bld.have_cmake():
            raise GradeSetupError(bld.CMAKE_MISSING)
        cmd = bld.configure_cmd(staged, build, ["-DPUZZLES_CUDA=OFF", "-DPUZZLES_TESTS=OFF"])
        self.progress("configuring ...")
        rc, text, timed_out = run_capture(cmd, self.settings.build_timeout)
        self.progress("")
        if rc != 0:
            tail = "\n".join("  " + l for l in text.rstrip().splitlines()[-30:])
            raise GradeSetupError("CMake could not configure the grading build (%s)%s:\n%s"
                                  % (quote_cmd(cmd), " (timed out)" if timed_out else "", tail))

    def build(self, name: str, staged: Path, build: Path):
        """(ok, seconds, reason, diagnostic) of building one puzzle's learner target and its checker."""
        target = "%s_cpu" % name
        binary = bld.binary_path(build, target)
        checker = bld.binary_path(build, checker_target(name))
        for old in (binary, checker):
            if old.exists():
                old.unlink()  # never run a binary left from an earlier build
        cmd = ["cmake", "--build", str(build), "--target", target, checker_target(name), "-j", str(ncpu())]
        self.progress("building %s ..." % target)
        start = time.monotonic()
        rc, text, timed_out = run_capture(cmd, self.settings.build_timeout)
        seconds = time.monotonic() - start
        self.progress("")
        source = gi.learner_file(name)
        if rc == 0 and binary.exists() and checker.exists():
            self.say("%s: built (%s)" % (name, fmt_seconds(seconds)))
            return True, seconds, None, None
        if timed_out:
            return False, seconds, "compile timed out after %g s" % self.settings.build_timeout, None
        for t in (target, checker_target(name)):
            if bld.unknown_target(text, t):
                return False, seconds, "the build has no target %s" % t, None
        summary = bld.build_failure_summary(text, staged, source, target)
        summary = summary.replace(str(staged.resolve()) + "/", "").replace(str(staged) + "/", "").strip("\n")
        where = bld.first_error_location(text, staged, source)
        return False, seconds, "compile error at %s" % where if where else "compile error", summary

    # -- running
    def row(self, puzzle: str, variant: str, flag: str, verdict: str, reason: str, cases_run: int = 0,
            cases_total: int = 0, seconds: float = 0.0, failing_case=None, diagnostic=None) -> dict:
        max_points = self.settings.points.of(puzzle, variant)
        return {"puzzle": puzzle, "variant": variant, "flag": flag, "verdict": verdict, "reason": reason,
                "require_device": self.settings.points.require_device(puzzle, variant),
                "points": max_points if verdict == PASS else 0, "max_points": max_points,
                "cases_run": cases_run, "cases_total": cases_total, "seconds": round(seconds, 3),
                "failing_case": failing_case, "diagnostic": diagnostic or None}

    def device_compile(self, name: str, staged: Path, src: Path, work: Path):
        """(status, seconds, reason, diagnostic) of compiling the learner file `src` for the GPU with
        nvcc, against the staged tree's headers: status ok, failed or skipped (no nvcc). Successes
        are remembered by content in the work directory, so an unchanged file is not compiled again."""
        s = self.settings
        if not s.nvcc:
            return "skipped", 0.0, None, None
        source = gi.learner_file(name)
        src_root = Path(str(src)[:-len(source)])
        cmd = [s.nvcc] + NVCC_FLAGS + ["-I", str(staged / "harness" / "include"), "-I", str(staged / "puzzles" / name),
                                       str(src), "-o", str(work / "device" / (name + ".o"))]
        h = hashlib.sha256(("\0".join(cmd[:1] + NVCC_FLAGS) + "\0").encode() + src.read_bytes())
        for header in sorted((staged / "harness" / "include").rglob("*")):  # what the file may include
            if header.is_file():
                h.update(header.as_posix().encode() + b"\0" + header.read_bytes())
        digest = h.hexdigest()[:24]
        stamp = work / "device" / ("%s.%s.ok" % (name, digest))
        if stamp.is_file():
            return "ok", 0.0, None, None
        (work / "device").mkdir(parents=True, exist_ok=True)
        self.progress("compiling %s for the GPU ..." % source)
        start = time.monotonic()
        rc, text, timed_out = run_capture(cmd, s.build_timeout, cwd=src_root)
        seconds = time.monotonic() - start
        self.progress("")
        if rc == 0:
            stamp.write_text(" ".join(cmd) + "\n")
            self.say("%s: compiled for the GPU (%s)" % (name, fmt_seconds(seconds)))
            return "ok", seconds, None, None
        if timed_out:
            return "failed", seconds, "GPU compile timed out after %g s" % s.build_timeout, None
        summary = bld.build_failure_summary(text, src_root, source, "%s (nvcc)" % name)
        for root in (src_root, staged):
            summary = summary.replace(str(root.resolve()) + "/", "").replace(str(root) + "/", "")
        summary = summary.strip("\n")
        where = bld.first_error_location(text, src_root, source)
        host_call = re.search(r'calling a __host__ function\("([^"]+)"\)', text)
        if host_call and where:
            reason = "compile error for the GPU at %s: device code calls the host function %s" % (
                where, shorten_name(host_call.group(1)))
        elif host_call:
            reason = "compile error for the GPU: device code calls the host function %s" % shorten_name(host_call.group(1))
        else:
            reason = "compile error for the GPU at %s" % where if where else "compile error for the GPU"
        return "failed", seconds, reason, summary

    def run_variant(self, variant, binary: Path, checker: Path, staged: Path, src_root: Path, work: Path,
                    notes: List[dict]) -> dict:
        s = self.settings
        cases = seeded_cases(variant, "cpu", s.seed)
        env = s.run_env()
        sandbox = None
        if self.sandbox is not None:
            read_only = sorted({staged, src_root, checker.parent, binary.parent})
            sandbox = self.sandbox.prefix(read_only, [work / "out"], staged)
        start = time.monotonic()
        failure = None
        ran = 0
        for i, (n, tpb, seed) in enumerate(cases):
            self.progress("%s  case %d/%d  n=%d tpb=%d" % (variant.label, i + 1, len(cases), n, tpb))
            args = ["--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
            outcome = run_checked(checker, binary, args, s.time_limit, s.memory, env, cwd=staged,
                                  require_device=s.points.require_device(variant.puzzle, variant.name),
                                  sandbox=sandbox)
            ran += 1
            if not outcome.passed:
                failure = (i, n, tpb, seed, outcome)
                break
        seconds = time.monotonic() - start
        self.progress("")
        pts = s.points.of(variant.puzzle, variant.name)
        if failure is None:
            note = self.serial_note(variant, cases, binary, checker, staged, work, env, sandbox)
            if note is not None:
                notes.append(note)
            self.say(tr("%s %s: pass (%d cases, %s)  %s/%s points") % (
                mark(True), variant.label, len(cases), fmt_seconds(seconds), gr.fmt_points(pts), gr.fmt_points(pts)))
            return self.row(variant.puzzle, variant.name, variant.flag, PASS, "passed", ran, len(cases), seconds)
        i, n, tpb, seed, outcome = failure
        verdict = "error" if outcome.kind == USAGE else outcome.kind
        reason = explain(outcome, s.time_limit, s.memory)
        if outcome.kind == USAGE:
            reason = "the driver refused the case (a problem with the puzzle declaration, not the submission)"
        replay = "%s run %s %s --n %d --tpb %d --seed %d --backend cpu" % (PROG, variant.puzzle, variant.flag, n, tpb, seed)
        other, report = split_output(outcome.lines, outcome.diagnosis)
        diagnostic = excerpt(other, {str(src_root.resolve()) + "/": "", str(src_root) + "/": "",
                                     str(staged.resolve()) + "/": "", str(staged) + "/": ""}, report=report)
        if outcome.timed_out:
            diagnostic = (tr("stopped at the time limit of %g s; its last output:") % s.time_limit + "\n" + diagnostic
                          if diagnostic else tr("stopped at the time limit of %g s; it printed nothing") % s.time_limit)
        elif not diagnostic:
            diagnostic = tr("(the program printed nothing)")
        said = (tr(verdict) if tr(verdict) == tr_reason(reason)  # Korean: 오답 for fail and for wrong answer
                else "%s (%s)" % (tr(verdict), tr_reason(reason)))
        self.say(tr("%s %s: %s at case %d of %d: n=%d tpb=%d seed=%d  0/%s points") % (
            mark(False), variant.label, said, i + 1, len(cases), n, tpb, seed, gr.fmt_points(pts)))
        self.say("    " + tr("replay: %s") % replay)
        # `check --seed S` derives each case from the grade seed as grade does (cases.case_seed).
        self.say("    check:  %s check %s %s --seed %d --backend cpu" % (PROG, variant.puzzle, variant.flag, s.seed))
        for line in diagnostic.splitlines():
            self.say("    | " + line)
        return self.row(variant.puzzle, variant.name, variant.flag, verdict, reason, ran, len(cases), seconds,
                        {"index": i + 1, "n": n, "tpb": tpb, "seed": seed, "replay": replay,
                         "kind": outcome.diagnosis["kind"] if outcome.diagnosis else None}, diagnostic)


    def serial_note(self, variant, cases, binary: Path, checker: Path, staged: Path, work: Path, env,
                    sandbox) -> Optional[dict]:
        """A review note when a passing variant's kernels did their work one thread at a time: one
        more run of its largest case up to SERIAL_MAX_N, with the simulator's profiler on
        (CUDASIM_PROFILE), whose per-launch counters say how many threads of each warp took part
        in every memory instruction (`lanes` of `inst`). A parallel kernel has up to 32; a serial
        loop in one thread (or a <<<1, 1>>> launch) has 1."""
        s = self.settings
        sizes = [c for c in cases if SERIAL_MIN_N <= c[0] <= SERIAL_MAX_N]
        if not sizes:
            return None
        n, tpb, seed = max(sizes, key=lambda c: c[0])
        out_dir = work / "out"
        out_dir.mkdir(parents=True, exist_ok=True)
        profile = out_dir / ("profile-%s-%s.jsonl" % (variant.puzzle, variant.name))
        if profile.exists():
            profile.unlink()
        args = ["--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
        outcome = run_checked(checker, binary, args, s.time_limit, s.memory, dict(env, CUDASIM_PROFILE=str(profile)),
                              cwd=staged, require_device=s.points.require_device(variant.puzzle, variant.name),
                              sandbox=sandbox)
        if not outcome.passed or not profile.is_file():
            return None
        inst = lanes = 0
        first_at = None
        try:
            for line in profile.read_text(encoding="utf-8", errors="replace").splitlines():
                record = json.loads(line)
                first_at = first_at or record.get("at")
                for access in record.get("accesses", []):
                    inst += int(access.get("inst", 0))
                    lanes += int(access.get("lanes", 0))
        except (ValueError, TypeError, AttributeError):
            return None
        if inst == 0 or lanes / inst >= SERIAL_MAX_LANES:
            return None
        _, line_no = split_at(first_at or "?")
        return {"file": gi.learner_file(variant.puzzle), "line": line_no, "kind": "serial",
                "text": "%s: its kernels did the work one thread at a time (%.1f active threads per warp-level "
                        "memory instruction on average, where a parallel kernel has up to 32; n=%d tpb=%d): it "
                        "passes, but is it the variant's parallel algorithm?" % (variant.label, lanes / inst, n, tpb)}


# ------------------------------------------------------------------------------ work dirs

class WorkDir:
    """A directory for the staged tree and build: the given one (kept, locked while in use) or
    a temporary one (removed)."""

    def __init__(self, path: Optional[str]):
        self.keep = path is not None
        self.path = Path(path).resolve() if path else Path(tempfile.mkdtemp(prefix="puzzle-grade-"))
        self._lock = None

    def __enter__(self) -> Path:
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
            self._lock = open(str(self.path / ".lock"), "w")
            try:
                fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise UsageError("the work directory %s is in use by another grade run" % self.path)
        except ImportError:  # pragma: no cover
            pass
        return self.path

    def __exit__(self, *exc):
        if self._lock is not None:
            self._lock.close()
        if not self.keep:
            shutil.rmtree(str(self.path), ignore_errors=True)
        return False


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "student"


def learner_root(folder: Path) -> Path:
    """A submission folder, or the single folder inside it that holds puzzles/ (an unpacked
    archive often adds one level)."""
    if (folder / "puzzles").is_dir():
        return folder
    inner = [d for d in folder.iterdir() if d.is_dir() and (d / "puzzles").is_dir()]
    return inner[0] if len(inner) == 1 else folder


# ------------------------------------------------------------------------------ output

def print_table(report: dict, total_seconds: float) -> None:
    rows = []
    for r in report["variants"]:
        detail = ""
        if r["verdict"] != PASS:
            detail = tr_reason(r["reason"])
            if r.get("failing_case"):
                fc = r["failing_case"]
                detail += " (n=%d tpb=%d seed=%d)" % (fc["n"], fc["tpb"], fc["seed"])
        rows.append(("%s %s" % (r["puzzle"], r["flag"]), tr(r["verdict"]),
                     "%s/%s" % (gr.fmt_points(r["points"]), gr.fmt_points(r["max_points"])), cases_text(r),
                     seconds_text(r), detail))
    out("")
    out(table(rows, header=(tr("variant"), tr("verdict"), tr("points"), tr("cases"), tr("seconds"), tr("reason"))))
    if report["review"]:
        out("")
        out(tr("review (not graded; heuristics for a human to look at):"))
        for note in report["review"]:
            out("  %s:%d: %s" % (note["file"], note["line"], note["text"]))
    score = report["score"]
    passed = report["counts"]["pass"]
    out("")
    out(tr("score: %s/%s points (%s%%), %d of %d variants passed, %s (seed %d)") % (
        gr.fmt_points(score["points"]), gr.fmt_points(score["max_points"]), "%.1f" % score["percent"], passed,
        len(report["variants"]), fmt_seconds(total_seconds), report["seed"]))


def cases_text(row: dict) -> str:
    """The table's cases column: "all 30 passed", "failed at 2 of 32", or "-" when nothing ran."""
    if not row["cases_total"]:
        return "-"
    if row["verdict"] == PASS:
        return tr("all %d passed") % row["cases_total"]
    return tr("failed at %d of %d") % (row["cases_run"], row["cases_total"])


def seconds_text(row: dict) -> str:
    """Seconds spent running the variant's cases ("-" when none ran: a build error, tampering);
    two decimals below 10 s, so a case that failed at once does not read as 0.0."""
    if not row["cases_run"]:
        return "-"
    return "%.2f" % row["seconds"] if row["seconds"] < 10 else "%.1f" % row["seconds"]


def gpu_compile_line(settings: Settings) -> str:
    if settings.nvcc:
        return "GPU compile: %s %s (device code that calls host functions is a build error)" % (
            settings.nvcc, " ".join(NVCC_FLAGS))
    return ("GPU compile: off (no nvcc found; --nvcc PATH): kernels are compiled for the simulator only, "
            "where they can call host functions")


def replay_command(seed: int, tree: Optional[Path], root: Path, pristine: Optional[Path], only) -> str:
    parts = ["grade", "--seed", str(seed)]
    if tree is not None and tree.resolve() != root.resolve():
        parts += ["--tree", str(tree)]
    if pristine is not None:
        parts += ["--pristine", str(pristine)]
    if only:
        parts += ["--only", only_text(only)]
    return PROG + " " + quote_cmd(parts)


# ------------------------------------------------------------------------------ the command

def cmd_grade(root: Path, args: List[str]) -> int:
    p = parse(args, GRADE_SPEC, allow_unknown_flags=True)
    language = p.get("--lang")
    if language is None and os.environ.get(LANG_ENV, "").strip():
        language = lang_choice(os.environ[LANG_ENV].strip())
    gr.speak(language)  # what students read, in --lang (default English, whatever the locale)
    if p.help:
        out(tr(GRADE_HELP).format(prog=PROG, only_env=ONLY_ENV, seed_env=SEED_ENV, lang_env=LANG_ENV,
                                  time_limit=DEFAULT_TIME_LIMIT, memory=DEFAULT_MEMORY, max_workers=MAX_WORKERS,
                                  build_timeout=DEFAULT_BUILD_TIMEOUT))
        return 0
    if p.get("--update-manifest"):
        path, count = gi.write_manifest(root)
        out("wrote %s: %d protected files" % (path, count))
        return 0
    if p.get("--verdict"):
        if len(p.positionals) != 1:
            raise UsageError("--verdict REPORT needs one pNN:VARIANT, e.g. `%s grade --verdict grade-report.json "
                             "p14:simple`" % PROG)
        return gx.verdict_of(Path(p.get("--verdict")), p.positionals[0], language)
    if p.get("--merge"):
        if not p.positionals:
            raise UsageError("--merge needs the --out folders of the shards, e.g. `%s grade --merge shard-*/ --out "
                             "results`" % PROG)
        out_dir = Path(p.get("--out") or "grade-results").resolve()
        reports = gsh.merge([Path(d).resolve() for d in p.positionals], out_dir,
                            Path(p.get("--junit")) if p.get("--junit") else None)
        out("merged %d shard folders: %d students; scores: %s; reports: %s/<student>.json%s" % (
            len(p.positionals), len(reports), out_dir / "scores.csv", out_dir,
            "; JUnit report: %s" % p.get("--junit") if p.get("--junit") else ""))
        return 0 if all(r["passed"] for r in reports) or p.get("--report-only") else 1
    if p.get("--check-manifest"):
        diff = gi.manifest_diff(root)
        if not diff:
            out("%s is up to date" % gi.MANIFEST)
            return 0
        out("%s is out of date (`%s grade --update-manifest` rewrites it):" % (gi.MANIFEST, PROG))
        for line in diff[:60]:
            out("  " + line)
        return 1

    seed = p.get("--seed")
    if seed is None and os.environ.get(SEED_ENV, "").strip():
        try:
            seed = seed_int(os.environ[SEED_ENV].strip())
        except ValueError:
            raise UsageError("%s must be a non-negative integer, got %r" % (SEED_ENV, os.environ[SEED_ENV]))
    if seed is None:
        seed = random.SystemRandom().randint(1, 2 ** 31 - 1)
    try:
        memory = parse_memory(p.get("--memory-limit", DEFAULT_MEMORY))
    except ValueError:
        raise UsageError("--memory-limit: expected e.g. 4096 (MiB), 4G, 512M or 0, got %r" % p.get("--memory-limit"))
    workers = p.get("--workers")
    if workers is None and os.environ.get("CUDASIM_WORKERS", "").strip():
        try:
            workers = positive_int(os.environ["CUDASIM_WORKERS"].strip())
        except ValueError:
            raise UsageError("CUDASIM_WORKERS must be a positive integer, got %r" % os.environ["CUDASIM_WORKERS"])
    if workers is None:
        workers = max(1, min(ncpu(), MAX_WORKERS))
    if memory is not None and workers * WORKER_ADDRESS_SPACE + (512 << 20) > memory:
        err("warning: %d simulator workers reserve about %d MiB of address space for 1024-thread blocks; "
            "with --memory-limit %s, correct programs may run out of memory. Lower --workers or raise the limit."
            % (workers, workers * WORKER_ADDRESS_SPACE >> 20, format_memory(memory)))

    batch = p.get("--submissions")
    pristine = p.get("--pristine")
    if batch and not pristine:
        pristine = str(root)
    pristine_path = Path(pristine).resolve() if pristine else None
    manifest = Path(p.get("--manifest")).resolve() if p.get("--manifest") else root / gi.MANIFEST
    if pristine_path is not None and p.get("--manifest"):
        raise UsageError("--manifest and --pristine exclude each other: a pristine tree needs no manifest")
    source = Source(root, pristine_path, manifest)

    decl_tree = Path(p.get("--tree") or root).resolve()
    decls = {n: d for n, d in source.puzzles(pristine_path or decl_tree).items() if d is not None}
    only = only_from_args(p, decls)
    if p.get("--points"):
        points = gr.Points.load(Path(p.get("--points")))
    else:
        candidates = ([pristine_path / gi.POINTS] if pristine_path else []) + [root / gi.POINTS]
        found = next((c for c in candidates if c.is_file()), None)
        points = gr.Points.load(found) if found else gr.Points()
        if pristine_path is None and found is not None:
            points = manifest_points(found, source, points)
    for name in points.unknown_names(decls):
        err("warning: %s names %s, which this course does not have" % (points.source, name))
    if p.get("--classroom"):
        return write_classroom(Path(p.get("--classroom")), decls, points, only, p.get("--check"),
                               language or "en")
    settings = Settings(seed, p.get("--time-limit", DEFAULT_TIME_LIMIT), memory, workers,
                        p.get("--build-timeout", DEFAULT_BUILD_TIMEOUT), points, only, find_nvcc(p.get("--nvcc")))

    if batch:
        if p.get("--gradescope"):
            raise UsageError("--gradescope writes one submission's results.json; Gradescope runs run_autograder "
                             "once per submission (grading/gradescope/)")
        if p.get("--json") or p.get("--tree"):
            raise UsageError("with --submissions, the JSON reports go to --out DIR (one per student); "
                             "--json and --tree are for one submission")
        return grade_batch(root, Path(batch), source, settings, p)

    tree = Path(p.get("--tree") or root).resolve()
    if not tree.is_dir():
        raise UsageError("--tree %s is not a directory" % tree)
    if pristine_path is not None:
        tree = learner_root(tree)  # an unpacked archive often adds one folder level
    extra = sorted(j.parent.name for j in (tree / "puzzles").glob("*/puzzle.json")
                   if j.parent.name not in source.puzzle_names())
    for name in extra:
        err("warning: puzzles/%s is not in %s, so it is not graded%s" % (
            name, "the pristine tree" if pristine_path else gi.MANIFEST,
            "" if pristine_path else " (`%s grade --update-manifest` adds it)" % PROG))

    replay = replay_command(seed, tree, root, pristine_path, only)
    out("grade: %s" % tree)
    out("build files: %s" % source.describe())
    out("seed: %d (replay: %s)" % (seed, replay))
    out("limits: %g s per run, %s, %d simulator worker%s, watchdog %g s" % (
        settings.time_limit, format_memory(memory) if memory_limit_supported() or memory is None
        else format_memory(memory) + " (not enforced on this system)",
        workers, "" if workers == 1 else "s", settings.limits()["stall_s"]))
    out(gpu_compile_line(settings))
    sandbox, sandbox_note = gs.sandbox_probe()
    out("sandbox: %s" % sandbox_note)
    if only:
        out("only: %s" % only_text(only))
    start = time.monotonic()
    try:
        with WorkDir(p.get("--work-dir")) as work:
            report = Grader(root, source, settings, sandbox=sandbox, sandbox_note=sandbox_note).grade(
                tree, work, tree.name, replay)
    except GradeSetupError as e:
        err("error: %s" % e)
        return 2
    print_table(report, time.monotonic() - start)
    if p.get("--json"):
        gr.write_json(report, Path(p.get("--json")))
        out("JSON report: %s" % p.get("--json"))
    if p.get("--junit"):
        gr.write_junit([report], Path(p.get("--junit")))
        out("JUnit report: %s" % p.get("--junit"))
    if p.get("--gradescope"):
        gx.write_gradescope(report, Path(p.get("--gradescope")))
        out("Gradescope results: %s" % p.get("--gradescope"))
    if report["passed"] or p.get("--report-only"):
        return 0
    return 1


def shard_of(spec: Optional[str]):
    """'2/5' -> (2, 5): the second of five shards; None -> None."""
    if not spec:
        return None
    m = re.match(r"^\s*(\d+)\s*/\s*(\d+)\s*$", spec)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise UsageError("--shard K/N: K and N whole numbers with 1 <= K <= N, e.g. --shard 2/5; got %r" % spec)
    return int(m.group(1)), int(m.group(2))


def manifest_points(path: Path, source: Source, points: gr.Points) -> gr.Points:
    """Without --pristine, the points file is the tree's own: when it differs from the manifest
    (tampered), the maxima come from its committed version that matches the manifest, not from
    the edited file; without such a version, grade says that the maxima are the edited file's."""
    expected = (source.entries or {}).get(gi.POINTS)
    if expected is None or gi.file_hash(path) == expected:
        return points
    found = gi.committed_version(path.parent.parent, gi.POINTS, expected)
    if found is None:
        err("warning: %s differs from %s and no commit has the version the manifest lists: the maxima in the "
            "report are the edited file's" % (gi.POINTS, gi.MANIFEST))
        return points
    commit, data = found
    try:
        return gr.Points(json.loads(data.decode("utf-8")), "%s as committed in %s (the file in the tree was edited)"
                         % (gi.POINTS, commit[:12]))
    except (ValueError, UsageError) as e:
        err("warning: the committed %s (%s) cannot be read (%s): the maxima are the edited file's"
            % (gi.POINTS, commit[:12], e))
        return points


def write_classroom(path: Path, decls: Dict[str, Puzzle], points: gr.Points, only, check: bool,
                    lang: str = "en") -> int:
    text = gx.classroom_workflow(decls, points, only, lang)
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            out("%s matches grading/points.json and the puzzles" % path)
            return 0
        err("%s is %s: run `%s grade --classroom %s` and commit it, so that Classroom's points match "
            "grading/points.json" % (path, "stale" if current is not None else "missing", PROG, path))
        return 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    count = text.count("uses: %s" % gx.COMMAND_GRADER)
    out("wrote %s: %d autograding tests, %s points" % (path, count, gr.fmt_points(sum(
        points.of(n, v) for n, d in decls.items() for v in d.variants
        if only is None or (n in only and (only[n] is None or v in only[n]))))))
    return 0


def grade_batch(root: Path, folder: Path, source: Source, settings: Settings, p) -> int:
    if not folder.is_dir():
        raise UsageError("--submissions %s is not a directory" % folder)
    students = sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
    if not students:
        raise UsageError("--submissions %s has no student folders" % folder)
    shard = shard_of(p.get("--shard"))
    names, used = {}, set()  # every student's report name, from the whole class (stable across shards)
    for folder_i in students:
        name = slug(folder_i.name)
        while name in used:
            name += "_"
        used.add(name)
        names[folder_i] = name
    everyone = len(students)
    if shard is not None:
        students = gsh.pick(students, *shard)
    jobs = p.get("--jobs") or max(1, ncpu())
    out_dir = Path(p.get("--out") or "grade-results").resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    out("grade: %d submissions in %s%s" % (len(students), folder, " (shard %d of %d; %d in all)" % (
        shard[0], shard[1], everyone) if shard else ""))
    out("build files: %s" % source.describe())
    out("seed: %d (the same hidden inputs for every student)" % settings.seed)
    out("limits: %g s per run, %s, %d simulator workers, %d submission%s at a time" % (
        settings.time_limit, format_memory(settings.memory), settings.workers, jobs, "" if jobs == 1 else "s"))
    out(gpu_compile_line(settings))
    sandbox, sandbox_note = gs.sandbox_probe()
    out("sandbox: %s" % sandbox_note)
    if settings.only:
        out("only: %s" % only_text(settings.only))
    start = time.monotonic()
    reports = {}  # type: Dict[Path, dict]
    with WorkDir(p.get("--work-dir")) as work:
        puzzles = [n for n in source.puzzle_names() if settings.only is None or n in settings.only]
        class_build = gc.ClassBuild(work, source.pristine, source.files, settings.build_timeout)
        why_not = None if gc.shell_safe(work) else "the work directory's path needs shell quoting"
        if why_not is None:
            try:
                why_not = class_build.prepare(puzzles, progress=lambda text: out(text))
            except gc.ClassBuildError as e:
                err("error: %s" % e)
                return 2
        if why_not:
            class_build = None
            out("class build: off (%s)" % why_not)
        else:
            out("class build: the harness, simulator and checkers are built once (%s); each submission "
                "compiles only its learner files" % fmt_seconds(time.monotonic() - start))
        grader = Grader(root, source, settings, quiet=True, sandbox=sandbox, sandbox_note=sandbox_note,
                        class_build=class_build)

        def one(folder_i: Path) -> dict:
            name = names[folder_i]
            tree = learner_root(folder_i).resolve()
            replay = replay_command(settings.seed, tree, Path("/"), source.pristine, settings.only)
            report = grader.grade(tree, work / "students" / name, folder_i.name, replay, batch=True,
                                  slug_name=name)
            gr.write_json(report, out_dir / (name + ".json"))
            return report

        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs if class_build is not None else 1) as pool:
            futures = {pool.submit(one, f): f for f in students}
            try:
                for future in concurrent.futures.as_completed(futures):
                    folder_i = futures[future]
                    report = future.result()
                    reports[folder_i] = report
                    score = report["score"]
                    bad = [v for v in report["variants"] if v["verdict"] != PASS]
                    out("%s %s: %s/%s points (%.1f%%)%s" % (
                        mark(not bad and report["integrity"]["status"] == "ok"), folder_i.name,
                        gr.fmt_points(score["points"]), gr.fmt_points(score["max_points"]), score["percent"],
                        "; " + "; ".join(gr.problems(report)[:4]) if gr.problems(report) else ""))
            except GradeSetupError as e:
                for f in futures:
                    f.cancel()
                err("\nerror: %s" % e)
                return 2
    ordered = [reports[f] for f in students]
    csv_path = out_dir / ("scores.csv" if shard is None else "scores-%d-of-%d.csv" % shard)
    gr.write_csv(ordered, csv_path)
    if shard is not None:
        gsh.write_shard_record(out_dir, shard, settings.seed, [names[f] for f in students], everyone)
    if p.get("--junit"):
        gr.write_junit(ordered, Path(p.get("--junit")))
        out("JUnit report: %s" % p.get("--junit"))
    out("")
    out("scores: %s; reports: %s/<student>.json; %s" % (csv_path, out_dir, fmt_seconds(time.monotonic() - start)))
    if shard is not None:
        out("merge the shards' --out folders with `%s grade --merge DIR... --out DIR`" % PROG)
    if all(r["passed"] for r in ordered) or p.get("--report-only"):
        return 0
    return 1
