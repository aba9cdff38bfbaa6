"""`grade` as an instructor's automation runs it: a folder of submissions graded in one command
(scores.csv, a report per student, JUnit), and the GitHub Actions template run step by step on a
solved class repository. Apart from test_grade.py so that pytest-xdist runs the two files side by
side: each grades a tree of its own and builds in its own work folder.
"""

import csv
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

from conftest import REPO, run_cli
from test_grade import (FIXTURES, SCHEMA, WORKFLOW, junit_cases, make_submission, needs_toolchain,
                        p14_points, verdicts)

from puzzlelib import grade_integrity as gi
from puzzlelib import grade_report as gr


def test_batch_mode(tmp_path):
    needs_toolchain()
    subs = tmp_path / "submissions"
    # alice: a full tree unpacked one level down, solved
    make_submission("solved", subs / "alice" / "course-main")
    # bob: only his learner file, which does not compile
    (subs / "bob" / "puzzles" / "p14").mkdir(parents=True)
    shutil.copyfile(str(FIXTURES / "compile-error" / "puzzles" / "p14" / "p14.cu"),
                    str(subs / "bob" / "puzzles" / "p14" / "p14.cu"))
    # carol: nothing at all
    (subs / "carol").mkdir()
    out_dir = tmp_path / "results"
    r = run_cli("grade", "--submissions", subs, "--pristine", REPO, "--only", "p14:simple,p14:naive",
                "--out", out_dir, "--seed", "11", "--junit", tmp_path / "batch.xml", timeout=900)
    assert r.returncode == 1, r
    with open(str(out_dir / "scores.csv"), newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["student", "p14 --naive", "p14 --simple", "total", "max_points", "percent", "problems"]
    points = p14_points()
    total = points["naive"] + points["simple"]
    body = {row[0]: row for row in rows[1:]}
    assert sorted(body) == ["alice", "bob", "carol"]
    assert body["alice"][1:6] == [str(points["naive"]), str(points["simple"]), str(total), str(total), "100.0"]
    assert body["bob"][1:6] == ["0", "0", "0", str(total), "0.0"]
    assert "build-error (compile error at puzzles/p14/p14.cu:8)" in body["bob"][6]
    assert "missing file puzzles/p14/p14.cu" in body["carol"][6]
    for student in ("alice", "bob", "carol"):
        report = json.loads((out_dir / (student + ".json")).read_text())
        gr.validate(report, SCHEMA)
        assert report["student"] == student and report["batch"] is True and report["seed"] == 11
    alice = json.loads((out_dir / "alice.json").read_text())
    assert verdicts(alice) == {"naive": "pass", "simple": "pass"}
    assert alice["tree"].endswith("course-main")
    bob = json.loads((out_dir / "bob.json").read_text())
    assert verdicts(bob) == {"naive": "build-error", "simple": "build-error"}
    assert bob["integrity"]["status"] == "ok"  # a submission of only learner files is fine
    junit = ET.parse(str(tmp_path / "batch.xml")).getroot()
    assert len(list(junit.iter("testcase"))) == 6
    assert "alice: p14 --simple" in junit_cases(junit)


# ------------------------------------------------------------------------------ the workflow template

def yaml_steps(text):
    """The job env and the steps of .github/workflows/grade.yml (yaml_doc)."""
    job = yaml_doc(text)["jobs"]["grade"]
    return job.get("env", {}), job["steps"]


def yaml_doc(text):
    """A workflow file, read with a small reader for the YAML the templates use (mappings, lists of
    mappings, `|` block scalars, plain and quoted scalars). PyYAML, when installed, must read the
    same."""
    lines = text.splitlines()

    def scalar(value):
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            return value[1:-1]
        return value

    def indent_of(line):
        return len(line) - len(line.lstrip(" "))

    def block(i, parent_indent):
        """Parse the mapping or list starting at line i (indented more than parent_indent)."""
        result = None
        while i < len(lines):
            line = lines[i]
            if not line.strip() or line.lstrip().startswith("#"):
                i += 1
                continue
            ind = indent_of(line)
            if ind <= parent_indent:
                break
            body = line.strip()
            if body.startswith("- "):
                result = [] if result is None else result
                # a list item: its first key is on the dash line
                item_indent = ind + 2
                lines[i] = " " * item_indent + body[2:]
                item, i = block(i, ind)
                result.append(item)
                continue
            key, _, rest = body.partition(":")
            result = {} if result is None else result
            rest = rest.strip()
            if rest in ("|", "|-"):
                i += 1
                chunk = []
                while i < len(lines) and (not lines[i].strip() or indent_of(lines[i]) > ind):
                    chunk.append(lines[i])
                    i += 1
                width = min(indent_of(l) for l in chunk if l.strip())
                result[key] = "\n".join(l[width:] for l in chunk).rstrip("\n") + ("\n" if rest == "|" else "")
            elif rest:
                result[key] = scalar(rest)
                i += 1
            else:
                value, i = block(i + 1, ind)
                result[key] = value
        return result, i

    doc, _ = block(0, -1)
    return doc


def test_workflow_template_structure():
    env, steps = yaml_steps(WORKFLOW.read_text(encoding="utf-8"))
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
        assert data["jobs"]["grade"]["steps"] == steps
        assert data["jobs"]["grade"]["env"] == env
        assert data["jobs"]["grade"]["runs-on"] == "ubuntu-latest"  # CPU only
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/checkout@") for u in uses)
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload.get("if", "").startswith("always()") and "grade-report.xml" in upload["with"]["path"]
    install = next(s for s in steps if "apt-get install" in s.get("run", ""))
    assert "cmake" in install["run"] and "g++" in install["run"]
    grade_step = next(s for s in steps if "scripts/puzzle.py grade" in s.get("run", ""))
    assert "--junit grade-report.xml" in grade_step["run"] and "--work-dir" in grade_step["run"]
    # The cache is restored before grading and saved after it even when grading failed (a failing
    # variant fails the job, and actions/cache alone saves only for a job that succeeds).
    names = [s.get("name") for s in steps]
    restore = next(s for s in steps if s.get("uses", "").startswith("actions/cache/restore@"))
    save = next(s for s in steps if s.get("uses", "").startswith("actions/cache/save@"))
    assert names.index(restore["name"]) < names.index(grade_step["name"]) < names.index(save["name"])
    assert restore["with"]["path"] == save["with"]["path"] == "~/.cache/puzzle-grade"
    assert restore["with"]["key"] == save["with"]["key"]
    assert save["if"].startswith("always()") and "steps.%s.outputs.cache-hit != 'true'" % restore["id"] in save["if"]
    assert not step_condition(save["if"], {"class": {"grade": "true"}, "cache": {"cache-hit": "true"}}, failed=True)
    assert step_condition(save["if"], {"class": {"grade": "true"}, "cache": {}}, failed=True)
    assert '"$HOME/.cache/puzzle-grade"' in grade_step["run"]


def step_condition(expression, outputs, failed):
    """GitHub's `if:` for the forms the template uses: always(), steps.ID.outputs.NAME == 'v' (or !=),
    joined with &&. Without always(), a step runs only when no earlier step failed."""
    if not expression:
        return not failed
    result, forced = True, False
    for term in [t.strip() for t in expression.split("&&")]:
        m = re.match(r"^steps\.([\w-]+)\.outputs\.([\w-]+) (==|!=) '([^']*)'$", term)
        if term == "always()":
            forced = True
        elif m:
            equal = outputs.get(m.group(1), {}).get(m.group(2)) == m.group(4)
            result = result and (equal if m.group(3) == "==" else not equal)
        else:
            raise AssertionError("the test's `if:` reader does not know %r" % term)
    return result and (forced or not failed)


def run_workflow(repo, tmp_path, env_overrides=None):
    """Run the template's steps in order in `repo`, as GitHub runs them (bash -e; with pipefail
    when `shell: bash`; step outputs through $GITHUB_OUTPUT; `if:` conditions). `uses:` steps are
    GitHub actions (checkout, cache, upload) and the install step needs sudo and the network: those
    are skipped. Returns the names of the steps that ran."""
    env_job, steps = yaml_steps(WORKFLOW.read_text(encoding="utf-8"))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.pop("PUZZLES_ROOT", None)
    env.update(env_job)
    env.update({"HOME": str(home), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
                "GITHUB_WORKSPACE": str(repo), "CI": "true", "PYTHONIOENCODING": "utf-8"})
    env.update(env_overrides or {})
    ran, outputs, failed = [], {}, False
    for number, step in enumerate(steps):
        if not step_condition(step.get("if"), outputs, failed):
            continue
        if "uses" in step or "sudo " in step.get("run", ""):
            continue
        shell = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"] if step.get("shell") == "bash" \
            else ["bash", "-e", "-c"]
        output_file = tmp_path / ("github_output_%d" % number)
        output_file.write_text("")
        proc = subprocess.run(shell + [step["run"]], cwd=str(repo),
                              env=dict(env, GITHUB_OUTPUT=str(output_file), **step.get("env", {})),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
        assert proc.returncode == 0, "step %r failed:\n%s" % (step.get("name"), proc.stdout)
        if step.get("id"):
            outputs[step["id"]] = dict(l.split("=", 1) for l in output_file.read_text().splitlines() if "=" in l)
        ran.append(step.get("name"))
    return ran


def test_workflow_steps_pass_on_the_solved_fixture(tmp_path):
    """The template's steps, run locally in order, pass on a solved class repository (a copy
    without solutions/). By default the job grades p14 only (PUZZLES_GRADE_ONLY), to keep this test
    fast and independent of puzzles still in progress; PUZZLES_TEST_WORKFLOW_ALL=1 grades all."""
    needs_toolchain()
    repo = make_submission("solved", tmp_path / "class-repo")
    gi.write_manifest(repo)  # what the instructor does after setting up the class repository
    overrides = {} if os.environ.get("PUZZLES_TEST_WORKFLOW_ALL") else {"PUZZLES_GRADE_ONLY": "p14"}
    ran = run_workflow(repo, tmp_path, overrides)
    assert ran == ["Is this a class repository?", "Grade", "Summary"]
    junit = ET.parse(str(repo / "grade-report.xml")).getroot()
    assert int(junit.get("tests")) >= 5 and junit.get("failures") == "0" and junit.get("errors") == "0"
    report = json.loads((repo / "grade-report.json").read_text())
    gr.validate(report, SCHEMA)
    assert report["passed"] and report["mode"] == "manifest" and report["integrity"]["status"] == "ok"
    assert "score:" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "home" / ".cache" / "puzzle-grade" / "build" / "CMakeCache.txt").is_file()  # what CI caches


def test_workflow_does_nothing_in_the_course_repository(tmp_path):
    repo = tmp_path / "course"
    (repo / "solutions").mkdir(parents=True)
    assert run_workflow(repo, tmp_path) == ["Is this a class repository?"]
