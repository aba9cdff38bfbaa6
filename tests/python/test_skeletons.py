"""Tests for scripts/skeletons.py: the learners' files are generated from the solutions."""

import ast
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "skeletons.py"


def skeletons(*args, root=None):
    cmd = [sys.executable, str(SCRIPT)] + list(args)
    if root is not None:
        cmd += ["--root", str(root)]
    proc = subprocess.run(cmd, cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    return proc.returncode, proc.stdout + proc.stderr


def repo_pairs():
    out = []
    for sol in sorted((REPO / "solutions").glob("*/*.cu")):
        skel = REPO / "puzzles" / sol.parent.name / sol.name
        if skel.parent.is_dir():
            out.append((sol, skel))
    return out


SOLUTION = textwrap.dedent("""\
    #include <cuda_runtime.h>
    __global__ void k(const int* a, int* out, int n) {
      const int i = threadIdx.x;
      // FILL ME IN (roughly 2 lines)
      // a comment does not count

      if (i < n)
        out[i] = a[i];
      // END FILL
    }
    void launch(const int* a, int* out, int n) { k<<<1, n>>>(a, out, n); }
    """)

SKELETON = textwrap.dedent("""\
    #include <cuda_runtime.h>
    __global__ void k(const int* a, int* out, int n) {
      const int i = threadIdx.x;
      // FILL ME IN (roughly 2 lines)
    }
    void launch(const int* a, int* out, int n) { k<<<1, n>>>(a, out, n); }
    """)


@pytest.fixture
def root(tmp_path):
    """A repository root with one fixture puzzle, p99, whose skeleton is up to date."""
    (tmp_path / "solutions" / "p99").mkdir(parents=True)
    (tmp_path / "puzzles" / "p99").mkdir(parents=True)
    (tmp_path / "solutions" / "p99" / "p99.cu").write_text(SOLUTION)
    (tmp_path / "puzzles" / "p99" / "p99.cu").write_text(SKELETON)
    return tmp_path


# ---- the repository -------------------------------------------------------------------------

def test_repository_skeletons_are_up_to_date():
    rc, out = skeletons("--check")
    assert rc == 0, out


def test_repository_has_p14():
    assert (REPO / "solutions" / "p14" / "p14.cu", REPO / "puzzles" / "p14" / "p14.cu") in repo_pairs()


@pytest.mark.parametrize("pair", repo_pairs(), ids=[p[1].parent.name for p in repo_pairs()])
def test_solving_only_adds_lines(pair):
    """The skeleton's lines are a subsequence of the solution's lines."""
    sol, skel = (p.read_text(encoding="utf-8").splitlines() for p in pair)
    it = iter(sol)
    missing = [line for line in skel if not any(line == s for s in it)]
    assert not missing, "skeleton lines not found in order in the solution: %r" % missing[:3]
    assert any("FILL ME IN" in l for l in skel)
    assert not any("END FILL" in l for l in skel)


def test_tampered_copy_of_the_repository_is_detected(tmp_path):
    for sol, skel in repo_pairs():
        for src in (sol, skel):
            dst = tmp_path / src.relative_to(REPO)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(str(src), str(dst))
    rc, out = skeletons("--check", root=tmp_path)
    assert rc == 0, out
    skel = tmp_path / "puzzles" / "p14" / "p14.cu"
    skel.write_text(skel.read_text().replace("// FILL ME IN", "  x = 1;\n  // FILL ME IN", 1))
    rc, out = skeletons("--check", root=tmp_path)
    assert rc == 1
    assert "puzzles/p14/p14.cu differs" in out


def test_script_uses_only_the_standard_library():
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add((node.module or "").split(".")[0])
    stdlib = getattr(sys, "stdlib_module_names", {"argparse", "re", "sys", "pathlib", "os"})
    assert modules <= set(stdlib), modules - set(stdlib)


# ---- generation and checking on a fixture root ----------------------------------------------

def test_check_passes_when_up_to_date(root):
    rc, out = skeletons("--check", root=root)
    assert rc == 0, out


def test_generate_writes_the_skeleton(root):
    (root / "puzzles" / "p99" / "p99.cu").unlink()
    rc, out = skeletons("--check", root=root)
    assert rc == 1 and "missing" in out
    rc, out = skeletons(root=root)
    assert rc == 0, out
    assert (root / "puzzles" / "p99" / "p99.cu").read_text() == SKELETON
    rc, out = skeletons(root=root)  # idempotent
    assert rc == 0 and "wrote" not in out


def test_tampered_skeleton_is_detected(root):
    skel = root / "puzzles" / "p99" / "p99.cu"
    skel.write_text(SKELETON.replace("// FILL ME IN (roughly 2 lines)", "// FILL ME IN (roughly 2 lines)\n  out[i] = 0;"))
    rc, out = skeletons("--check", root=root)
    assert rc == 1
    assert "puzzles/p99/p99.cu differs" in out and "line 5" in out
    assert skel.read_text() != SKELETON  # --check writes nothing


@pytest.mark.parametrize("count", [1, 3, 17])
def test_wrong_line_count_is_detected(root, count):
    sol = root / "solutions" / "p99" / "p99.cu"
    sol.write_text(SOLUTION.replace("roughly 2 lines", "roughly %d line%s" % (count, "" if count == 1 else "s")))
    rc, out = skeletons("--check", root=root)
    assert rc == 1
    assert "the region has 2" in out and "p99.cu:4" in out
    rc, out = skeletons(root=root)  # generating refuses too
    assert rc == 1


def test_fix_counts_corrects_n(root):
    sol = root / "solutions" / "p99" / "p99.cu"
    sol.write_text(SOLUTION.replace("roughly 2 lines", "roughly 9 lines"))
    rc, out = skeletons("--fix-counts", root=root)
    assert rc == 0, out
    assert sol.read_text() == SOLUTION
    rc, out = skeletons("--check", root=root)
    assert rc == 0, out


@pytest.mark.parametrize("broken,message", [
    (SOLUTION.replace("  // END FILL\n", ""), "never closed"),
    (SOLUTION.replace("  // FILL ME IN (roughly 2 lines)\n", ""), "END FILL without a FILL ME IN"),
    (SOLUTION.replace("  if (i < n)\n", "  // FILL ME IN (roughly 1 line)\n  if (i < n)\n"), "do not nest"),
    (SOLUTION.replace("(roughly 2 lines)", ""), "malformed marker"),
    (SOLUTION.replace("// END FILL", "// END FILL here"), "malformed marker"),
    (SOLUTION.replace("// END FILL", "// END-FILL"), "malformed marker"),
    (SOLUTION.replace("  if (i < n)\n    out[i] = a[i];\n", ""), "no solution line"),
])
def test_malformed_markers_are_detected(root, broken, message):
    assert broken != SOLUTION
    (root / "solutions" / "p99" / "p99.cu").write_text(broken)
    rc, out = skeletons("--check", root=root)
    assert rc == 1
    assert message in out, out


def test_puzzle_without_solution_is_left_alone(root):
    (root / "puzzles" / "p98").mkdir()
    (root / "puzzles" / "p98" / "p98.cu").write_text("// hand-written\n")
    rc, out = skeletons("--check", root=root)
    assert rc == 0, out
    rc, out = skeletons(root=root)
    assert (root / "puzzles" / "p98" / "p98.cu").read_text() == "// hand-written\n"


def test_regenerating_keeps_a_backup_of_the_learners_file(root):
    skel = root / "puzzles" / "p99" / "p99.cu"
    work = SKELETON.replace("// FILL ME IN (roughly 2 lines)", "// FILL ME IN (roughly 2 lines)\n  out[i] = a[i];  // mine")
    skel.write_text(work, encoding="utf-8")
    code, out = skeletons(root=root)
    assert code == 0, out
    assert skel.read_text(encoding="utf-8") == SKELETON
    backups = list(skel.parent.glob("p99.cu.bak-*"))
    assert len(backups) == 1 and backups[0].read_text(encoding="utf-8") == work
    assert "kept the previous" in out
