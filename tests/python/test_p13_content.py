"""Content tests for puzzle p13 (max reduction): the solution's show output matches
puzzles/p13/expected/, both variants of the solution pass edge, odd, many-pass and large sizes
under every input distribution, the unsolved skeleton fails cleanly, the planted bugs are the
required ones and the all-negative inputs are what catch a 0 identity, and the lesson files
cover both variants.

Tests that run binaries need PUZZLES_BUILD_DIR (a build tree with p13_solution_cpu and p13_cpu
in bin/; the planted binaries when configured with -DPUZZLES_TESTS=ON) and are skipped without it.
"""

import json
from pathlib import Path

import pytest

from driver_helpers import binary, result, run


REPO = Path(__file__).resolve().parents[2]
PUZZLE = REPO / "puzzles" / "p13"
SPEC = json.loads((PUZZLE / "puzzle.json").read_text(encoding="utf-8"))
VARIANTS = list(SPEC["variants"])
SHOW_LINES = ("config:", "input:", "out:", "expected:")
SEEDS = (1, 2, 3)  # one of each input distribution (seed % 3)
KINDS = {0: "all negative, uniform in [-1000, -1)", 1: "mixed signs", 2: "the maximum (-0.5) last"}


def sweep(variant):
    """(n, tpb) pairs: 1, tpb-1, tpb, tpb+1 and 3*tpb+5 for every tpb."""
    cases = []
    for tpb in SPEC["variants"][variant]["tpb"]:
        for n in (1, tpb - 1, tpb, tpb + 1, 3 * tpb + 5):
            if n >= 1 and (n, tpb) not in cases:
                cases.append((n, tpb))
    return cases


def show_args(variant):
    show = SPEC["variants"][variant]["show"]
    return ["--variant", variant, "--n", show["n"], "--tpb", show["tpb"], "--show"]


def passes(n, tpb):
    count = 0
    while n > 1:
        n = (n + tpb - 1) // tpb
        count += 1
    return count


def show_value(name, key):
    for line in (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines():
        if line.startswith(key + ":"):
            return line.split(":", 1)[1].strip()


# ---- the declaration ------------------------------------------------------------------------

TREE = ["block", "complete"]  # the shared-memory tree variants; single-pass works in whole warps


def test_declaration_has_title_summary_and_the_three_variants():
    assert SPEC["title"].strip() and SPEC["summary"].strip()
    assert VARIANTS == ["block", "complete", "single-pass"]
    for name, v in SPEC["variants"].items():
        assert v["summary"].strip(), name
        assert v["max_n"] is None, name
        assert 256 in v["tpb"] and 1024 in v["tpb"], name
    for name in TREE:
        v = SPEC["variants"][name]
        assert v["show"] == {"n": 10, "tpb": 4}, name  # three blocks, the last one half empty
        assert "power-of-two" in v["summary"], name
    sp = SPEC["variants"]["single-pass"]
    assert "multiple of 32" in sp["summary"] and all(t % 32 == 0 for t in sp["tpb"])
    assert sp["show"] == {"n": 300, "tpb": 32}  # three blocks of 4 * 32 floats


def test_block_sizes_are_powers_of_two():
    for name, v in ((k, SPEC["variants"][k]) for k in TREE):
        for tpb in v["tpb"]:
            assert tpb >= 2 and tpb & (tpb - 1) == 0, (name, tpb)


def test_large_sizes_are_big_enough_and_not_multiples_of_the_block():
    for name, v in ((k, SPEC["variants"][k]) for k in TREE):
        large, tpb = v["large_n"], max(v["tpb"])
        assert 2 ** 20 <= large["cpu"] < 2 ** 21, name  # keeps `check p13` fast on the simulator
        assert large["gpu"] >= 2 ** 24, name
        assert large["cpu"] % tpb and large["gpu"] % tpb, name  # a partial last block in every pass
        assert passes(large["cpu"], tpb) == 3 and passes(large["gpu"], tpb) == 3, name


def test_extra_cases_need_many_passes():
    for name, v in ((k, SPEC["variants"][k]) for k in TREE):
        extra = [tuple(c) for c in v["extra_cases"]]
        assert extra, name
        assert max(passes(n, tpb) for n, tpb in extra) >= 5, name
        assert all(n % tpb for n, tpb in extra), name


def test_expected_files_cover_exactly_the_variants():
    files = sorted(p.stem for p in (PUZZLE / "expected").glob("*.txt"))
    assert files == sorted(VARIANTS)
    for name in VARIANTS:
        lines = (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines()
        assert [l.split(":")[0] + ":" for l in lines] == list(SHOW_LINES), name
        out = lines[2].split(":", 1)[1].strip()
        expected = lines[3].split(":", 1)[1].strip()
        assert out == expected, name


def test_show_values_are_checkable_by_eye():
    assert show_value("single-pass", "out") == "[-0.5]"
    assert show_value("single-pass", "config") == "SIZE = 300, TPB = 32, launches = 1"
    for name in TREE:
        values = [float(x) for x in show_value(name, "input").strip("[]").split(",")]
        assert len(values) == 10 and all(x < 0 for x in values), name  # a 0 identity shows up here
        assert values.index(max(values)) == 6, name  # the peak sits in block 1, not block 0
        assert show_value(name, "out") == "[-0.5]", name
        assert show_value(name, "config") == "SIZE = 10, TPB = 4, blocks = 3, passes = 2", name


@pytest.mark.parametrize("readme", ["README.md", "README.ko.md"])
def test_readmes_mention_every_variant_and_the_essentials(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in VARIANTS:
        assert "--" + name in text, "%s does not mention --%s" % (readme, name)
    for command in ("python3 scripts/puzzle.py run p13 --block", "--solution", "check p13", "pixi run p13 --block"):
        assert command in text, "%s does not show `%s`" % (readme, command)
    for word in ("-FLT_MAX", "fmaxf", "__syncthreads()", "buffers[0]", "buffers[1]", "cudaFree",
                 "while (current_n > 1)", "current_n > tpb"):
        assert word in text, "%s does not mention %s" % (readme, word)


@pytest.mark.parametrize("readme", ["README.md", "README.ko.md"])
def test_readmes_paste_the_real_show_output(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in VARIANTS:
        for line in (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines():
            assert line in text, "%s lacks the show line %r of --%s" % (readme, line, name)
    # The planted-bug messages pasted in the lessons (the Korean page shows what `--lang ko` prints).
    pasted = {"README.md": ("  [0] expected -0.5, got 0.0", "race in kernel block_max",
                            "out-of-bounds read of device memory in kernel block_max", "got -2.873518e-16",
                            "  [0] expected -0.5, got -3.5"),
              "README.ko.md": ("  [0] 기대값 -0.5, 결과 0.0", "Race Condition: kernel block_max",
                               "device memory 범위를 벗어난 read (out-of-bounds): kernel block_max", "-2.873518e-16",
                               "  [0] 기대값 -0.5, 결과 -3.5")}
    for line in pasted[readme]:
        assert line in text, "%s lacks %r" % (readme, line)


def test_main_readme_lists_p13():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    row = [l for l in text.splitlines() if l.startswith("| [p13](puzzles/p13/README.md)")]
    assert len(row) == 1
    for name in VARIANTS:
        assert "--" + name in row[0]


# ---- the learner file -----------------------------------------------------------------------

def function_body(text, signature):
    start = text.index(signature)
    depth, i = 0, text.index("{", start)
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j + 1]
    raise AssertionError("unbalanced braces after " + signature)


def test_complete_reuses_the_block_kernel_and_the_loop_is_the_learners():
    sol = (REPO / "solutions" / "p13" / "p13.cu").read_text(encoding="utf-8")
    skel = (PUZZLE / "p13.cu").read_text(encoding="utf-8")
    signature = "void p13_complete(const float* d_in, float* d_result, int n, int tpb)"
    body = function_body(sol, signature)
    assert body.count("block_max<<<") == 1 and body.count("cudaMalloc(") == 2 and body.count("cudaFree(") == 2
    assert "cudaMemcpyDeviceToDevice" in body and "while (current_n > 1)" in body
    skel_body = function_body(skel, signature)
    assert "FILL ME IN" in skel_body and "<<<" not in skel_body and "cudaMalloc" not in skel_body
    # --block's relaunch is given in the skeleton, as a recursion (not the loop --complete asks for).
    given = function_body(skel, "static void max_recursive(")
    assert "max_recursive(partials, out, blocks, tpb)" in given
    assert skel.count("__global__") == 2  # block_max, shared by --block and --complete, and max_single_pass


# ---- the solution ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_show_matches_expected(variant):
    rc, out = run(binary("p13_solution_cpu"), *show_args(variant))
    assert rc == 0, out
    got = [l for l in out.splitlines() if l.startswith(SHOW_LINES)]
    want = (PUZZLE / "expected" / (variant + ".txt")).read_text(encoding="utf-8").splitlines()
    assert got == want


@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_passes_edge_sizes_and_every_distribution(variant):
    sol = binary("p13_solution_cpu")
    failures = []
    for n, tpb in sweep(variant):
        for seed in SEEDS:
            rc, out = run(sol, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", seed)
            if rc != 0 or result(out)["verdict"] != "pass":
                failures.append("n=%d tpb=%d seed=%d rc=%d\n%s" % (n, tpb, seed, rc, out))
    assert not failures, "\n".join(failures[:3])


@pytest.mark.parametrize("variant", TREE)
def test_solution_many_passes_and_large_n(variant):
    sol = binary("p13_solution_cpu")
    v = SPEC["variants"][variant]
    cases = [tuple(c) for c in v["extra_cases"]] + [(v["large_n"]["cpu"], max(v["tpb"]))]
    for n, tpb in cases:
        for seed in (9, 10, 11):
            rc, out = run(sol, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", seed)
            assert rc == 0, out
            assert "passes = %d" % passes(n, tpb) in out, out


@pytest.mark.parametrize("seed", [3, 4, 5, 300, 301, 302])
def test_input_distribution_follows_the_seed(seed):
    rc, out = run(binary("p13_solution_cpu"), "--variant", "block", "--n", 5, "--tpb", 4, "--seed", seed)
    assert rc == 0, out
    line = [l for l in out.splitlines() if l.startswith("inputs:")]
    assert len(line) == 1 and KINDS[seed % 3] in line[0], out


@pytest.mark.parametrize("variant,tpb,why", [
    ("block", 100, "power of two"),
    ("complete", 96, "power of two"),
    ("block", 1, "at least 2"),
    ("complete", 1, "at least 2"),
])
def test_driver_refuses_block_sizes_the_tree_cannot_take(variant, tpb, why):
    rc, out = run(binary("p13_solution_cpu"), "--variant", variant, "--n", 50, "--tpb", tpb, "--seed", 1)
    assert rc == 2, out
    assert why in out


# ---- the skeleton ---------------------------------------------------------------------------

def test_skeleton_output_names_the_float_fill():
    # -4.316021e+08 means nothing to a learner until it is named: the 0xCD bytes read as a float.
    rc, out = run(binary("p13_cpu"), *show_args("block"))
    assert rc == 1, out
    assert "got -4.316021e+08 (uninitialized: the 0xCD fill read as a float)" in out
    assert "note: memory from cudaMalloc and __shared__ arrays starts as garbage" in out


@pytest.mark.parametrize("variant", VARIANTS)
def test_skeleton_fails_cleanly(variant):
    skel = binary("p13_cpu")
    tpb = 8 if variant in TREE else 32
    for args in (show_args(variant), ["--variant", variant, "--n", 37, "--tpb", tpb, "--seed", 5]):
        rc, out = run(skel, *args)
        assert rc == 1, "expected a clean wrong answer (exit 1), got %d:\n%s" % (rc, out)
        assert "mismatch" in out
        assert result(out)["verdict"] == "fail"


# ---- planted bugs ---------------------------------------------------------------------------

PLANTED = sorted((REPO / "tests" / "planted" / "p13").glob("*.plant"))


def test_planted_bugs_cover_the_required_cases():
    names = {p.stem for p in PLANTED}
    assert {"block_identity_zero", "complete_stops_one_pass_early", "block_no_load_guard",
            "block_tree_no_barrier", "complete_in_place", "single_pass_no_threadfence",
            "single_pass_identity_zero", "single_pass_ticket_not_reset"} <= names


def test_single_pass_large_n_and_many_blocks():
    sol = binary("p13_solution_cpu")
    v = SPEC["variants"]["single-pass"]
    for n, tpb in [tuple(c) for c in v["extra_cases"]] + [(v["large_n"]["cpu"], max(v["tpb"]))]:
        for seed in (9, 10, 11):
            rc, out = run(sol, "--variant", "single-pass", "--n", n, "--tpb", tpb, "--seed", seed)
            assert rc == 0 and result(out)["verdict"] == "pass", out




def test_identity_zero_is_caught_only_by_all_negative_inputs():
    """A 0 identity passes mixed-sign inputs (a positive value wins anyway) and fails the
    all-negative ones: the reason the driver derives all-negative cases from the seed."""
    bug = binary("planted_p13_block_identity_zero_cpu")
    for seed in (1, 4, 7):  # mixed signs
        rc, out = run(bug, "--variant", "block", "--n", 37, "--tpb", 8, "--seed", seed)
        assert rc == 0 and "mixed signs" in out, out
    for seed in (3, 5, 6):  # all negative
        rc, out = run(bug, "--variant", "block", "--n", 37, "--tpb", 8, "--seed", seed)
        assert rc == 1 and "got 0.0" in out, out


def test_stopping_one_pass_early_is_right_for_one_block_only():
    bug = binary("planted_p13_complete_stops_one_pass_early_cpu")
    rc, out = run(bug, "--variant", "complete", "--n", 1, "--tpb", 8, "--seed", 2)
    assert rc == 0, out  # one value: nothing to reduce
    rc, out = run(bug, "--variant", "complete", "--n", 100, "--tpb", 8, "--seed", 2)
    assert rc == 1, out


# ---- the driver's prose, in the learner's language --------------------------------------------

def test_the_cli_words_the_drivers_lines_in_korean(cli):
    """The `inputs:` line, the mismatch block and its notes reach the CLI as data (SAY records) and
    are worded from the catalogue: in Korean with --lang ko, and none of the driver's English."""
    r = cli("run", "p13", "--block", "--seed", 5, "--binary", binary("p13_cpu"), "--lang", "ko")
    assert r.returncode == 1, r
    assert "inputs:   모두 음수, [-1000, -1)에서 균등 분포, 최댓값(-0.5)은 맨 끝" in r.stdout, r.stdout
    assert "mismatch: 출력 1개 중 1개가 다릅니다. 처음 다른 곳은 index 0" in r.stdout
    assert "  [0] 기대값 -0.5, 결과 -4.316021e+08 (초기화되지 않은 값: 0xCD로 채운 값을 float로 읽은 것)" in r.stdout
    assert "note: cudaMalloc 메모리와 __shared__ 배열은 쓰레기 값으로 시작합니다" in r.stdout
    for english in ("all negative, uniform", "outputs differ", "expected -0.5, got", "the 0xCD fill",
                    "starts as garbage", "SAY {"):
        assert english not in r.output, english


def test_the_single_pass_note_in_korean(cli):
    r = cli("run", "p13", "--single-pass", "--seed", 4, "--binary", binary("p13_cpu"), "--lang", "ko")
    assert r.returncode == 1, r
    assert "inputs:   양수와 음수가 섞임, [-1000, 1000)에서 균등 분포" in r.stdout, r.stdout
    assert "note: driver는 같은 입력으로 p13_single_pass를 두 번 호출합니다. ticket이 0인 첫 번째 호출부터" in r.stdout
    assert "calls p13_single_pass twice" not in r.output and "mixed signs" not in r.output


def test_the_cli_in_english_shows_what_the_driver_prints_by_hand(cli):
    """The English the CLI words from the data is the driver's own English, line for line."""
    by_hand = run(binary("p13_cpu"), "--variant", "single-pass", "--n", 300, "--tpb", 32, "--seed", 4)[1]
    r = cli("run", "p13", "--single-pass", "--n", 300, "--tpb", 32, "--seed", 4, "--binary", binary("p13_cpu"),
            "--lang", "en")
    said = [l for l in by_hand.splitlines() if l.startswith(("inputs:", "mismatch:", "  [", "note:"))]
    assert len(said) >= 4, by_hand
    shown = r.stdout.splitlines()
    for line in said:
        assert line in shown, line
