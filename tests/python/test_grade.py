"""Tests for `grade` (scripts/puzzlelib/grade*.py) and the instructor kit.

The fixture submissions (tests/fixtures/grade/, see its README) are overlays applied to a
temporary copy of this repository without solutions/, as a student's repository is. Every test
that builds shares one work directory (--work-dir), so the simulator and the harness compile
once and each fixture recompiles only its p14.cu. Most tests grade p14 or some of its variants.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import REPO, run_cli

from puzzlelib import grade as gmod
from puzzlelib.cases import case_seed
from puzzlelib import grade_integrity as gi
from puzzlelib import grade_report as gr
from puzzlelib import grade_run
from puzzlelib.common import UsageError
from puzzlelib.driver import Outcome

FIXTURES = REPO / "tests" / "fixtures" / "grade"
SCHEMA = json.loads((REPO / "docs" / "grading-schema.json").read_text(encoding="utf-8"))
WORKFLOW = REPO / ".github" / "workflows" / "grade.yml"
# p14's variants, as puzzles/p14/puzzle.json declares them (one place for that fact).
P14_VARIANTS = list(json.loads((REPO / "puzzles" / "p14" / "puzzle.json").read_text(encoding="utf-8"))["variants"])


def needs_toolchain():
    if not shutil.which("cmake") or not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("needs cmake and a C++ compiler")
    if not (REPO / "puzzles" / "p14" / "puzzle.json").is_file():
        pytest.skip("needs puzzles/p14")


def copy_repo(dest: Path) -> Path:
    """The repository as a student has it: no .git, build trees or solutions/."""
    def ignore(directory, names):
        skipped = {n for n in names if n in ("__pycache__", ".pytest_cache", ".pixi")}
        if Path(directory).resolve() == REPO:
            skipped |= {n for n in names if n in (".git", "solutions", "grade-results") or n.startswith("build")}
        return skipped
    shutil.copytree(str(REPO), str(dest), ignore=ignore)
    return dest


def make_submission(name: str, dest: Path) -> Path:
    """tests/fixtures/grade/<name> applied to a copy of the repository."""
    tree = copy_repo(dest)
    fixture = FIXTURES / name
    meta = {}
    if (fixture / "fixture.json").is_file():
        meta = json.loads((fixture / "fixture.json").read_text(encoding="utf-8"))
    if meta.get("solutions"):
        for solution in (REPO / "solutions").glob("*/*.cu"):
            shutil.copyfile(str(solution), str(tree / "puzzles" / solution.parent.name / solution.name))
    for path in fixture.rglob("*"):
        if path.is_file() and path.name != "fixture.json":
            target = tree / path.relative_to(fixture)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(str(path), str(target))
    for rel, text in meta.get("append", {}).items():
        with open(str(tree / rel), "a", encoding="utf-8") as f:
            f.write(text)
    for rel, edits in meta.get("replace", {}).items():
        text = (tree / rel).read_text(encoding="utf-8")
        for old, new in edits:
            assert text.count(old) == 1, "fixture %s: %r is not exactly once in %s" % (name, old, rel)
            text = text.replace(old, new)
        (tree / rel).write_text(text, encoding="utf-8")
    return tree


@pytest.fixture(scope="session")
def grade_work(tmp_path_factory):
    return tmp_path_factory.mktemp("grade-work")


@pytest.fixture
def fresh_manifest(tmp_path):
    """A manifest of the repository as it is now (the committed one is checked separately, by
    test_committed_manifest_is_current, so these tests do not depend on it being current)."""
    path = tmp_path / "protected.sha256"
    gi.write_manifest(REPO, path)
    return path


def grade(tree, *args, work=None, env=None, timeout=600):
    """Run `grade` on a tree; returns (CliResult, report dict or None, junit root or None)."""
    out_dir = Path(str(tree) + "-reports")
    out_dir.mkdir(exist_ok=True)
    json_path, junit_path = out_dir / "report.json", out_dir / "report.xml"
    for p in (json_path, junit_path):
        if p.exists():
            p.unlink()
    argv = ["grade", "--tree", tree, "--json", json_path, "--junit", junit_path] + list(args)
    if work is not None:
        argv += ["--work-dir", work]
    r = run_cli(*argv, env=env, timeout=timeout)
    report = json.loads(json_path.read_text()) if json_path.exists() else None
    junit = ET.parse(str(junit_path)).getroot() if junit_path.exists() else None
    if report is not None:
        gr.validate(report, SCHEMA)
    return r, report, junit


def verdicts(report):
    return {v["variant"]: v["verdict"] for v in report["variants"]}


def reasons(report):
    return {v["variant"]: v["reason"] for v in report["variants"]}


def p14_points():
    points = gr.Points.load(REPO / "grading" / "points.json")
    return {v: points.of("p14", v) for v in P14_VARIANTS}


def junit_cases(root):
    return {case.get("name"): case for case in root.iter("testcase")}


# ------------------------------------------------------------------------------ fixture submissions

def test_solved_tree_passes_everything(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("solved", tmp_path / "solved")
    assert not (tree / "solutions").exists()
    r, report, junit = grade(tree, "p14", "--seed", "101", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 0, r
    assert verdicts(report) == {v: "pass" for v in P14_VARIANTS}
    points = p14_points()
    assert report["score"] == {"points": sum(points.values()), "max_points": sum(points.values()), "percent": 100.0}
    assert {v["variant"]: v["points"] for v in report["variants"]} == points
    assert report["passed"] is True and report["mode"] == "manifest"
    assert report["integrity"]["status"] == "ok" and report["integrity"]["modified"] == []
    assert report["limits"]["memory_mib"] == 4096  # the default limit leaves the solutions room
    assert report["seed"] == 101 and report["only"] == "p14"
    assert report["review"] == []  # a solution only adds code inside the FILL ME IN regions
    for v in report["variants"]:
        assert v["cases_run"] == v["cases_total"] > 5 and v["failing_case"] is None
    complete = next(v for v in report["variants"] if v["variant"] == "complete")
    assert complete["cases_total"] >= 30  # every block size, edge sizes, extra cases, a large one
    # human output
    assert "seed: 101 (replay: python3 scripts/puzzle.py grade --seed 101" in r.stdout
    assert re.search(r"^score: %d/%d points \(100\.0%%\), %d of %d variants passed" % (
        sum(points.values()), sum(points.values()), len(P14_VARIANTS), len(P14_VARIANTS)), r.stdout, re.M)
    for v in P14_VARIANTS:
        assert re.search(r"^p14 --%s\s+pass\s+%d/%d\s+all \d+ passed\s+\d+\.\d\d?\s*$" % (v, points[v], points[v]),
                         r.stdout, re.M)
    # JUnit
    assert junit.tag == "testsuites" and junit.get("tests") == str(len(P14_VARIANTS)) and junit.get("failures") == "0"
    cases = junit_cases(junit)
    assert sorted(cases) == sorted("p14 --%s" % v for v in P14_VARIANTS)
    assert all(len(list(c)) == 1 and c[0].tag == "system-out" for c in cases.values())


def test_every_solution_passes_the_checker(tmp_path, grade_work, fresh_manifest):
    """Every other puzzle's solutions pass too: their output is written by kernels on every hidden
    case (p14 is graded in test_solved_tree_passes_everything)."""
    needs_toolchain()
    from puzzlelib.puzzles import discover
    others = sorted(name for name in discover(REPO) if name != "p14" and (REPO / "solutions" / name).is_dir())
    if not others:
        pytest.skip("no other puzzles with solutions")
    tree = make_submission("solved", tmp_path / "solved")
    r, report, _ = grade(tree, "--only", ",".join(others), "--seed", "77", "--manifest", fresh_manifest,
                         work=grade_work)
    bad = {"%s --%s" % (v["puzzle"], v["variant"]): (v["verdict"], v["reason"]) for v in report["variants"]
           if v["verdict"] != "pass"}
    assert not bad and r.returncode == 0, bad
    assert {v["puzzle"] for v in report["variants"]} == set(others)
    # The serial-work review note does not mistake a reference solution for a serial loop.
    assert [n for n in report["review"] if n["kind"] == "serial"] == []


def test_untouched_tree_fails_every_variant(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("untouched", tmp_path / "untouched")
    r, report, junit = grade(tree, "p14", "--seed", "5", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {v: "fail" for v in P14_VARIANTS}
    assert set(reasons(report).values()) == {"wrong answer"}
    assert report["score"]["points"] == 0 and report["passed"] is False
    assert report["counts"]["fail"] == len(P14_VARIANTS)
    for v in report["variants"]:
        fc = v["failing_case"]
        assert fc["index"] == 1 and fc["n"] == 1
        assert fc["replay"] == "python3 scripts/puzzle.py run p14 --%s --n 1 --tpb %d --seed %d --backend cpu" % (
            v["variant"], fc["tpb"], fc["seed"])
        assert "mismatch" in v["diagnostic"]
    assert report["review"] == []  # the skeleton itself
    assert junit.get("failures") == str(len(P14_VARIANTS)) and junit.get("errors") == "0"
    failure = junit_cases(junit)["p14 --simple"].find("failure")
    assert failure.get("type") == "fail" and failure.get("message").startswith("fail: wrong answer (n=1 tpb=")


def test_report_only_exits_0(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("untouched", tmp_path / "untouched")
    r, report, _ = grade(tree, "p14", "--simple", "--report-only", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 0, r
    assert verdicts(report) == {"simple": "fail"}


def test_crashing_kernel(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("crash", tmp_path / "crash")
    r, report, junit = grade(tree, "--only", "p14:simple,p14:naive", "--seed", "3", "--manifest", fresh_manifest,
                             work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"naive": "error", "simple": "error"}
    assert reasons(report) == {"naive": "crashed (SIGABRT)", "simple": "crash: null pointer dereference"}
    simple = next(v for v in report["variants"] if v["variant"] == "simple")
    assert "null pointer dereference" in simple["diagnostic"]
    # Advice about null pointers, not about indices; no addr2line discriminators.
    assert "A pointer the kernel used is null" in simple["diagnostic"]
    assert "Check the index" not in simple["diagnostic"] and "discriminator" not in simple["diagnostic"]
    assert "puzzles/p14/p14.cu:" in simple["diagnostic"] and str(grade_work) not in simple["diagnostic"]
    assert junit.get("errors") == "2"
    assert junit_cases(junit)["p14 --naive"].find("error").get("type") == "error"
    assert any(n["kind"] == "suspicious" and "abort" in n["text"] for n in report["review"])


def test_infinite_loops(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("infinite-loop", tmp_path / "loop")
    start = time.monotonic()
    r, report, _ = grade(tree, "--only", "p14:simple,p14:double-buffer", "--time-limit", "3",
                         "--manifest", fresh_manifest, work=grade_work, env={"CUDASIM_STALL_SECONDS": "1"})
    assert r.returncode == 1, r
    assert verdicts(report) == {"simple": "error", "double-buffer": "error"}
    assert reasons(report)["simple"] == "endless loop (a thread never reached a barrier)"
    assert "runaway thread in kernel scan_stride_zero" in report["variants"][0]["diagnostic"]
    # A barrier in an endless loop: the simulator's barrier count stops it, or else the time limit.
    if reasons(report)["double-buffer"] == "timed out after 3 s":
        assert report["variants"][1]["diagnostic"].startswith("stopped at the time limit of 3 s; ")
    else:
        assert reasons(report)["double-buffer"] == "endless loop (a block passed the same barrier over and over)"
        assert "runaway block in kernel scan_barrier_forever" in report["variants"][1]["diagnostic"]
    assert report["limits"]["stall_s"] == 1 and report["limits"]["time_s"] == 3
    assert time.monotonic() - start < 120


def test_deadlock(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("deadlock", tmp_path / "deadlock")
    r, report, _ = grade(tree, "p14", "--simple", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"simple": "error"}
    assert reasons(report) == {"simple": "deadlock"}
    assert "deadlock in kernel scan_deadlock" in report["variants"][0]["diagnostic"]


def other_puzzle_variant():
    """pNN:VARIANT of a puzzle other than p14, to show one puzzle's failure does not stop another."""
    from puzzlelib.puzzles import discover
    others = [p for name, p in discover(REPO).items() if name != "p14"]
    if not others:
        return None
    return "%s:%s" % (others[0].name, next(iter(others[0].variants)))


def test_compile_error(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("compile-error", tmp_path / "compile-error")
    other = other_puzzle_variant()
    only = "p14" + ("," + other if other else "")
    r, report, junit = grade(tree, "--only", only, "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    if other:  # the other puzzle was built and run all the same
        rows = [v for v in report["variants"] if v["puzzle"] == other.split(":")[0]]
        assert len(rows) == 1 and rows[0]["verdict"] not in ("build-error", "tampered") and rows[0]["cases_run"] >= 1
        report["variants"] = [v for v in report["variants"] if v["puzzle"] == "p14"]
    assert verdicts(report) == {v: "build-error" for v in P14_VARIANTS}
    assert set(reasons(report).values()) == {"compile error at puzzles/p14/p14.cu:8"}
    build = next(b for b in report["builds"] if b["puzzle"] == "p14")
    assert build["ok"] is False
    assert "puzzles/p14/p14.cu:8:" in build["diagnostic"] and str(grade_work) not in build["diagnostic"]
    assert report["variants"][0]["cases_run"] == 0 and report["variants"][0]["failing_case"] is None
    assert junit.find("testsuite[@name='p14']").get("errors") == str(len(P14_VARIANTS))
    assert "does not build (compile error at puzzles/p14/p14.cu:8)" in r.stdout
    # Nothing ran: no cases, no seconds (not "0/0" and "0.0").
    assert re.search(r"^p14 --naive\s+build-error\s+0/\d+\s+-\s+-\s+compile error at puzzles/p14/p14\.cu:8", r.stdout, re.M), r.stdout


def test_tampered_harness_is_refused(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("tampered", tmp_path / "tampered")
    r, report, junit = grade(tree, "p14", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {v: "tampered" for v in P14_VARIANTS}
    assert report["integrity"]["status"] == "tampered"
    assert report["integrity"]["modified"] == ["harness/src/harness.cpp"]
    assert report["integrity"]["missing"] == []
    assert report["score"]["points"] == 0 and report["passed"] is False
    assert all("harness/src/harness.cpp" in v["reason"] for v in report["variants"])
    assert report["builds"][0]["ok"] is False
    assert "--pristine" in report["integrity"]["message"]
    assert "TAMPERED" in r.stdout and "harness/src/harness.cpp" in r.stdout
    assert junit_cases(junit)["p14 --simple"].find("error").get("type") == "tampered"


def test_tampered_points_keep_the_committed_maxima(tmp_path):
    """An in-place grade (CI in a student's repository) of a tree whose grading/points.json was
    edited: every variant is tampered, and the maxima come from the committed version that matches
    the manifest, not from the edit."""
    if not shutil.which("git"):
        pytest.skip("needs git")
    tree = copy_repo(tmp_path / "class")
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "class template"], check=True)
    data = json.loads((tree / "grading" / "points.json").read_text())
    data["puzzles"]["p14"] = {v: 100 for v in P14_VARIANTS}
    (tree / "grading" / "points.json").write_text(json.dumps(data))
    subprocess.run(git + ["commit", "-q", "-am", "more points"], check=True)

    def graded():
        out = tmp_path / "report.json"
        r = run_cli("grade", "p14", "--json", out, "--report-only", root=tree)
        assert r.returncode == 0, r
        report = json.loads(out.read_text())
        gr.validate(report, SCHEMA)
        assert verdicts(report) == {v: "tampered" for v in P14_VARIANTS}
        assert report["integrity"]["modified"] == ["grading/points.json"]
        return r, report

    r, report = graded()
    assert report["score"] == {"points": 0, "max_points": sum(p14_points().values()), "percent": 0.0}
    assert report["points_file"].startswith("grading/points.json as committed in ")
    shutil.rmtree(str(tree / ".git"))  # no history: grade says whose maxima these are
    r, report = graded()
    assert report["score"]["max_points"] == 100 * len(P14_VARIANTS)
    assert "no commit has the version the manifest lists" in r.stderr


def test_tampered_harness_is_ignored_with_pristine(tmp_path, grade_work):
    needs_toolchain()
    tree = make_submission("tampered", tmp_path / "tampered")
    r, report, _ = grade(tree, "p14", "--simple", "--pristine", REPO, work=grade_work)
    assert r.returncode == 0, r
    assert verdicts(report) == {"simple": "pass"}
    assert report["mode"] == "pristine" and report["pristine"] == str(REPO)
    assert report["integrity"]["status"] == "ignored"
    assert report["integrity"]["modified"] == ["harness/src/harness.cpp"]
    staged = grade_work / "tree" / "harness" / "src" / "harness.cpp"
    assert staged.read_bytes() == (REPO / "harness" / "src" / "harness.cpp").read_bytes()


def test_hardcoded_show_output_fails_hidden_inputs(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("hardcoded", tmp_path / "hardcoded")
    r, report, _ = grade(tree, "p14", "--simple", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"simple": "fail"}
    # ... while the show input, which is all `run` prints, passes
    binary = grade_work / "build" / "bin" / "p14_cpu"
    show = subprocess.run([str(binary), "--variant", "simple", "--show", "--n", "8", "--tpb", "8"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert show.returncode == 0, show.stdout
    assert '"verdict": "pass"' in show.stdout


def test_race(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("race", tmp_path / "race")
    r, report, junit = grade(tree, "p14", "--simple", "--seed", "9", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"simple": "race"}
    assert reasons(report) == {"simple": "unsynchronized accesses to shared memory"}  # the memory checker found it
    assert report["variants"][0]["failing_case"]["n"] > 1  # one element cannot race
    assert "race in kernel scan_in_place" in report["variants"][0]["diagnostic"]
    # The failing case replays in the learner's own tree with check, which runs grade's cases.
    assert "    check:  python3 scripts/puzzle.py check p14 --simple --seed 9 --backend cpu" in r.stdout
    assert junit_cases(junit)["p14 --simple"].find("failure").get("type") == "race"


# ------------------------------------------------------------------------------ verdicts that cannot be forged

def in_process_outcome(grade_work, variant, n, tpb, seed, puzzle="p14", extra=()):
    """The learner's binary of the last grade run, run alone: its driver compares inside the
    process that runs learner code, as `run` and `check` do. Classified as grade used to."""
    binary = grade_work / "build" / "bin" / ("%s_cpu" % puzzle)
    return grade_run.run_limited([binary, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", seed] + list(extra), 60)


def test_forged_results_are_rejected(tmp_path, grade_work, fresh_manifest):
    """Printing a forged RESULT line, ending the program with status 0, zeroing the driver's input
    through a pointer, killing the parent: each is a fail or an error, and the grader survives."""
    needs_toolchain()
    tree = make_submission("forged", tmp_path / "forged")
    r, report, junit = grade(tree, "p14", "--naive", "--simple", "--double-buffer", "--complete", "--seed", "12",
                             "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    got = verdicts(report)
    assert got["naive"] == "fail" and got["simple"] == "error" and got["complete"] == "error", report["variants"]
    assert got["double-buffer"] in ("fail", "error"), report["variants"]  # n=1 makes the pointer hunt a guess
    why = reasons(report)
    assert why["naive"] == "wrong answer"
    assert why["simple"] == ("the program ended (exit status 0) before its output reached the grader: "
                             "learner code must not end the program")
    assert why["complete"].startswith("the grader's checker was killed (SIGKILL)"), why["complete"]
    assert report["score"]["points"] == 0
    flagged = " | ".join(n["text"] for n in report["review"] if n["kind"] == "suspicious")
    for what in ("mentions RESULT", "ends the program itself: _exit(0)", "reaches into processes or stack frames"):
        assert what in flagged, flagged
    # The same binary passes where the comparison runs in its own process.
    forged_exit = in_process_outcome(grade_work, "simple", 5, 8, 1)
    assert forged_exit.passed, forged_exit
    # The pointer hunt starts by copying d_in to the host, which the harness now refuses in `check` too;
    # with the copies let through, it forges the in-process comparison.
    refused = in_process_outcome(grade_work, "double-buffer", 100, 256, 3)
    assert not refused.passed and any("the launcher copied 400 bytes of device memory to the host" in line
                                      for line in refused.lines), (refused, refused.lines)
    forged_input = in_process_outcome(grade_work, "double-buffer", 100, 256, 3, extra=["--allow-host-copies"])
    assert forged_input.passed, (forged_input, forged_input.lines)
    # ... and on that case the checker, which made its own input, says wrong answer.
    r, report, _ = grade(tree, "p14", "--double-buffer", "--seed", "12", "--manifest", fresh_manifest,
                         work=grade_work)
    diagnostic = report["variants"][0]["diagnostic"]
    assert report["variants"][0]["verdict"] in ("fail", "error") and "RESULT" not in diagnostic


def test_replaced_comparison_is_not_used(tmp_path, grade_work, fresh_manifest):
    """A learner file that links its own harness::detail::eq<int> over the driver's: the checker
    binary has no learner code, so its comparison is the real one."""
    needs_toolchain()
    tree = make_submission("forged-compare", tmp_path / "forged-compare")
    r, report, _ = grade(tree, "p14", "--naive", "--simple", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"naive": "fail", "simple": "fail"}
    assert "mismatch" in report["variants"][1]["diagnostic"]
    forged = in_process_outcome(grade_work, "simple", 5, 8, 1)
    assert forged.passed, forged


def test_host_computed_output_is_not_on_device(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("host-computed", tmp_path / "host-computed")
    r, report, junit = grade(tree, "p14", "--naive", "--simple", "--complete", "--double-buffer", "--brent-kung",
                             "--seed", "4", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    # The launchers read d_in into host memory: the harness refuses that copy while a case runs,
    # before any output exists to look at (the launcher's cudaMemcpy line is named), also when a
    # kernel then copies the host's answer into the output (--double-buffer).
    assert verdicts(report) == {"naive": "pass", "simple": "error", "complete": "error", "double-buffer": "error",
                                "brent-kung": "pass"}
    why = reasons(report)
    for variant in ("simple", "complete", "double-buffer"):
        assert why[variant].startswith("the launcher copied device memory to the host (cudaMemcpyDeviceToHost)"), why
        assert re.search(r"^p14 --%s\s+error\s+0/\d+\s+failed at 1 of \d+\s+\d+\.\d\d\s" % variant, r.stdout, re.M), r.stdout
    # One thread in a serial loop passes --brent-kung, with a review note (the profiler's counters:
    # one active thread per warp-level memory instruction); the parallel --naive gets none.
    serial = [n for n in report["review"] if n["kind"] == "serial"]
    assert len(serial) == 1 and serial[0]["text"].startswith("p14 --brent-kung: its kernels did the work one "
                                                              "thread at a time (1.0 active threads"), serial
    assert serial[0]["line"] == 1 + (FIXTURES / "host-computed" / "puzzles" / "p14" / "p14.cu").read_text().splitlines().index(
        "  scan_in_one_thread<<<1, tpb>>>(d_in, d_out, n);")
    assert report["review"][0] == serial[0]  # first: it is the one a reader needs most
    assert "puzzles/p14/p14.cu:%d: p14 --brent-kung: its kernels" % serial[0]["line"] in r.stdout
    complete = next(v for v in report["variants"] if v["variant"] == "complete")
    assert complete["points"] == 0 and complete["require_device"] is True
    fixture_lines = (FIXTURES / "host-computed" / "puzzles" / "p14" / "p14.cu").read_text().splitlines()
    copy_line = 1 + next(i for i, line in enumerate(fixture_lines) if "cudaMemcpy(h.data(), d_in" in line)
    assert re.search(r"the launcher copied \d+ bytes? of device memory to the host \(cudaMemcpyDeviceToHost\) at "
                     r"\S*p14\.cu:%d\." % copy_line, complete["diagnostic"]), complete["diagnostic"]
    assert "A puzzle's answer must be computed by its kernels" in complete["diagnostic"]
    assert report["counts"]["error"] == 3
    failure = junit_cases(junit)["p14 --complete"].find("error")
    assert failure.get("type") == "error"
    # The answer itself is right: let through the copies, and the driver's own comparison passes it.
    assert in_process_outcome(grade_work, "complete", 100, 8, 1, extra=["--allow-host-copies"]).passed
    assert not in_process_outcome(grade_work, "complete", 100, 8, 1).passed
    # The checker that compared is built without the learner's file: none of its functions is in it.
    if shutil.which("nm"):
        def symbols(target):
            out = subprocess.run(["nm", "-C", str(grade_work / "build" / "bin" / target)], stdout=subprocess.PIPE,
                                 universal_newlines=True).stdout
            return {line.split(" ", 2)[-1] for line in out.splitlines() if " T " in line or " t " in line}
        learner_only = {"scan_on_host(int const*, int*, int)", "p14_complete(int const*, int*, int, int)"}
        assert learner_only <= symbols("p14_cpu")
        assert "scan_on_host(int const*, int*, int)" not in symbols("p14_checker")
    # An instructor can accept host output for a variant.
    points = tmp_path / "points.json"
    points.write_text(json.dumps({"version": 1, "default": 1,
                                  "require_device": {"puzzles": {"p14": {"simple": False}}}}))
    r, report, _ = grade(tree, "p14", "--simple", "--complete", "--seed", "4", "--points", points,
                         "--manifest", fresh_manifest, work=grade_work)
    assert verdicts(report) == {"simple": "pass", "complete": "error"}
    assert {v["variant"]: v["require_device"] for v in report["variants"]} == {"simple": False, "complete": True}


def test_require_device_setting():
    points = gr.Points({"require_device": {"default": False, "puzzles": {"p14": {"simple": True}, "p12": True}}})
    assert points.require_device("p14", "simple") is True
    assert points.require_device("p14", "naive") is False
    assert points.require_device("p12", "k1") is True
    assert points.require_device("p13", "block") is False
    assert gr.Points({}).require_device("p14", "simple") is True
    assert gr.Points({"require_device": False}).require_device("p14", "simple") is False
    for bad in ({"require_device": "yes"}, {"require_device": {"puzzles": {"p14": 1}}},
                {"require_device": {"default": True, "other": 1}}):
        with pytest.raises(UsageError):
            gr.Points(bad)


def test_device_code_calling_host_functions_is_a_build_error(tmp_path, grade_work, fresh_manifest):
    """With nvcc, the learner file is also compiled for the GPU: a kernel that calls fopen, exit or
    std::cout does not build, as on a GPU, even though the simulator runs it."""
    needs_toolchain()
    nvcc = gmod.find_nvcc(None)
    if not nvcc:
        pytest.skip("needs nvcc")
    tree = make_submission("device-host-call", tmp_path / "device-host-call")
    r, report, junit = grade(tree, "p14", "--naive", "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"naive": "build-error"}
    assert reasons(report) == {"naive": "compile error for the GPU at puzzles/p14/p14.cu:14: device code calls the "
                                        "host function fopen"}
    build = report["builds"][0]
    assert build["device_compile"] == "failed" and report["nvcc"] == nvcc
    assert 'calling a __host__ function("exit")' in build["diagnostic"]
    assert str(grade_work) not in build["diagnostic"]
    r, report, _ = grade(tree, "p14", "--naive", "--nvcc", "off", "--manifest", fresh_manifest, work=grade_work)
    assert verdicts(report) == {"naive": "pass"}  # the simulator alone runs the kernel
    assert report["builds"][0]["device_compile"] == "skipped" and report["nvcc"] is None


def test_device_code_calling_host_functions_is_refused_without_nvcc(tmp_path, grade_work, fresh_manifest):
    """Without nvcc, the simulator refuses a host call from a kernel when it happens, with nvcc's
    words: exit(0) and fopen in a kernel are errors that say why; printf in a kernel still works."""
    needs_toolchain()
    tree = make_submission("device-host-call-runs", tmp_path / "device-host-call-runs")
    r, report, _ = grade(tree, "p14", "--naive", "--simple", "--double-buffer", "--nvcc", "off",
                         "--manifest", fresh_manifest, work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"naive": "pass", "simple": "error", "double-buffer": "error"}
    assert reasons(report)["simple"] == "device code calls the host function exit"
    assert reasons(report)["double-buffer"] == "device code calls the host function fopen"
    diagnostics = {v["variant"]: v["diagnostic"] for v in report["variants"]}
    assert re.search(r'host function called from device code at puzzles/p14/p14\.cu:\d+: kernel scan_then_exit '
                     r'\(launched at [^)]*\), block 0, thread 0: calling a __host__ function\("exit"\) from a '
                     r'__global__ function\("scan_then_exit"\) is not allowed', diagnostics["simple"]), diagnostics["simple"]
    assert 'calling a __host__ function("fopen") from a __global__ function("scan_reading_a_file")' in \
        diagnostics["double-buffer"]
    assert "on a GPU this is a build error" in diagnostics["simple"]


def test_verdict_does_not_depend_on_the_worker_count(tmp_path, grade_work, fresh_manifest):
    """`*out += in[i]` instead of atomicAdd: the same verdict and the same failing case with 1, 2
    and 16 simulator workers (CUDASIM_WORKERS), so a one-core runner grades as a 16-core one."""
    needs_toolchain()
    if not (REPO / "solutions" / "p12" / "p12.cu").is_file():
        pytest.skip("needs solutions/p12")
    tree = make_submission("nonatomic", tmp_path / "nonatomic")
    results = {}
    for workers in (1, 2, 16):
        r, report, _ = grade(tree, "p12", "--atomic", "--seed", "8", "--workers", str(workers), "--memory-limit", "0",
                             "--manifest", fresh_manifest, work=grade_work)
        row = report["variants"][0]
        assert report["limits"]["workers"] == workers
        results[workers] = (row["verdict"], row["reason"], row["failing_case"] and row["failing_case"]["index"])
    assert results[1][0] == "race", results
    assert results[1] == results[2] == results[16], results


def test_memory_limit(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    if not grade_run.memory_limit_supported():
        pytest.skip("RLIMIT_AS is not available here")
    tree = make_submission("solved", tmp_path / "solved")
    r, report, _ = grade(tree, "p14", "--complete", "--memory-limit", "48M", "--manifest", fresh_manifest,
                         work=grade_work)
    assert r.returncode == 1, r
    assert verdicts(report) == {"complete": "error"}
    assert reasons(report) == {"complete": "out of memory (limit 48 MiB)"}
    assert report["limits"]["memory_mib"] == 48


def test_seed_is_fresh_printed_and_replayable(tmp_path, grade_work, fresh_manifest):
    needs_toolchain()
    tree = make_submission("untouched", tmp_path / "untouched")
    runs = [grade(tree, "p14", "--complete", "--manifest", fresh_manifest, work=grade_work) for _ in range(2)]
    seeds = [report["seed"] for _, report, _ in runs]
    assert seeds[0] != seeds[1]
    for (r, report, _), seed in zip(runs, seeds):
        assert "seed: %d (replay: " % seed in r.stdout
    r, replayed, _ = grade(tree, "p14", "--complete", "--manifest", fresh_manifest, work=grade_work,
                           env={gmod.SEED_ENV: str(seeds[0])})
    assert replayed["seed"] == seeds[0]
    assert replayed["variants"][0]["failing_case"] == runs[0][1]["variants"][0]["failing_case"]


def test_works_without_solutions_and_uses_no_solution_file(tmp_path, grade_work):
    """Grading compares with the CPU reference in the driver: the staged tree has no solutions/."""
    needs_toolchain()
    tree = make_submission("untouched", tmp_path / "untouched")
    r, report, _ = grade(tree, "p14", "--naive", "--pristine", REPO, work=grade_work)
    assert verdicts(report) == {"naive": "fail"}
    assert not (grade_work / "tree" / "solutions").exists()
    staged = sorted(p.relative_to(grade_work / "tree").as_posix() for p in (grade_work / "tree").rglob("*")
                    if p.is_file())
    assert all(gi.needed_for_build(p) for p in staged)
    assert "puzzles/p14/p14.cu" in staged and "puzzles/p14/driver.cpp" in staged
    assert not any(p.startswith("puzzles/") and p.endswith(".md") for p in staged)


# ------------------------------------------------------------------------------ Gradescope

GRADESCOPE_SCHEMA = {
    "type": "object", "required": ["score", "output", "tests"],
    "properties": {
        "score": {"type": "number", "minimum": 0}, "output": {"type": "string"},
        "execution_time": {"type": "integer", "minimum": 0}, "visibility": {"enum": ["visible", "hidden", "after_due_date", "after_published"]},
        "stdout_visibility": {"enum": ["visible", "hidden", "after_due_date", "after_published"]},
        "tests": {"type": "array", "items": {
            "type": "object", "required": ["name", "score", "max_score", "status", "output"], "additionalProperties": False,
            "properties": {"name": {"type": "string", "minLength": 1}, "score": {"type": "number", "minimum": 0},
                           "max_score": {"type": "number", "minimum": 0}, "status": {"enum": ["passed", "failed"]},
                           "output": {"type": "string"}}}},
    },
    "additionalProperties": False,
}


def test_gradescope_run_autograder(tmp_path, grade_work):
    """run_autograder in a folder laid out like /autograder: the class template in source/, the
    student's p14.cu alone in submission/ (a solved --naive, a --simple that does nothing)."""
    needs_toolchain()
    root = tmp_path / "autograder"
    source = copy_repo(root / "source")
    for name in ("setup.sh", "run_autograder"):
        shutil.copy2(str(REPO / "grading" / "gradescope" / name), str(source / name))
    (root / "submission").mkdir()
    (root / "results").mkdir()
    text = (REPO / "solutions" / "p14" / "p14.cu").read_text(encoding="utf-8")
    wrong = text.replace("void p14_simple(const int* d_in, int* d_out, int n, int tpb) {",
                         "void p14_simple(const int* d_in, int* d_out, int n, int tpb) {\n  return;")
    assert wrong != text
    (root / "submission" / "p14.cu").write_text(wrong, encoding="utf-8")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), PUZZLES_GRADE_ONLY="p14:naive,p14:simple", PUZZLES_GRADE_SEED="7",
               PUZZLES_GRADE_WORK_DIR=str(grade_work))
    env.pop("PUZZLES_ROOT", None)
    proc = subprocess.run(["bash", str(source / "run_autograder")], cwd=str(root), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
    assert proc.returncode == 0, proc.stdout
    results = json.loads((root / "results" / "results.json").read_text())
    gr.validate(results, GRADESCOPE_SCHEMA)
    tests = {t["name"]: t for t in results["tests"]}
    points = gr.Points.load(REPO / "grading" / "points.json")
    assert set(tests) == {"p14 --naive", "p14 --simple"}
    assert tests["p14 --naive"]["status"] == "passed" and tests["p14 --naive"]["score"] == points.of("p14", "naive")
    assert tests["p14 --simple"]["status"] == "failed" and tests["p14 --simple"]["score"] == 0
    assert tests["p14 --simple"]["max_score"] == points.of("p14", "simple")
    assert "replay: python3 scripts/puzzle.py run p14 --simple" in tests["p14 --simple"]["output"]
    assert results["score"] == points.of("p14", "naive")
    # A grader that cannot run still leaves results.json behind (a broken template here).
    (source / "CMakeLists.txt").write_text("this is not cmake(\n")
    proc = subprocess.run(["bash", str(source / "run_autograder")], cwd=str(root), env=dict(env, PUZZLES_GRADE_WORK_DIR=str(tmp_path / "w2")),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
    assert proc.returncode == 0, proc.stdout
    results = json.loads((root / "results" / "results.json").read_text())
    gr.validate(results, GRADESCOPE_SCHEMA)
    assert results["score"] == 0 and "could not grade" in results["output"]


# ------------------------------------------------------------------------------ the manifest

def test_committed_manifest_is_current():
    diff = gi.manifest_diff(REPO)
    assert not diff, ("grading/protected.sha256 is out of date; run `python3 scripts/puzzle.py grade "
                      "--update-manifest` and commit it:\n" + "\n".join(diff[:40]))


def test_check_manifest_command(tmp_path):
    root = tmp_path / "repo"
    (root / "harness").mkdir(parents=True)
    (root / "harness" / "a.cpp").write_text("int a;\n")
    (root / "CMakeLists.txt").write_text("project(x)\n")
    assert run_cli("grade", "--check-manifest", root=root).returncode == 1
    r = run_cli("grade", "--update-manifest", root=root)
    assert r.returncode == 0 and "2 protected files" in r.stdout
    assert run_cli("grade", "--check-manifest", root=root).returncode == 0
    (root / "harness" / "a.cpp").write_text("int b;\n")
    r = run_cli("grade", "--check-manifest", root=root)
    assert r.returncode == 1 and "harness/a.cpp" in r.stdout


def test_protected_set():
    for rel in ("CMakeLists.txt", "harness/cmake/Puzzle.cmake", "harness/src/harness.cpp", "scripts/puzzle.py",
                "scripts/puzzlelib/grade.py", "puzzles/p14/driver.cpp", "puzzles/p14/puzzle.json",
                "puzzles/p14/expected/simple.txt", "puzzles/p14/p13.cu.bak-1", "grading/points.json", ".github/workflows/grade.yml"):
        assert gi.is_protected(rel), rel
    for rel in ("puzzles/p14/p14.cu", "puzzles/p14/p14.cu.bak-20261201-173853", "puzzles/p14/README.md", "puzzles/p14/README.ko.md", "solutions/p14/p14.cu",
                "tests/python/test_grade.py", "README.md", "scripts/__pycache__/x.pyc", "grading/protected.sha256"):
        assert not gi.is_protected(rel), rel
    assert gi.scope("puzzles/p14/driver.cpp") == "p14" and gi.scope("harness/src/harness.cpp") == gi.ALL
    files = gi.protected_files(REPO)
    assert "harness/src/harness.cpp" in files and "puzzles/p14/driver.cpp" in files
    assert not any("__pycache__" in f for f in files)


def test_verify_manifest_scopes_and_line_endings(tmp_path):
    root = tmp_path / "r"
    for rel, text in {"harness/a.h": "a\nb\n", "puzzles/p1/driver.cpp": "d\n", "puzzles/p1/puzzle.json": "{}\n",
                      "puzzles/p2/driver.cpp": "e\n", "puzzles/p2/puzzle.json": "{}\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    entries = gi.read_manifest(gi.write_manifest(root, tmp_path / "m")[0])
    assert gi.verify_manifest(root, entries).status == "ok"
    (root / "harness" / "a.h").write_bytes(b"a\r\nb\r\n")  # a Windows checkout is not tampering
    assert gi.verify_manifest(root, entries).status == "ok"
    (root / "puzzles" / "p1" / "driver.cpp").write_text("cheat\n")
    (root / "puzzles" / "p2" / "puzzle.json").unlink()
    result = gi.verify_manifest(root, entries)
    assert result.status == "tampered"
    assert result.modified == ["puzzles/p1/driver.cpp"] and result.missing == ["puzzles/p2/puzzle.json"]
    assert result.tampered_scopes() == {"p1": ["puzzles/p1/driver.cpp"], "p2": ["puzzles/p2/puzzle.json"]}
    (root / "harness" / "a.h").write_text("x\n")
    assert gi.ALL in gi.verify_manifest(root, entries).tampered_scopes()


def test_sync_tree_keeps_unchanged_files(tmp_path):
    dest = tmp_path / "t"
    gi.sync_tree(dest, {"a/x.txt": b"1", "b.txt": b"2"})
    before = (dest / "a" / "x.txt").stat().st_mtime_ns
    time.sleep(0.01)
    assert gi.sync_tree(dest, {"a/x.txt": b"1", "c.txt": b"3"}) == 1
    assert (dest / "a" / "x.txt").stat().st_mtime_ns == before
    assert not (dest / "b.txt").exists() and (dest / "c.txt").read_bytes() == b"3"


# ------------------------------------------------------------------------------ units

def test_review_notes():
    skeleton = (REPO / "puzzles" / "p14" / "p14.cu").read_text()
    solution = (REPO / "solutions" / "p14" / "p14.cu")
    if solution.is_file():
        assert gi.review_learner_file(solution.read_text(), skeleton, "puzzles/p14/p14.cu") == []
    # a launcher that computes the answer on the host instead of launching the kernel
    cheat = skeleton.replace(
        "  prefix_sum_simple<<<1, tpb, tpb * sizeof(int)>>>(d_in, d_out, n);\n",
        "  std::vector<int> h(n);\n  cudaMemcpy(h.data(), d_in, n * sizeof(int), cudaMemcpyDeviceToHost);\n"
        "  for (int i = 1; i < n; ++i) h[i] += h[i - 1];\n"
        "  cudaMemcpy(d_out, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);\n")
    assert cheat != skeleton
    notes = gi.review_learner_file(cheat, skeleton, "puzzles/p14/p14.cu")
    kinds = {n["kind"] for n in notes}
    assert kinds == {"outside-fill", "suspicious"}, notes
    assert any("replace skeleton code" in n["text"] for n in notes)
    assert any("copies device data to the host" in n["text"] for n in notes)
    forged = skeleton + '\nvoid x() { printf("RESULT {\\"verdict\\": \\"pass\\"}\\n"); _exit(0); }\n'
    assert any("RESULT" in n["text"] for n in gi.review_learner_file(forged, skeleton, "f"))


def fake_outcome(returncode, lines, result=None, timed_out=False):
    return Outcome(["x"], returncode, lines, result, timed_out, 0.1)


def diagnosed(code, kind, detail=None, message="m", interleaved=False):
    verdict = "race" if code == 3 else "error"
    return fake_outcome(code, ["case: SIZE = 1", "cudasim: error: " + message],
                        {"verdict": verdict, "diagnosis": {"kind": kind, "sites": [], "block": [0, 0, 0], "threads": [],
                                                           "detail": detail, "message": message,
                                                           "interleaved": interleaved}})


@pytest.mark.parametrize("kind, detail, reason", [
    ("deadlock", None, "deadlock"),
    ("barrier_divergence", None, "barrier divergence"),
    ("runaway_thread", None, "endless loop (a thread never reached a barrier)"),
    ("runaway_barrier", None, "endless loop (a block passed the same barrier over and over)"),
    ("endless_wait", None, "endless wait (a block waits for what no other block will write)"),
    ("runaway_block", None, "endless loop (a block never finished)"),
    ("out_of_bounds", None, "out-of-bounds access"),
    ("null_dereference", None, "crash: null pointer dereference"),
    ("crash_host", None, "crash in host code"),
    ("out_of_memory", None, "out of memory"),
    ("host_call", "fopen", "device code calls the host function fopen"),
    ("exception", None, "a C++ exception escaped the kernel"),
])
def test_error_reasons(kind, detail, reason):
    assert grade_run.explain(diagnosed(4, kind, detail, "something new")) == reason


def test_error_reasons_other_kinds():
    assert grade_run.explain(fake_outcome(None, [], timed_out=True), 7) == "timed out after 7 s"
    assert grade_run.explain(fake_outcome(None, [], timed_out=True)) == "timed out"
    assert grade_run.explain(fake_outcome(-6, ["terminate called after throwing an instance of 'std::bad_alloc'"]),
                             memory=64 << 20) == "out of memory (limit 64 MiB)"
    assert grade_run.explain(fake_outcome(-11, [])) == "crashed (SIGSEGV)"
    # A failed CUDA call comes from the harness as data (harness.cpp, report_failed_call), not as text.
    assert grade_run.explain(fake_outcome(4, ["error: p14: a kernel launch or a kernel failed: x",
                                              'HARNESS_ERROR {"case": "kernels", "call": "p14", "what": "p14", '
                                              '"error": "cudaErrorLaunchFailure"}'],
                                          {"verdict": "error"})) == "kernel launch failed"
    assert grade_run.explain(fake_outcome(4, ["error: cudaMalloc failed at x.cu:3: out of memory (cudaErrorMemoryAllocation)",
                                              'HARNESS_ERROR {"case": "call", "call": "cudaMalloc", "what": "cudaMalloc", '
                                              '"error": "cudaErrorMemoryAllocation", "site": "x.cu:3"}'],
                                          {"verdict": "error"})) == "CUDA call failed: cudaMalloc (cudaErrorMemoryAllocation)"
    # The harness's English text alone names nothing.
    assert grade_run.explain(fake_outcome(4, ["error: p14: a kernel launch or a kernel failed: x"],
                                          {"verdict": "error"})) == "kernel error"
    assert grade_run.explain(fake_outcome(4, ["no diagnostic"], {"verdict": "error"})) == "kernel error"
    # The reason comes from the diagnosis, never from the message's words.
    assert grade_run.explain(fake_outcome(4, ["cudasim: error: deadlock in kernel k"], {"verdict": "error"})) == \
        "kernel error"
    assert grade_run.explain(fake_outcome(1, [], {"verdict": "fail"})) == "wrong answer"
    assert grade_run.explain(fake_outcome(3, [], {"verdict": "race"})) == "reported by the simulator"
    assert grade_run.explain(diagnosed(3, "race_shared")) == "unsynchronized accesses to shared memory"
    assert grade_run.explain(diagnosed(3, "race_schedule")) == "result depends on thread order"
    assert grade_run.explain(diagnosed(3, "race_schedule", interleaved=True)) == "result depends on how blocks interleave"


FAKE_CHECKER = """\
#!{python}
import os, signal, sys
fd = int(os.environ["PUZZLES_VERDICT_FD"])
assert os.environ["PUZZLES_CHECK_LEARNER"] == "learner-binary"
print('RESULT {{"verdict": "pass", "checked": true}}')  # the output is never the verdict
for verdict in {verdicts!r}:
    os.write(fd, ('RESULT {{"verdict": "%s", "checked": true, "reason": %s}}\\n'
                  % (verdict[0], "null" if verdict[1] is None else '"%s"' % verdict[1])).encode())
if {signal}:
    os.kill(os.getpid(), {signal})
sys.exit({rc})
"""


@pytest.mark.parametrize("verdicts, rc, signal_number, kind, reason", [
    ([("pass", None)], 0, 0, "pass", "passed"),
    ([("fail", "wrong answer")], 1, 0, "fail", "wrong answer"),
    ([("not-on-device", "not computed on the device: the program launched no kernel")], 5, 0, "not-on-device",
     "not computed on the device: the program launched no kernel"),
    ([("pass", None), ("error", "the program sent more outputs than the driver compares")], 4, 0, "error",
     "the program sent more outputs than the driver compares"),
    ([("fail", "wrong answer"), ("pass", None)], 1, 0, "fail", "wrong answer"),  # an added pass line changes nothing
    ([("race", None)], 3, 0, "race", "race: reported by the simulator"),  # no simulator report in the output
    ([("error", None)], 4, 0, "error", "kernel error"),
    ([("error", "crashed (SIGABRT)")], 134, 0, "error", "crashed (SIGABRT)"),
    ([("pass", None)], 1, 0, "error", "the grader's checker reported 'pass' with exit code 1"),
    ([], 0, 0, "error", "the grader's checker ended without a verdict (exit code 0)"),
    ([], 2, 0, "usage", "the driver rejected its command line"),
    ([], 0, 9, "error", "the grader's checker was killed (SIGKILL): the learner's program may have signalled its parent"),
])
def test_checked_verdicts(tmp_path, verdicts, rc, signal_number, kind, reason):
    """The verdict of a checked run comes from the checker's descriptor and exit code, never from
    the output."""
    checker = tmp_path / "fake_checker.py"
    checker.write_text(FAKE_CHECKER.format(python=sys.executable, verdicts=verdicts, signal=signal_number, rc=rc))
    checker.chmod(0o755)
    outcome = grade_run.run_checked(checker, "learner-binary", ["--variant", "simple"], 30)
    assert (outcome.kind, outcome.reason) == (kind, reason), outcome.lines
    assert not any("RESULT" in line for line in outcome.lines)


FAKE_SIM = """\
#!{python}
import sys
print("case: SIZE = 1, TPB = 8")
print("cudasim: error: deadlock in kernel k (launched at puzzles/p99/p99.cu:3): block 0 cannot make progress",
      file=sys.stderr)
print('RESULT {{"verdict": "error", "variant": "simple", "n": 1, "tpb": 8, "seed": 1, "mismatches": -1, '
      '"diagnosis": {{"kind": "deadlock", "sites": [], "block": [0, 0, 0], "threads": [], "detail": null, '
      '"message": "deadlock in kernel k"}}}}')
sys.exit(4)
"""


def test_check_names_the_error(cli, fixture_root, tmp_path):
    binary = tmp_path / "fake_sim.py"
    binary.write_text(FAKE_SIM.format(python=sys.executable))
    binary.chmod(0o755)
    r = cli("check", "p99", "--simple", "--seed", "1", "--binary", binary, root=fixture_root)
    assert r.returncode == 1, r
    # The wording of `check` belongs to scripts/puzzlelib/commands.py; what matters here is the reason.
    assert re.search(r"^\S+ p99 --simple: error \(deadlock\),? .*case 1 of \d+: n=1 tpb=8 seed=\d+$", r.stdout, re.M)
    assert re.search(r"^p99 --simple\s+error\s+.*\s+deadlock \(n=1 tpb=8 seed=\d+\)$", r.stdout, re.M)
    assert "total" in r.stdout


def test_run_limited_memory_limit():
    if not grade_run.memory_limit_supported():
        pytest.skip("RLIMIT_AS is not available here")
    code = "x = bytearray(512 * 1024 * 1024); print('allocated')"
    outcome = grade_run.run_limited([sys.executable, "-c", code], 60, 128 << 20)
    assert outcome.returncode != 0 and "allocated" not in outcome.lines
    assert any("MemoryError" in l for l in outcome.lines)
    assert grade_run.run_limited([sys.executable, "-c", code], 60, None).lines == ["allocated"]


def test_run_limited_kills_the_process_group():
    code = ("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
            "time.sleep(60)")
    start = time.monotonic()
    outcome = grade_run.run_limited([sys.executable, "-c", code], 1, None)
    assert outcome.timed_out and time.monotonic() - start < 10


@pytest.mark.parametrize("text, value", [("4096", 4096 << 20), ("4G", 4 << 30), ("512M", 512 << 20), ("0", None),
                                         ("none", None), ("1.5g", int(1.5 * (1 << 30)))])
def test_parse_memory(text, value):
    assert grade_run.parse_memory(text) == value


def test_parse_memory_rejects():
    for bad in ("lots", "-1", "10k"):
        with pytest.raises(ValueError):
            grade_run.parse_memory(bad)


def test_case_seeds_are_stable_and_spread():
    a = [case_seed(1, "p14", "simple", i) for i in range(50)]
    assert a == [case_seed(1, "p14", "simple", i) for i in range(50)]
    assert len(set(a)) == 50 and all(0 <= s < 2 ** 31 for s in a)
    assert a != [case_seed(2, "p14", "simple", i) for i in range(50)]


def test_points_config():
    p = gr.Points({"default": 2, "puzzles": {"p14": {"simple": 5}, "p12": 3}}, "t")
    assert p.of("p14", "simple") == 5 and p.of("p14", "naive") == 2 and p.of("p12", "x") == 3 and p.of("p9", "y") == 2
    for bad in ({"puzzles": {"p14": {"simple": -1}}}, {"default": "1"}, {"points": {}}):
        with pytest.raises(Exception):
            gr.Points(bad, "t")
    real = gr.Points.load(REPO / "grading" / "points.json")
    from puzzlelib.puzzles import discover
    assert real.unknown_names(discover(REPO)) == []


def test_only_filter(fixture_root):
    from puzzlelib.puzzles import discover
    from puzzlelib.common import UsageError
    puzzles = discover(fixture_root)
    assert gmod.parse_only("p99:simple,p99:--multi-block,p98", puzzles) == {
        "p99": ["simple", "multi-block"], "p98": None}
    with pytest.raises(UsageError):
        gmod.parse_only("p99:nope", puzzles)
    with pytest.raises(UsageError):
        gmod.parse_only("p7", puzzles)


def test_schema_validator_rejects_bad_reports():
    report = {"schema_version": 2}
    with pytest.raises(gr.SchemaError):
        gr.validate(report, SCHEMA)
    with pytest.raises(gr.SchemaError):
        gr.validate({"a": 1}, {"type": "object", "properties": {"a": {"type": "string"}}})
    with pytest.raises(gr.SchemaError):
        gr.validate(1, {"oneOf": []})  # unsupported keywords are refused, not ignored
    gr.validate(None, {"anyOf": [{"type": "null"}, {"type": "integer"}]})


def test_grade_help_says_check_replays_its_cases(cli, fixture_root):
    r = cli("grade", "--help", root=fixture_root)
    assert r.returncode == 0, r
    text = " ".join(r.stdout.split())
    assert "`check pNN --VARIANT --seed S --backend cpu` runs the same cases in the same order" in text


def test_grade_usage_errors(cli, fixture_root):
    assert cli("grade", "--help").returncode == 0
    r = cli("grade", "--pristine", "/nonexistent-dir")
    assert r.returncode == 2 and "does not look like the course repository" in r.output
    r = cli("grade", "--memory-limit", "lots")
    assert r.returncode == 2 and "--memory-limit" in r.output
    r = cli("grade", "p14", "--simpel")
    assert r.returncode == 2 and "did you mean --simple?" in r.output
    r = cli("grade", "--manifest", fixture_root / "none.sha256")
    assert r.returncode == 2 and "--update-manifest" in r.output
    r = cli("grade", "--submissions", fixture_root / "none")
    assert r.returncode == 2


# ------------------------------------------------------------------------------ grade --lang

def graded_report(lang):
    """A report as grade writes it: p14 --simple failed on a case, --naive passed, p14 --complete
    did not build."""
    row = {"puzzle": "p14", "variant": "simple", "flag": "--simple", "verdict": "race",
           "reason": "race: result depends on thread order", "require_device": True, "points": 0, "max_points": 2,
           "cases_run": 3, "cases_total": 30, "seconds": 0.5,
           "failing_case": {"index": 3, "n": 7, "tpb": 8, "seed": 11, "kind": None,
                            "replay": "python3 scripts/puzzle.py run p14 --simple --n 7 --tpb 8 --seed 11 --backend cpu"},
           "diagnostic": "mismatch: 출력 7개 중 2개가 다릅니다. 처음 다른 곳은 index 3"}
    passed = dict(row, variant="naive", flag="--naive", verdict="pass", reason="passed", points=1, max_points=1,
                  cases_run=30, failing_case=None, diagnostic=None)
    build = dict(row, variant="complete", flag="--complete", verdict="build-error",
                 reason="compile error at puzzles/p14/p14.cu:12", cases_run=0, failing_case=None,
                 diagnostic="Build of p14_cpu failed (puzzles/p14/p14.cu):")
    return {"student": "kim", "batch": False, "started_at": "2026-12-08T10:00:00Z", "seed": 11, "seconds": 3.2,
            "replay": "python3 scripts/puzzle.py grade --seed 11", "review": [], "lang": lang,
            "integrity": {"status": "ok", "message": "ok"}, "variants": [passed, row, build],
            "score": {"points": 1, "max_points": 5, "percent": 20.0}}


def test_gradescope_junit_and_verdict_speak_the_reports_language(tmp_path, capsys):
    from puzzlelib import grade_export as gx

    report = graded_report("ko")
    results = gx.gradescope_results(report)
    tests = {t["name"]: t["output"] for t in results["tests"]}
    assert tests["p14 --naive"] == "통과: 숨겨진 case 30개를 모두 통과했습니다"
    assert tests["p14 --simple"].startswith("Race Condition: 결과가 thread 실행 순서에 따라 달라짐\n")
    assert "실패한 case 3/30: n=7 tpb=8 seed=11" in tests["p14 --simple"]
    assert "다시 실행: python3 scripts/puzzle.py run p14 --simple" in tests["p14 --simple"]
    assert tests["p14 --complete"].startswith("build 오류: puzzles/p14/p14.cu:12에서 compile error")
    assert results["output"].startswith("1/5점 (20.0%), seed 11")
    for english in ("hidden cases passed", "failing case", "replay:", "points (", "result depends"):
        assert english not in json.dumps(results, ensure_ascii=False), english

    junit = junit_cases(gr.junit_tree([report]))
    failure = junit["p14 --simple"].find("failure")
    assert failure.get("type") == "race"  # machine fields stay English
    assert failure.get("message").startswith("Race Condition: ") and "(n=7 tpb=8 seed=11)" in failure.get("message")
    assert "다시 실행: " in failure.text and "replay:" not in failure.text
    assert junit["p14 --naive"].find("system-out").text == "점수: 1/1"

    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert gx.verdict_of(path, "p14:simple") == 1
    shown = capsys.readouterr().out
    assert shown.startswith("p14 --simple: Race Condition: ") and "0/2점" in shown and "points" not in shown
    assert gx.verdict_of(path, "p14:simple", "en") == 1  # --lang given: it wins over the report's
    assert capsys.readouterr().out.startswith("p14 --simple: race: result depends on thread order, 0/2 points\n")


def test_reports_without_a_language_are_english(tmp_path):
    from puzzlelib import grade_export as gx

    report = graded_report("en")
    del report["lang"]  # a report from before grade --lang
    tests = {t["name"]: t["output"] for t in gx.gradescope_results(report)["tests"]}
    assert tests["p14 --naive"] == "pass: every one of the 30 hidden cases passed"
    assert tests["p14 --complete"].startswith("build-error: compile error at puzzles/p14/p14.cu:12")
    message = junit_cases(gr.junit_tree([report]))["p14 --simple"].find("failure").get("message")
    assert message == "race: result depends on thread order (n=7 tpb=8 seed=11)"  # the verdict said once


def test_grade_lang_is_an_option_not_the_locale(cli, tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(graded_report("en")), encoding="utf-8")
    korean_locale = {"LANG": "ko_KR.UTF-8", "PUZZLE_LANG": "ko", "PUZZLES_GRADE_LANG": ""}
    r = cli("grade", "--verdict", path, "p14:simple", env=korean_locale)
    assert r.returncode == 1 and r.stdout.startswith("p14 --simple: race: result depends on thread order"), r
    r = cli("grade", "--verdict", path, "p14:simple", "--lang", "ko", env=korean_locale)
    assert r.returncode == 1 and r.stdout.startswith("p14 --simple: Race Condition: ") and "points" not in r.stdout, r
    r = cli("grade", "--verdict", path, "p14:simple", env=dict(korean_locale, PUZZLES_GRADE_LANG="ko"))
    assert r.stdout.startswith("p14 --simple: Race Condition: "), r
    r = cli("grade", "--lang", "fr")
    assert r.returncode == 2 and "--lang must be en or ko, not 'fr'" in r.stderr


def test_grade_help_in_korean(cli):
    r = cli("grade", "--help", "--lang", "ko")
    assert r.returncode == 0, r
    assert "사용법: python3 scripts/puzzle.py grade [pNN [--VARIANT ...]]" in r.stdout
    assert "학생이 읽는 글의 언어" in r.stdout and "--time-limit S       실행 한 번의 제한 시간(초) (기본값 30)" in r.stdout
    assert "Grade a learner's tree" not in r.stdout and "seconds per run" not in r.stdout
    assert "Grade a learner's tree" in cli("grade", "--help", env={"LANG": "ko_KR.UTF-8"}).stdout


def test_the_classroom_workflow_grades_in_the_language_asked_for(fixture_root):
    from puzzlelib import grade_export as gx
    from puzzlelib.puzzles import discover

    puzzles = discover(REPO)
    text = gx.classroom_workflow(puzzles, gr.Points(), None, "ko")
    assert "grade --classroom .github/workflows/classroom.yml --check --lang ko" in text
    assert "grade --report-only --json grade-report.json --lang ko" in text
    assert "--lang" not in gx.classroom_workflow(puzzles, gr.Points(), None)


def test_untouched_tree_graded_in_korean(tmp_path, grade_work, fresh_manifest):
    """`grade --lang ko`: the table, the failing case, the program's output and the JUnit texts in
    Korean; the JSON's verdicts and reasons stay English, its `lang` says ko."""
    needs_toolchain()
    tree = make_submission("untouched", tmp_path / "untouched")
    r, report, junit = grade(tree, "p14", "--simple", "--seed", "5", "--lang", "ko", "--manifest", fresh_manifest,
                             work=grade_work)
    assert r.returncode == 1, r
    assert report["lang"] == "ko"
    row = report["variants"][0]
    assert (row["verdict"], row["reason"]) == ("fail", "wrong answer")
    assert "mismatch: 출력 1개 중 1개가 다릅니다. 처음 다른 곳은 index 0" in row["diagnostic"]
    assert "outputs differ" not in row["diagnostic"] and "SAY {" not in row["diagnostic"]
    assert re.search(r"❌ p14 --simple: 오답, case 1/\d+에서: n=1", r.stdout), r.stdout
    assert "    다시 실행: python3 scripts/puzzle.py run p14 --simple --n 1" in r.stdout
    assert re.search(r"점수: 0/\d+점 \(0\.0%\), variant 0/1개 통과", r.stdout), r.stdout
    for english in ("at case 1 of", "    replay:", "score:", "failed at", "wrong answer", "outputs differ"):
        assert english not in r.stdout, english
    failure = junit_cases(junit)["p14 --simple"].find("failure")
    assert failure.get("type") == "fail" and failure.get("message").startswith("오답 (n=1 tpb=")
