"""`new`: an instructor scaffolds a puzzle, fills it in and grades it (issue 12, item 6).

Built for real in a copy of the repository: `new p90` writes every file a puzzle needs, the
solution prints its own expected/ file, the learner's skeleton fails, and once the learner's file
holds the solution `grade` passes it, with the manifest that `new` rewrote. `new --refresh` keeps
a backup of the learner's file and regenerates the skeleton.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NAME = "p90"


def copy_tree(dest: Path) -> Path:
    """The repository with one puzzle (p14), its docs and grading files, and no build folder."""
    root = dest / "repo"
    root.mkdir()
    for name in ("CMakeLists.txt", "README.md", "pixi.toml"):
        shutil.copy2(str(REPO / name), str(root / name))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("harness", "scripts", "grading", "docs"):
        shutil.copytree(str(REPO / folder), str(root / folder), ignore=ignore)
    for folder in ("puzzles", "solutions"):
        shutil.copytree(str(REPO / folder / "p14"), str(root / folder / "p14"), ignore=ignore)
    (root / "tests" / "python").mkdir(parents=True)
    shutil.copy2(str(REPO / "tests" / "python" / "driver_helpers.py"), str(root / "tests" / "python"))
    return root


def cli(root: Path, *args, timeout=900):
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    for name in ("PUZZLES_ROOT", "PUZZLES_BUILD_DIR"):
        env.pop(name, None)  # the copy's own scripts/ and build/
    return subprocess.run([sys.executable, str(root / "scripts" / "puzzle.py")] + [str(a) for a in args],
                          cwd=str(root), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                          universal_newlines=True, encoding="utf-8", timeout=timeout)


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    if not shutil.which("cmake") or not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("needs cmake and a C++ compiler")
    root = copy_tree(tmp_path_factory.mktemp("scaffold"))
    r = cli(root, "new", NAME, "--title", "Block sum")
    assert r.returncode == 0, r.stdout
    return root, r.stdout


def test_new_writes_every_file_a_puzzle_needs(scaffolded):
    root, output = scaffolded
    for rel in ("solutions/p90/p90.cu", "puzzles/p90/p90.cu", "puzzles/p90/driver.cpp", "puzzles/p90/puzzle.json",
                "puzzles/p90/expected/block.txt", "puzzles/p90/README.md", "puzzles/p90/README.ko.md",
                "tests/python/test_p90_content.py"):
        assert (root / rel).is_file(), rel
    spec = json.loads((root / "puzzles/p90/puzzle.json").read_text(encoding="utf-8"))
    assert spec["title"] == "Block sum" and list(spec["variants"]) == ["block"]
    # expected/ is what the solution printed for the show input
    expected = (root / "puzzles/p90/expected/block.txt").read_text(encoding="utf-8").splitlines()
    assert [l.split(":")[0] for l in expected] == ["config", "input", "out", "expected"]
    out_line = next(l for l in expected if l.startswith("out:"))
    assert out_line.split(":", 1)[1].strip() == next(l for l in expected if l.startswith("expected:")).split(":", 1)[1].strip()
    # the skeleton is the solution without its FILL regions: only lines removed
    solution = (root / "solutions/p90/p90.cu").read_text(encoding="utf-8").splitlines()
    skeleton = (root / "puzzles/p90/p90.cu").read_text(encoding="utf-8").splitlines()
    assert len(skeleton) < len(solution) and all(l in solution for l in skeleton)
    assert any("FILL ME IN" in l for l in skeleton)
    # the tables that list puzzles read it
    assert "[p90](puzzles/p90/README.md)" in (root / "README.md").read_text(encoding="utf-8")
    assert "p90" in (root / "pixi.toml").read_text(encoding="utf-8")
    assert "puzzles/p90/driver.cpp" in (root / "grading/protected.sha256").read_text(encoding="utf-8")
    assert "Adding your own puzzle" in output


def test_list_and_check_find_the_puzzle(scaffolded):
    root, _ = scaffolded
    r = cli(root, "list", "--no-status")
    assert r.returncode == 0 and "p90" in r.stdout and "--block" in r.stdout, r.stdout
    r = cli(root, "check", NAME, "--solution", "--seed", "3")
    assert r.returncode == 0, r.stdout
    r = cli(root, "check", NAME, "--seed", "3")  # the unsolved skeleton
    assert r.returncode == 1 and "p90 --block" in r.stdout, r.stdout


def test_the_scaffolded_content_tests_pass(scaffolded):
    root, _ = scaffolded
    env = dict(os.environ, PUZZLES_BUILD_DIR=str(root / "build"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/python/test_p90_content.py"],
                       cwd=str(root), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       universal_newlines=True, timeout=600)
    assert r.returncode == 0 and " passed" in r.stdout and "skipped" not in r.stdout, r.stdout


def test_grade_fails_the_skeleton_and_passes_the_filled_in_file(scaffolded, tmp_path):
    root, _ = scaffolded
    manifest = root / "grading" / "protected.sha256"
    report = tmp_path / "unsolved.json"
    r = cli(root, "grade", "--tree", root, "--only", NAME, "--seed", "5", "--manifest", manifest, "--json", report)
    assert r.returncode == 1, r.stdout
    rows = json.loads(report.read_text(encoding="utf-8"))["variants"]
    assert [(v["puzzle"], v["variant"], v["verdict"]) for v in rows] == [("p90", "block", "fail")]

    learner = root / "puzzles" / "p90" / "p90.cu"
    shutil.copyfile(str(root / "solutions" / "p90" / "p90.cu"), str(learner))  # the learner solves it
    report = tmp_path / "solved.json"
    r = cli(root, "grade", "--tree", root, "--only", NAME, "--seed", "5", "--manifest", manifest, "--json", report)
    assert r.returncode == 0, r.stdout
    rows = json.loads(report.read_text(encoding="utf-8"))["variants"]
    assert [(v["puzzle"], v["variant"], v["verdict"]) for v in rows] == [("p90", "block", "pass")]


def test_refresh_keeps_a_backup_and_regenerates_the_skeleton(scaffolded):
    root, _ = scaffolded
    learner = root / "puzzles" / "p90" / "p90.cu"
    before = learner.read_text(encoding="utf-8")
    r = cli(root, "new", NAME, "--refresh")
    assert r.returncode == 0, r.stdout
    backups = sorted(learner.parent.glob("p90.cu.bak-*"))
    assert backups and backups[-1].read_text(encoding="utf-8") == before
    assert "FILL ME IN" in learner.read_text(encoding="utf-8")
    # the backup is the learner's own file, not a protected one: the manifest stays current
    r = cli(root, "grade", "--check-manifest")
    assert r.returncode == 0, r.stdout
