"""`new`: an instructor scaffolds a puzzle, fills it in and grades it (issue 12, item 6).

Built for real in a copy of the repository: `new p90` writes every file a puzzle needs, the
solution prints its own expected/ file, the learner's skeleton fails, and once the learner's file
holds the solution `grade` passes it, with the manifest that `new` rewrote. `new --refresh` keeps
a backup of the learner's file and regenerates the skeleton. The Korean page it writes is Korean
outside its code, its placeholder comments and the comments of its commands included (issue 21).
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HANGUL
from markdown_pages import english_only, parse

REPO = Path(__file__).resolve().parents[2]
NAME = "p90"


def copy_tree(dest: Path) -> Path:
    """The repository with one puzzle (p14), its docs and grading files, and no build folder."""
    root = dest / "repo"
    root.mkdir()
    for name in ("CMakeLists.txt", "README.md", "README.ko.md", "pixi.toml"):
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
    assert "[p90](puzzles/p90/README.md) ([한국어](puzzles/p90/README.ko.md)) | Block sum | `--block` |" in (
        root / "README.md").read_text(encoding="utf-8")
    assert "[p90](puzzles/p90/README.ko.md) ([English](puzzles/p90/README.md)) | Block sum | `--block` |" in (
        root / "README.ko.md").read_text(encoding="utf-8")
    assert "p90" in (root / "pixi.toml").read_text(encoding="utf-8")
    assert "puzzles/p90/driver.cpp" in (root / "grading/protected.sha256").read_text(encoding="utf-8")
    assert "Adding your own puzzle" in output


def korean_page_problems(text: str) -> list:
    """Why a scaffolded README.ko.md is not Korean where a translator writes: its prose, its comments
    (the placeholders that say what to write) and the comments of its commands."""
    page = parse(text)
    problems = ["English-only prose: %r" % p for p in english_only(page)]
    comments = re.findall(r"<!--(.*?)-->", text, re.S)
    problems += ["an English placeholder: %r" % c for c in comments if not HANGUL.search(c)]
    if not comments:
        problems.append("no placeholder comments")
    commands = [l for block in page.code for l in block.splitlines() if "puzzle.py" in l]
    if not commands:
        problems.append("no commands")
    problems += ["an English comment in the commands: %r" % l for l in commands
                 if "#" in l and not HANGUL.search(l.split("#", 1)[1])]
    return problems


def english_page_problems(text: str) -> list:
    """The English page holds no Hangul but in its link to the Korean page."""
    return ["Hangul on the English page: %r" % l for l in text.splitlines()
            if HANGUL.search(l) and "README.ko.md" not in l]


def test_the_korean_page_is_korean_and_the_english_page_english(scaffolded):
    root, _ = scaffolded
    korean = (root / "puzzles/p90/README.ko.md").read_text(encoding="utf-8")
    assert not korean_page_problems(korean), "\n".join(korean_page_problems(korean))
    english = (root / "puzzles/p90/README.md").read_text(encoding="utf-8")
    assert not english_page_problems(english), "\n".join(english_page_problems(english))
    assert "--block" in korean and "--block" in english


def test_the_templates_filled_for_a_real_puzzle_keep_their_languages():
    # Without a build: the templates filled from p14's declaration (six variants), as `new` fills them.
    sys.path.insert(0, str(REPO / "scripts"))
    from puzzlelib import scaffold

    values = {"PUZZLE": "p14", "NUMBER": "14", "TITLE": "Prefix sum"}
    pages = {page: scaffold.fill((scaffold.TEMPLATES / page).read_text(encoding="utf-8"),
                                 dict(values, **scaffold.readme_values(REPO, "p14", page)))
             for page in ("README.md", "README.ko.md")}
    assert not korean_page_problems(pages["README.ko.md"]), "\n".join(korean_page_problems(pages["README.ko.md"]))
    assert not english_page_problems(pages["README.md"]), "\n".join(english_page_problems(pages["README.md"]))
    # A check that cannot fail is no check: the English page as the Korean one fails it.
    assert korean_page_problems(pages["README.md"])


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
    work = tmp_path / "work"  # both grades use one build: the second compiles only the learner's file
    r = cli(root, "grade", "--tree", root, "--only", NAME, "--seed", "5", "--manifest", manifest, "--json", report,
            "--work-dir", work)
    assert r.returncode == 1, r.stdout
    rows = json.loads(report.read_text(encoding="utf-8"))["variants"]
    assert [(v["puzzle"], v["variant"], v["verdict"]) for v in rows] == [("p90", "block", "fail")]

    learner = root / "puzzles" / "p90" / "p90.cu"
    shutil.copyfile(str(root / "solutions" / "p90" / "p90.cu"), str(learner))  # the learner solves it
    report = tmp_path / "solved.json"
    r = cli(root, "grade", "--tree", root, "--only", NAME, "--seed", "5", "--manifest", manifest, "--json", report,
            "--work-dir", work)
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
