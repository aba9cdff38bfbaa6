"""The simulator's kinds of error (harness/sim/src/diagnosis.h) and explain.py's reasons for them,
and the diagnosis a planted bug's driver puts into its RESULT line, alone and under the checker."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from puzzlelib import explain, grade_run
from puzzlelib.driver import parse_result_line

REPO = Path(__file__).resolve().parents[2]
HEADER = REPO / "harness" / "sim" / "src" / "diagnosis.h"


def simulator_kinds():
    """The names of the X-macro list CUDASIM_DIAGNOSIS_KINDS, in order."""
    return re.findall(r"^\s*X\((\w+),\s*[34],", HEADER.read_text(encoding="utf-8"), re.M)


def test_every_kind_has_a_reason():
    kinds = simulator_kinds()
    assert len(kinds) > 20 and len(set(kinds)) == len(kinds)
    assert sorted(set(kinds) - set(explain.REASONS)) == [], "kinds without a reason in explain.REASONS"
    assert sorted(set(explain.REASONS) - set(kinds)) == [], "reasons of kinds the simulator does not have"


def test_kinds_are_snake_case():
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", k) for k in simulator_kinds())


def build_bin(name):
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree to run the planted binaries")
    path = Path(build) / "bin" / name
    if not path.exists():
        pytest.skip("%s was not built" % path)
    return path


# Planted bugs of tests/planted/p14 and the kind the simulator must name (sites: where in p14.cu).
PLANTS = [
    ("simple_barrier_in_if", "--simple", 4, "barrier_divergence"),
    ("simple_no_read_write_split", "--simple", 3, "race_shared"),
    ("double_buffer_plus_equals", "--double-buffer", 4, "uninit_shared"),
]
CASE = ["--n", "30", "--tpb", "32", "--seed", "1"]


@pytest.mark.parametrize("plant, flag, code, kind", PLANTS, ids=[p[0] for p in PLANTS])
def test_planted_bug_result_carries_the_kind(plant, flag, code, kind):
    binary = build_bin("planted_p14_%s_cpu" % plant)
    proc = subprocess.run([str(binary), "--variant", flag[2:]] + CASE, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120)
    results = [parse_result_line(l)[1] for l in proc.stdout.splitlines()]
    results = [r for r in results if r is not None]
    assert proc.returncode == code and results, proc.stdout
    d = results[-1]["diagnosis"]
    assert d["kind"] == kind, d
    assert d["block"] is not None and all(re.search(r"\.cu:\d+$", s) for s in d["sites"]), d
    assert "cudasim: error: " + d["message"] in proc.stdout


@pytest.mark.parametrize("plant, flag, code, kind", PLANTS, ids=[p[0] for p in PLANTS])
def test_checker_result_carries_the_kind(plant, flag, code, kind):
    binary = build_bin("planted_p14_%s_cpu" % plant)
    checker = build_bin("p14_checker")
    outcome = grade_run.run_checked(checker, binary, ["--variant", flag[2:]] + CASE, 120)
    assert outcome.result and outcome.result.get("checked"), outcome.lines
    assert outcome.diagnosis and outcome.diagnosis["kind"] == kind, outcome.result
    assert outcome.kind == ("race" if code == 3 else "error")
