"""Content tests for puzzle p29 (barrier-coordinated pipelines): the declaration follows the
course notes' specification, the solution's show output matches puzzles/p29/expected/ (including
the notes' "Input sample" and "Output sample" lines), both variants of the solution pass many
sizes and seeds, the unsolved skeleton fails cleanly, the planted bugs are the required ones and
end the way their headers say (a skipped arrive() is a deadlock, not a hang), and the lesson files
cover both variants.

Tests that run binaries need PUZZLES_BUILD_DIR (a build tree with p29_solution_cpu, p29_cpu and,
with -DPUZZLES_TESTS=ON, the planted_p29_* binaries in bin/) and are skipped without it.
"""

import json
import re
import time
from pathlib import Path

import pytest

from driver_helpers import binary, result, run


REPO = Path(__file__).resolve().parents[2]
PUZZLE = REPO / "puzzles" / "p29"
SPEC = json.loads((PUZZLE / "puzzle.json").read_text(encoding="utf-8"))
VARIANTS = list(SPEC["variants"])
SHOW_LINES = ("config:", "input:", "out:", "expected:")
NOTES_LINES = ("Input sample: 0.0 1.01 2.02", "Output sample: 1.6665002 2.3331003 3.3996604")
SEEDS = (1, 2, 3)


def show_args(variant):
    show = SPEC["variants"][variant]["show"]
    return ["--variant", variant, "--n", show["n"], "--tpb", show["tpb"], "--show"]


def printed_lines(output):
    """What `run --solution` shows for the show input, less the backend line and RESULT."""
    return [l for l in output.splitlines() if l and not l.startswith(("backend:", "RESULT "))]


def sizes(variant):
    """(n, tpb) pairs: 1, partial and full tiles around every block size, and many blocks."""
    cases = []
    for tpb in SPEC["variants"][variant]["tpb"]:
        for n in (1, 2, tpb // 2, tpb - 1, tpb, tpb + 1, 2 * tpb + tpb // 2 + 1, 3 * tpb + 5, 17 * tpb + 3):
            if n >= 1 and (n, tpb) not in cases:
                cases.append((n, tpb))
    return cases


# ---- the declaration ------------------------------------------------------------------------

def test_declaration_has_title_summary_and_the_two_variants():
    assert SPEC["title"].strip() and SPEC["summary"].strip()
    assert VARIANTS == ["multi-stage", "double-buffer"]
    for name, v in SPEC["variants"].items():
        assert v["summary"].strip(), name
        assert v["max_n"] is None, name  # any size, many blocks
        assert v["large_n"] and v["large_n"]["cpu"] >= 65536, name


def test_multi_stage_is_the_notes_configuration():
    v = SPEC["variants"]["multi-stage"]
    assert v["tpb"] == [256]  # TPB = 256 is part of the specification
    assert v["show"] == {"n": 1024, "tpb": 256}  # SIZE = 1024, 4 blocks
    # Sizes that are not multiples of 256 are always checked, besides the sweep's own.
    assert any(n % 256 for n, _ in v["extra_cases"])


def test_double_buffer_checks_several_block_sizes():
    tpbs = SPEC["variants"]["double-buffer"]["tpb"]
    assert 1024 in tpbs and any(t & (t - 1) for t in tpbs), tpbs  # also a non-power of two


def test_the_kernels_use_the_required_barriers():
    sol = (REPO / "solutions" / "p29" / "p29.cu").read_text(encoding="utf-8")
    skel = (PUZZLE / "p29.cu").read_text(encoding="utf-8")
    for text in (sol, skel):
        assert "#include <cuda/barrier>" in text
        assert "cuda::barrier<cuda::thread_scope_block>" in text
        assert "init(&bar, tpb)" in text  # given: the learner writes arrive and wait
    body = sol.split("__global__ void stencil_double_buffer", 1)[1]
    assert "bar.arrive()" in body and "bar.wait(std::move(token))" in body
    assert body.count("__syncthreads()") == 1  # only the one after init(); the rest is cuda::barrier
    pipeline = sol.split("__global__ void multi_stage_pipeline", 1)[1].split("void p29_multi_stage", 1)[0]
    assert pipeline.count("__syncthreads()") == 2  # one between each pair of stages


# ---- expected output ------------------------------------------------------------------------

def test_expected_files_cover_exactly_the_variants():
    files = sorted(p.stem for p in (PUZZLE / "expected").glob("*.txt"))
    assert files == sorted(VARIANTS)


def test_multi_stage_expected_has_the_notes_lines():
    lines = (PUZZLE / "expected" / "multi-stage.txt").read_text(encoding="utf-8").splitlines()
    assert tuple(lines[:2]) == NOTES_LINES
    assert [l.split(":")[0] + ":" for l in lines[2:]] == list(SHOW_LINES)
    assert "SIZE = 1024, TPB = 256, blocks = 4" in lines[2]


def test_double_buffer_expected_shows_the_binomial_spike():
    lines = (PUZZLE / "expected" / "double-buffer.txt").read_text(encoding="utf-8").splitlines()
    assert [l.split(":")[0] + ":" for l in lines] == list(SHOW_LINES)
    out = lines[2].split(":", 1)[1].strip()
    assert out == lines[3].split(":", 1)[1].strip()
    # Tile 0: a spike of 64 spreads to 1 6 15 20 15 6 1 and keeps its mass; tile 1: the spike sits
    # on the tile's left edge, where the neighbour counts as 0.
    assert out == "[0.0, 1.0, 6.0, 15.0, 20.0, 15.0, 6.0, 1.0, 14.0, 14.0, 6.0, 1.0, 0.0, 0.0, 0.0, 0.0]"


@pytest.mark.parametrize("readme", ["README.md", "README.ko.md"])
def test_readmes_mention_every_variant_and_command(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in VARIANTS:
        assert "--" + name in text, "%s does not mention --%s" % (readme, name)
    for command in ("python3 scripts/puzzle.py run p29 --multi-stage", "--solution", "check p29",
                    "pixi run p29 --multi-stage", "arrive_and_drop", "compute-sanitizer"):
        assert command in text, "%s does not show `%s`" % (readme, command)


@pytest.mark.parametrize("readme", ["README.md", "README.ko.md"])
def test_readmes_paste_the_real_show_output(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    for name in VARIANTS:
        for line in (PUZZLE / "expected" / (name + ".txt")).read_text(encoding="utf-8").splitlines():
            assert line in text, "%s lacks the show line %r of --%s" % (readme, line, name)


@pytest.mark.parametrize("readme", ["README.md", "README.ko.md"])
def test_readmes_have_the_timeline_and_a_deadlock(readme):
    text = (PUZZLE / readme).read_text(encoding="utf-8")
    assert re.search(r"threads 0-127 .*stage 1", text, re.I), "no timeline row for threads 0-127"
    assert re.search(r"threads 128-255 .*stage 2", text, re.I), "no timeline row for threads 128-255"
    assert text.count("__syncthreads()") >= 2
    # the real output of a planted bug, as `--lang ko` prints it on the Korean page
    assert ("deadlock in kernel stencil_double_buffer" in text if readme == "README.md" else
            re.search(r"kernel stencil_double_buffer \(\S+에서 launch\), block \d+에서 deadlock", text))


# ---- the solution ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_show_matches_expected(variant):
    rc, out = run(binary("p29_solution_cpu"), *show_args(variant))
    assert rc == 0, out
    want = (PUZZLE / "expected" / (variant + ".txt")).read_text(encoding="utf-8").splitlines()
    assert printed_lines(out) == want


def test_solution_prints_the_notes_lines():
    rc, out = run(binary("p29_solution_cpu"), *show_args("multi-stage"))
    assert rc == 0, out
    for line in NOTES_LINES:
        assert line in out.splitlines(), out


@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_passes_edge_sizes_and_seeds(variant):
    sol = binary("p29_solution_cpu")
    failures = []
    for n, tpb in sizes(variant) + [tuple(c) for c in SPEC["variants"][variant].get("extra_cases", [])]:
        for seed in SEEDS:
            rc, out = run(sol, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", seed)
            if rc != 0 or result(out)["verdict"] != "pass":
                failures.append("n=%d tpb=%d seed=%d rc=%d\n%s" % (n, tpb, seed, rc, out))
    assert not failures, "\n".join(failures[:3])


@pytest.mark.parametrize("variant", VARIANTS)
def test_solution_passes_the_large_size(variant):
    v = SPEC["variants"][variant]
    rc, out = run(binary("p29_solution_cpu"), "--variant", variant, "--n", v["large_n"]["cpu"], "--tpb", max(v["tpb"]),
                  "--seed", 11)
    assert rc == 0, out


def test_solution_passes_many_random_schedules():
    sol = binary("p29_solution_cpu")
    for seed in range(20, 30):
        for variant, n, tpb in (("multi-stage", 777, 256), ("double-buffer", 201, 64)):
            rc, out = run(sol, "--variant", variant, "--n", n, "--tpb", tpb, "--seed", seed, "--schedules", "random")
            assert rc == 0, out


@pytest.mark.parametrize("tpb", [128, 255, 512])
def test_driver_refuses_other_block_sizes_for_multi_stage(tpb):
    rc, out = run(binary("p29_solution_cpu"), "--variant", "multi-stage", "--n", 1024, "--tpb", tpb, "--seed", 1)
    assert rc == 2, out
    assert "TPB = 256" in out


# ---- the skeleton ---------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_skeleton_fails_cleanly(variant):
    skel = binary("p29_cpu")
    tpb = SPEC["variants"][variant]["tpb"][-1]
    for args in (show_args(variant), ["--variant", variant, "--n", tpb + 3, "--tpb", tpb, "--seed", 5]):
        rc, out = run(skel, *args)
        assert rc == 1, "expected a clean wrong answer (exit 1), got %d:\n%s" % (rc, out)
        assert "mismatch" in out
        assert result(out)["verdict"] == "fail"


# ---- planted bugs ---------------------------------------------------------------------------

PLANTED = sorted((REPO / "tests" / "planted" / "p29").glob("*.plant"))


def planted_header(path):
    head = path.read_text(encoding="utf-8").splitlines()[:4]
    keys = [re.match(r"^// (\w+): (.+)$", l) for l in head]
    assert all(keys), head
    return {m.group(1): m.group(2) for m in keys}


def test_planted_bugs_cover_the_required_cases():
    names = {p.stem for p in PLANTED}
    assert {"multi_stage_no_barrier_1_2", "multi_stage_blur_across_tile", "multi_stage_smooth_from_input",
            "double_buffer_in_place", "double_buffer_skip_arrive"} <= names
    skip = planted_header(REPO / "tests" / "planted" / "p29" / "double_buffer_skip_arrive.plant")
    assert skip["expect"] == "error" and "deadlock" in skip["match"]


@pytest.mark.parametrize("n,tpb", [(1, 8), (37, 32), (300, 256)])
def test_skipped_arrive_is_a_deadlock_not_a_hang(n, tpb):
    planted = binary("planted_p29_double_buffer_skip_arrive_cpu")
    start = time.monotonic()
    rc, out = run(planted, "--variant", "double-buffer", "--n", n, "--tpb", tpb, "--seed", 1)
    assert time.monotonic() - start < 30
    assert rc == 4, out
    assert result(out)["verdict"] == "error"
    assert "deadlock in kernel stencil_double_buffer" in out
    assert "cuda::barrier" in out and "arrive()" in out
