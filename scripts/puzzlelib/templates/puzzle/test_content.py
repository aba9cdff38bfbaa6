"""Content tests for puzzle @PUZZLE@ (scaffolded by `python3 scripts/puzzle.py new`): every variant
of puzzles/@PUZZLE@/puzzle.json has an expected/ file, the solution prints exactly it for the show
input and passes the checker's sweep, and the unsolved skeleton fails without crashing. Add the
puzzle's own tests here (test_p13_content.py is an example).

Tests that run binaries need PUZZLES_BUILD_DIR (a build tree with @PUZZLE@_solution_cpu and
@PUZZLE@_cpu in bin/) and are skipped without it.
"""

import json
import sys
from pathlib import Path

import pytest

from driver_helpers import binary, result, run

REPO = Path(__file__).resolve().parents[2]
PUZZLE = REPO / "puzzles" / "@PUZZLE@"
SPEC = json.loads((PUZZLE / "puzzle.json").read_text(encoding="utf-8"))
VARIANTS = list(SPEC["variants"])
SHOW_LINES = ("config:", "input:", "out:", "expected:")

sys.path.insert(0, str(REPO / "scripts"))
from puzzlelib.puzzles import load_puzzle  # noqa: E402


def show_args(variant):
    n, tpb = load_puzzle(PUZZLE).variants[variant].show_case()
    return ["--variant", variant, "--n", n, "--tpb", tpb, "--show"]


def test_expected_files_cover_exactly_the_variants():
    assert sorted(p.stem for p in (PUZZLE / "expected").glob("*.txt")) == sorted(VARIANTS)


@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_show_matches_expected(variant):
    rc, out = run(binary("@PUZZLE@_solution_cpu"), *show_args(variant))
    assert rc == 0, out
    got = [l for l in out.splitlines() if l.startswith(SHOW_LINES)]
    assert got == (PUZZLE / "expected" / (variant + ".txt")).read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_passes_the_sweep(variant):
    sol = binary("@PUZZLE@_solution_cpu")
    for n, tpb in load_puzzle(PUZZLE).variants[variant].sweep("cpu", seed=1, quick=True):
        rc, out = run(sol, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", 1)
        assert rc == 0 and result(out)["verdict"] == "pass", out


@pytest.mark.parametrize("variant", VARIANTS)
def test_skeleton_fails_cleanly(variant):
    rc, out = run(binary("@PUZZLE@_cpu"), *show_args(variant))
    assert rc == 1 and result(out)["verdict"] == "fail", out
