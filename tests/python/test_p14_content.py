"""Content tests for puzzle p14 (prefix sum): the solution's show output matches
puzzles/p14/expected/, every variant of the solution passes edge and random sizes, the unsolved
skeleton fails cleanly, and the lesson files cover every variant.

Tests that run binaries need PUZZLES_BUILD_DIR (a build tree with p14_solution_cpu and p14_cpu
in bin/) and are skipped without it.
"""

import json
import re
from pathlib import Path

import pytest

from driver_helpers import binary, result, run


REPO = Path(__file__).resolve().parents[2]
PUZZLE = REPO / "puzzles" / "p14"
SPEC = json.loads((PUZZLE / "puzzle.json").read_text(encoding="utf-8"))
VARIANTS = list(SPEC["variants"])
SHOW_LINES = ("config:", "input:", "out:", "expected:")
SEEDS = (1, 2, 3)


def n_limit(variant, tpb):
    m = SPEC["variants"][variant]["max_n"]
    if m is None:
        return None
    if isinstance(m, int):
        return m
    factor = re.match(r"^\s*(?:(\d+)\s*\*\s*)?tpb\s*$", m)
    return int(factor.group(1) or 1) * tpb


def sweep(variant):
    """(n, tpb) pairs: 1, tpb-1, tpb, tpb+1 and 3*tpb+5 for every tpb, where the variant allows."""
    cases = []
    for tpb in SPEC["variants"][variant]["tpb"]:
        limit = n_limit(variant, tpb)
        for n in (1, tpb - 1, tpb, tpb + 1, 3 * tpb + 5):
            if n >= 1 and (limit is None or n <= limit) and (n, tpb) not in cases:
                cases.append((n, tpb))
    return cases


def show_args(variant):
    show = SPEC["variants"][variant]["show"]
    return ["--variant", variant, "--n", show["n"], "--tpb", show["tpb"], "--show"]


# ---- the declaration ------------------------------------------------------------------------

def test_declaration_has_title_summary_and_the_six_variants():
    assert SPEC["title"].strip() and SPEC["summary"].strip()
    assert VARIANTS == ["naive", "simple", "double-buffer", "brent-kung", "complete", "single-pass"]
    for name, v in SPEC["variants"].items():
        assert v["summary"].strip(), name
        assert {"n", "tpb"} <= set(v["show"]), name
        assert any(t in v["tpb"] for t in (8, 32)) and 256 in v["tpb"] and 1024 in v["tpb"], name
    assert SPEC["variants"]["complete"]["large_n"] == {"cpu": 1048576, "gpu": 16777216}
    assert SPEC["variants"]["naive"]["max_n"] == 4096


def test_brent_kung_sweeps_only_powers_of_two():
    for tpb in SPEC["variants"]["brent-kung"]["tpb"]:
        assert tpb & (tpb - 1) == 0, tpb
    assert "power-of-two" in SPEC["variants"]["brent-kung"]["summary"]


def test_expected_files_cover_exactly_the_variants():
    files = sorted(p.stem for p in (PUZZLE / "expected").glob("*.txt"))
    assert files == sorted(VARIANTS)
    for name in VARIANTS:
        lines = (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines()
        assert [l.split(":")[0] + ":" for l in lines] == list(SHOW_LINES), name
        out = lines[2].split(":", 1)[1].strip()
        expected = lines[3].split(":", 1)[1].strip()
        assert out == expected, name


def test_show_values_follow_the_lessons():
    def values(name, key):
        for line in (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines():
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
    assert values("simple", "out") == "[0, 1, 3, 6, 10, 15, 21, 28]"  # inclusive
    assert values("naive", "out") == "[0, 1, 3, 6, 10, 15, 21, 28]"
    assert values("double-buffer", "out") == "[0, 0, 1, 3, 6, 10, 15, 21]"  # exclusive
    assert values("brent-kung", "out") == "[0, 0, 1, 3, 6, 10, 15, 21]"
    assert "blocks = 3" in values("complete", "config") and "levels = 2" in values("complete", "config")
    assert values("single-pass", "config") == "SIZE = 1200, TPB = 32, tiles = 3"  # the last tile partial


def test_single_pass_tile_size_agrees_with_the_solution():
    # driver.cpp prints `tiles` from its own copy of the ints per thread; p14.cu's kChunks decides.
    sol = (REPO / "solutions" / "p14" / "p14.cu").read_text(encoding="utf-8")
    chunks = int(re.search(r"constexpr int kChunks = (\d+);", sol).group(1))
    driver = (PUZZLE / "driver.cpp").read_text(encoding="utf-8")
    assert "constexpr long long kSinglePassPerThread = %d;" % (4 * chunks) in driver
    for tpb in SPEC["variants"]["single-pass"]["tpb"]:
        assert tpb % 32 == 0, tpb


def test_single_pass_solution_many_tiles_and_large_n():
    sol = binary("p14_solution_cpu")
    v = SPEC["variants"]["single-pass"]
    for n, tpb in [tuple(c) for c in v["extra_cases"]] + [(v["large_n"]["cpu"], max(v["tpb"]))]:
        for seed in (9, 10):
            rc, out = run(sol, "--variant", "single-pass", "--n", n, "--tpb", tpb, "--seed", seed)
            assert rc == 0 and result(out)["verdict"] == "pass", out
            assert "tiles = %d" % -(-n // (16 * tpb)) in out, out


def test_single_pass_refuses_partial_warps():
    rc, out = run(binary("p14_solution_cpu"), "--variant", "single-pass", "--n", 100, "--tpb", 48, "--seed", 1)
    assert rc == 2, out
    assert "multiple of 32" in out


@pytest.mark.parametrize("readme", ["README.md", "README.ko.md"])
def test_readmes_mention_every_variant(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in VARIANTS:
        assert "--" + name in text, "%s does not mention --%s" % (readme, name)
    for command in ("python3 scripts/puzzle.py run p14 --simple", "--solution", "check p14", "pixi run p14 --simple"):
        assert command in text, "%s does not show `%s`" % (readme, command)


@pytest.mark.parametrize("readme", ["README.md", "README.ko.md"])
def test_readmes_paste_the_real_show_output(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in ("simple", "complete"):
        for line in (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines():
            assert line in text, "%s lacks the show line %r of --%s" % (readme, line, name)


# ---- the solution ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_show_matches_expected(variant):
    rc, out = run(binary("p14_solution_cpu"), *show_args(variant))
    assert rc == 0, out
    got = [l for l in out.splitlines() if l.startswith(SHOW_LINES)]
    want = (PUZZLE / "expected" / (variant + ".txt")).read_text(encoding="utf-8").splitlines()
    assert got == want


@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_passes_edge_sizes_and_seeds(variant):
    sol = binary("p14_solution_cpu")
    failures = []
    for n, tpb in sweep(variant):
        for seed in SEEDS:
            rc, out = run(sol, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", seed)
            if rc != 0 or result(out)["verdict"] != "pass":
                failures.append("n=%d tpb=%d seed=%d rc=%d\n%s" % (n, tpb, seed, rc, out))
    assert not failures, "\n".join(failures[:3])


def test_complete_many_levels_and_large_n():
    sol = binary("p14_solution_cpu")
    for n, tpb, levels in ((1000, 8, 3), (100000, 8, 5), (SPEC["variants"]["complete"]["large_n"]["cpu"], 1024, 2)):
        rc, out = run(sol, "--variant", "complete", "--n", n, "--tpb", tpb, "--seed", 11)
        assert rc == 0, out
        assert "levels = %d" % levels in out, out


def test_naive_at_its_limit():
    rc, out = run(binary("p14_solution_cpu"), "--variant", "naive", "--n", 4096, "--tpb", 1024, "--seed", 4)
    assert rc == 0, out


@pytest.mark.parametrize("variant,n,tpb,why", [
    ("simple", 9, 8, "at most tpb"),
    ("double-buffer", 33, 32, "at most tpb"),
    ("brent-kung", 17, 8, "2 * tpb"),
    ("brent-kung", 8, 96, "power-of-two"),
    ("naive", 4097, 256, "4096"),
])
def test_driver_refuses_sizes_outside_the_variant(variant, n, tpb, why):
    rc, out = run(binary("p14_solution_cpu"), "--variant", variant, "--n", n, "--tpb", tpb, "--seed", 1)
    assert rc == 2, out
    assert why in out


# ---- the skeleton ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_skeleton_fails_cleanly(variant):
    skel = binary("p14_cpu")
    tpb = SPEC["variants"][variant]["tpb"][1]
    limit = n_limit(variant, tpb)
    n = tpb + 3 if limit is None else min(limit, tpb + 3)
    for args in (show_args(variant), ["--variant", variant, "--n", n, "--tpb", tpb, "--seed", 5]):
        rc, out = run(skel, *args)
        assert rc == 1, "expected a clean wrong answer (exit 1), got %d:\n%s" % (rc, out)
        assert "mismatch" in out
        assert result(out)["verdict"] == "fail"


def test_skeleton_output_names_the_uninitialized_fill_once():
    # An untouched cudaMalloc buffer reads as -842150451 (the 0xCD fill); the learner is told so
    # on the first line that shows it, and once why, not on every line.
    rc, out = run(binary("p14_cpu"), *show_args("simple"))
    assert rc == 1, out
    assert out.count("got -842150451 (uninitialized: the 0xCD fill read as an int)") == 1, out
    assert out.count("got -842150451\n") >= 2
    assert "note: memory from cudaMalloc and __shared__ arrays starts as garbage" in out


def test_a_failing_random_case_prints_input_out_and_expected_near_the_first_mismatch():
    # `check` shows these lines and its hint points at them (issue 9, item 3); a long case is
    # shortened around the first mismatch.
    rc, out = run(binary("p14_cpu"), "--variant", "complete", "--n", 5000, "--tpb", 32, "--seed", 3)
    assert rc == 1, out
    lines = {l.split(":")[0]: l for l in out.splitlines() if l.startswith(("input:", "out:", "expected:"))}
    assert set(lines) == {"input", "out", "expected"}, out
    assert lines["out"].startswith("out:      [-842150451, ") and "... 4984 more ...]" in lines["out"]
    assert lines["expected"].count(", ") < 20  # shortened, not 5000 numbers


# ---- planted bugs ---------------------------------------------------------------------------

PLANTED = sorted((REPO / "tests" / "planted" / "p14").glob("*.plant"))


def test_planted_bugs_cover_the_required_cases():
    names = {p.stem for p in PLANTED}
    assert {"simple_no_read_write_split", "brent_kung_downsweep_no_barrier", "complete_prev_block_only",
            "simple_no_store_guard", "simple_barrier_in_if", "simple_hardcoded_show",
            "single_pass_flag_and_value_apart", "single_pass_tile_from_block_index",
            "single_pass_row_offset_forgets_rows", "single_pass_look_back_past_inclusive"} <= names
