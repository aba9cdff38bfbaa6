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
    assert d["interleaved"] is False, d  # found where blocks run one after another
    assert "cudasim: error: " + d["message"] in proc.stdout


@pytest.mark.parametrize("plant, flag, code, kind", PLANTS, ids=[p[0] for p in PLANTS])
def test_checker_result_carries_the_kind(plant, flag, code, kind):
    binary = build_bin("planted_p14_%s_cpu" % plant)
    checker = build_bin("p14_checker")
    outcome = grade_run.run_checked(checker, binary, ["--variant", flag[2:]] + CASE, 120)
    assert outcome.result and outcome.result.get("checked"), outcome.lines
    assert outcome.diagnosis and outcome.diagnosis["kind"] == kind, outcome.result
    assert outcome.kind == ("race" if code == 3 else "error")


# A look-back that also adds the tiles behind the nearest inclusive prefix: how wrong it is depends on
# which tiles had published that prefix, so the 'random' schedule, whose blocks take turns side by
# side, writes other values than the 'forward' one. The case is the first that `check --seed 1` fails.
LOOKBACK = "single_pass_look_back_past_inclusive"
LOOKBACK_CASE = ["--variant", "single-pass", "--n", "100003", "--tpb", "32", "--seed", "2010943825"]
BETWEEN_BLOCKS = "race: result depends on how blocks interleave"


def test_a_result_that_differs_because_blocks_interleave_is_diagnosed_as_such():
    binary = build_bin("planted_p14_%s_cpu" % LOOKBACK)
    proc = subprocess.run([str(binary)] + LOOKBACK_CASE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120)
    results = [r for r in (parse_result_line(l)[1] for l in proc.stdout.splitlines()) if r is not None]
    assert proc.returncode == 3 and results, proc.stdout
    d = results[-1]["diagnosis"]
    assert d["kind"] == "race_schedule" and d["interleaved"] is True, d
    assert explain.diagnosis_reason(d) == BETWEEN_BLOCKS
    # Under `grade` the diagnosis crosses to the checker as a record: the field goes with it.
    outcome = grade_run.run_checked(build_bin("p14_checker"), binary, LOOKBACK_CASE, 120)
    assert outcome.diagnosis and outcome.diagnosis["interleaved"] is True, outcome.result
    assert (outcome.kind, outcome.reason) == ("race", BETWEEN_BLOCKS)


def test_check_names_blocks_that_interleave_as_the_cause_in_its_one_line_reason():
    """`check`'s reason of a result that only blocks side by side change is the between-blocks one,
    not the within-block 'thread order' (issue 21), in English and in Korean."""
    from conftest import run_cli
    binary = build_bin("planted_p14_%s_cpu" % LOOKBACK)
    args = ["check", "p14", "--single-pass", "--binary", binary, "--backend", "cpu", "--seed", "1"]
    r = run_cli(*args, timeout=300)
    assert r.returncode == 1, r
    assert re.search(r"^\S+ p14 --single-pass: race \(result depends on how blocks interleave\), failed at case \d+",
                     r.stdout, re.M), r.stdout
    assert "depends on thread order" not in r.stdout and "without a barrier between them; the answer" not in r.stdout, r.stdout
    assert "Running blocks side by side gave a different answer than running them one at a time" in r.stdout, r.stdout
    ko = run_cli(*(args + ["--lang", "ko"]), timeout=300)
    assert "Race Condition (결과가 block들이 번갈아 실행되는 방식에 따라 달라짐)" in ko.stdout, ko.stdout
