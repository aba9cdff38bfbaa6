"""Tests for scripts/puzzle.py.

Most tests use fixture puzzles (p98, p99) in a temporary root (PUZZLES_ROOT) and fake driver
binaries (--binary), so they need no C++ build. Tests against the real puzzles need
PUZZLES_BUILD_DIR pointing at a configured build tree (`python3 scripts/puzzle.py test` sets it)
and are skipped otherwise.
"""

import importlib
import json
import os
import shlex
import shutil
import sys
import time

import pytest

from conftest import REPO, read_log, run_cli

import puzzle  # scripts/puzzle.py (conftest puts scripts/ on sys.path)
from puzzlelib import build as bld
from puzzlelib.common import UsageError
from puzzlelib import commands
from puzzlelib.driver import Outcome, classify, parse_result_line, relevant_lines, tidy_line
from puzzlelib.cases import TRACE_MAX_THREADS, case_seed, run_seed
from puzzlelib.puzzles import discover, find_puzzle, load_puzzle


def toml_module():
    for name in ("tomllib", "tomli"):
        try:
            return importlib.import_module(name)
        except ImportError:
            pass
    pytest.skip("needs tomllib (Python 3.11+) or tomli to read pixi.toml")


def real_puzzles():
    return discover(REPO)


# ------------------------------------------------------------------------------ usage errors

def test_help_exits_0(cli):
    r = cli("--help")
    assert r.returncode == 0, r
    for command in ("run", "check", "list", "test", "sync-pixi"):
        assert command in r.stdout


def test_main_is_importable():
    assert puzzle.main(["--help"]) == 0


def test_no_command_is_usage_error(cli):
    r = cli()
    assert r.returncode == 2
    assert "usage:" in r.output


def test_unknown_command_suggests(cli):
    r = cli("rnu", "p14")
    assert r.returncode == 2
    assert "unknown command 'rnu'" in r.output
    assert "(did you mean run?)" in r.output


@pytest.mark.parametrize("command", ["run", "check", "list", "test", "sync-pixi"])
def test_command_help(cli, command):
    r = cli(command, "--help")
    assert r.returncode == 0, r
    assert "usage:" in r.stdout


def test_unknown_puzzle_lists_puzzles_and_suggests(cli, fixture_root):
    r = cli("run", "p9", "--simple", root=fixture_root)
    assert r.returncode == 2
    assert "unknown puzzle 'p9'" in r.output
    assert "(did you mean p99?)" in r.output
    assert "p98, p99" in r.output


def test_unknown_variant_lists_variants_and_suggests(cli, fixture_root):
    r = cli("run", "p99", "--simpel", root=fixture_root)
    assert r.returncode == 2
    assert "(did you mean --simple?)" in r.output
    for flag, summary in [("--simple", "one block, Kogge-Stone"), ("--double-buffer", "one block, two buffers"),
                          ("--multi-block", "any size, many blocks")]:
        assert flag in r.output and summary in r.output


def test_variant_of_another_puzzle(cli, fixture_root):
    r = cli("check", "p99", "--tree", root=fixture_root)
    assert r.returncode == 2
    assert "--tree is a variant of p98" in r.output


@pytest.mark.parametrize("args", [["check", "p99", "--sed", "3"], ["check", "--sed", "3"],
                                  ["run", "p99", "--simple", "--sed", "3"]])
def test_unknown_option_suggests(cli, fixture_root, args):
    r = cli(*args, root=fixture_root)
    assert r.returncode == 2
    assert "(did you mean --seed?)" in r.output


def test_run_without_variant_prints_usage(cli, fixture_root):
    r = cli("run", "p99", root=fixture_root)
    assert r.returncode == 2
    assert "usage:" in r.output
    for v in ("--simple", "--double-buffer", "--multi-block"):
        assert v in r.output
    assert "passed" not in r.output


def test_run_real_puzzle_without_variant_lists_every_variant(cli):
    puzzles = real_puzzles()
    if not puzzles:
        pytest.skip("no puzzles/p*/puzzle.json in the repository yet")
    for p in puzzles.values():
        r = cli("run", p.name)
        assert r.returncode == 2, r
        for v in p.variants.values():
            assert v.flag in r.output
            assert v.summary in r.output


@pytest.mark.parametrize("args", [
    ["run", "p99", "--simple", "--double-buffer"],   # one variant only
    ["run", "p99", "--simple", "--backend", "tpu"],
    ["run", "p99", "--simple", "--seed", "x"],
    ["check", "--simple"],                            # variant without a puzzle
    ["list", "extra"],
])
def test_other_usage_errors(cli, fixture_root, args):
    r = cli(*args, root=fixture_root)
    assert r.returncode == 2, r


def test_bad_timeout_env(cli, fixture_root, fake_driver):
    r = cli("run", "p99", "--simple", "--binary", fake_driver(), root=fixture_root,
            env={"PUZZLES_TIMEOUT": "soon"})
    assert r.returncode == 2
    assert "PUZZLES_TIMEOUT" in r.output


# ----------------------------------------------------------------------- puzzle.json parsing

def test_discover_fixture(fixture_root):
    puzzles = discover(fixture_root)
    assert list(puzzles) == ["p98", "p99"]
    p = puzzles["p99"]
    assert p.title == "Fixture scan"
    assert [v.flag for v in p.variants.values()] == ["--simple", "--double-buffer", "--multi-block"]
    assert p.source(False) == "puzzles/p99/p99.cu"
    assert p.source(True) == "solutions/p99/p99.cu"
    assert p.target(True, "gpu") == "p99_solution_gpu"
    assert p.variant_by_flag("--double-buffer").name == "double-buffer"


def test_directory_without_puzzle_json_is_ignored(fixture_root):
    (fixture_root / "puzzles" / "p50").mkdir()
    assert "p50" not in discover(fixture_root)


@pytest.mark.parametrize("arg", ["p99", "P99", "99"])
def test_find_puzzle_spellings(fixture_root, arg):
    assert find_puzzle(discover(fixture_root), arg).name == "p99"


def test_sweep_one_block(fixture_root):
    v = discover(fixture_root)["p99"].variants["simple"]
    cases = v.sweep("cpu", seed=1)
    assert cases == v.sweep("cpu", seed=1)  # deterministic
    assert {tpb for _, tpb in cases} == {8, 32, 100}
    for n, tpb in cases:
        assert 1 <= n <= tpb
    for tpb in (8, 32, 100):
        for n in (1, tpb - 1, tpb):
            assert (n, tpb) in cases
    assert len(cases) == len(set(cases))


def test_sweep_two_per_thread(fixture_root):
    v = discover(fixture_root)["p99"].variants["double-buffer"]
    cases = v.sweep("cpu", seed=2)
    for tpb in (8, 32):
        assert (tpb + 1, tpb) in cases
        assert (2 * tpb, tpb) in cases  # 3*tpb+5 clamped to max_n
    assert all(n <= 2 * tpb for n, tpb in cases)


def test_sweep_unbounded_with_large_n(fixture_root):
    v = discover(fixture_root)["p99"].variants["multi-block"]
    cpu = v.sweep("cpu", seed=3)
    assert (3 * 8 + 5, 8) in cpu
    assert cpu[-1] == (100000, 256)
    assert v.sweep("gpu", seed=3)[-1] == (1000000, 256)
    quick = v.sweep("cpu", seed=3, quick=True)
    assert all(n < 100000 for n, _ in quick)


def test_sweep_quick_uses_first_two_tpb(fixture_root):
    v = discover(fixture_root)["p99"].variants["simple"]
    assert {tpb for _, tpb in v.sweep("cpu", seed=4, quick=True)} == {8, 32}


def test_sweep_integer_max_n_and_tpb_1(tmp_path):
    d = tmp_path / "puzzles" / "p10"
    d.mkdir(parents=True)
    (d / "puzzle.json").write_text(json.dumps({"title": "t", "variants": {
        "a": {"summary": "s", "tpb": [1, 64], "max_n": 50, "large_n": None}}}))
    v = load_puzzle(d).variants["a"]
    cases = v.sweep("cpu", seed=5)
    assert all(1 <= n <= 50 for n, _ in cases)
    assert (1, 1) in cases and (50, 64) in cases


@pytest.mark.parametrize("data, fragment", [
    ("{not json", "not valid JSON"),
    (json.dumps({"variants": {}}), "non-empty"),
    (json.dumps({"variants": {"a": {"tpb": []}}}), "tpb"),
    (json.dumps({"variants": {"a": {"tpb": [8], "max_n": "3*n"}}}), "max_n"),
    (json.dumps({"variants": {"Bad_Name": {"tpb": [8]}}}), "lowercase"),
])
def test_invalid_declaration(tmp_path, cli, data, fragment):
    d = tmp_path / "puzzles" / "p10"
    d.mkdir(parents=True)
    (d / "puzzle.json").write_text(data)
    with pytest.raises(UsageError) as e:
        load_puzzle(d)
    assert fragment in str(e.value)
    r = cli("list", "--no-status", root=tmp_path)
    assert r.returncode == 2
    assert "p10" in r.output


def test_list_no_status(cli, fixture_root):
    r = cli("list", "--no-status", root=fixture_root)
    assert r.returncode == 0, r
    for text in ("p98", "Fixture reduction", "--tree", "p99", "--double-buffer", "one block, two buffers"):
        assert text in r.stdout
    assert "status" not in r.stdout


# ------------------------------------------------------------------ verdicts from the driver

@pytest.mark.parametrize("returncode, result, timed_out, kind, reason", [
    (0, {"verdict": "pass"}, False, "pass", "passed"),
    (1, {"verdict": "fail"}, False, "fail", "wrong answer"),
    (3, {"verdict": "race"}, False, "race", "race: result depends on thread order"),
    (4, {"verdict": "error"}, False, "error", "kernel error"),
    (2, None, False, "usage", "the driver rejected its command line"),
    (-11, None, False, "error", "crashed (SIGSEGV)"),
    (-6, None, False, "error", "crashed (SIGABRT)"),
    (None, None, True, "error", "timed out"),
    (0, None, False, "error", "crashed (exited without reporting a result)"),
    (0, {"verdict": "race"}, False, "race", "race: result depends on thread order"),
    (139, None, False, "error", "crashed (SIGSEGV)"),
    (7, None, False, "error", "crashed (exit code 7)"),
])
def test_classify(returncode, result, timed_out, kind, reason):
    assert classify(returncode, result, timed_out) == (kind, reason)


@pytest.mark.parametrize("kind, interleaved, reason, hint", [
    ("race_shared", False, "race: unsynchronized accesses to shared memory", "the report above names both lines"),
    ("race_device", False, "race: unsynchronized accesses to device memory", "the report above names both lines"),
    ("race_schedule", None, "race: result depends on thread order", "the answer changed when they ran in a different order"),
    ("race_schedule", False, "race: result depends on thread order", "the answer changed when they ran in a different order"),
    # The schedule that differed ran blocks side by side: the cause is between blocks, not within one.
    ("race_schedule", True, "race: result depends on how blocks interleave",
     "Running blocks side by side gave a different answer than running them one at a time"),
    ("race_shared", True, "race: unsynchronized accesses to shared memory", "the report above names both lines"),
    (None, None, "race: reported by the simulator", "Read the simulator's report above"),
])
def test_race_reason_follows_the_simulator_report(kind, interleaved, reason, hint):
    """A race the memory checker found is not described as an answer that changed between orders."""
    result = {"verdict": "race"}
    if kind:
        result["diagnosis"] = {"kind": kind, "sites": [], "block": None, "threads": [], "detail": None, "message": "m"}
        if interleaved is not None:  # (a diagnosis from before the field: none)
            result["diagnosis"]["interleaved"] = interleaved
    outcome = Outcome(["x"], 3, ["case: n=7", "cudasim: error: race in kernel k"], result, False, 0.1)
    assert (outcome.kind, outcome.reason) == ("race", reason)
    assert hint in commands._hint_for(outcome)


def test_parse_result_line():
    text, data = parse_result_line('RESULT {"verdict": "pass", "n": 8}')
    assert text == "" and data == {"verdict": "pass", "n": 8}
    text, data = parse_result_line('hello from printfRESULT {"verdict": "fail"}')
    assert text == "hello from printf" and data["verdict"] == "fail"
    assert parse_result_line("RESULT {broken")[1] is None
    assert parse_result_line("out: 1 2 3")[1] is None


def test_relevant_lines_keeps_the_drivers_lines_over_printf_output():
    from puzzlelib import driver_text
    said = driver_text.render('SAY {"key": "mismatch", "text": "mismatch: {count} of {total} outputs differ", '
                              '"count": 1, "total": 8}')
    assert isinstance(said, driver_text.SaidLine)
    # A printf line that reads like a diagnosis is still the program's: what a line is decides.
    lines = ["a[%d] = %d" % (i, i) for i in range(100)] + ["mismatch at index 7: got 1, expected 2", said]
    assert relevant_lines(lines) == ["mismatch: 1 of 8 outputs differ"]
    assert relevant_lines(["x", "y"]) == ["x", "y"]
    assert relevant_lines(["p%d" % i for i in range(30)]) == ["p%d" % i for i in range(10, 30)]


RUN_VERDICTS = [
    ("pass", 0, "\u2705 p99 --simple passed"),
    ("fail", 1, "\u274c p99 --simple failed: wrong answer"),
    ("race", 1, "\u274c p99 --simple failed: race: result depends on thread order"),
    ("error", 1, "\u274c p99 --simple failed: kernel error"),
    ("crash", 1, "\u274c p99 --simple failed: crashed (SIGSEGV)"),
    ("no-result", 1, "\u274c p99 --simple failed: crashed"),
    ("lie", 1, "\u274c p99 --simple failed: wrong answer"),
    ("usage", 2, "the driver rejected its command line"),
]


@pytest.mark.parametrize("mode, code, verdict", RUN_VERDICTS)
def test_run_verdicts(cli, fixture_root, fake_driver, mode, code, verdict):
    r = cli("run", "p99", "--simple", "--binary", fake_driver(mode), root=fixture_root)
    assert r.returncode == code, r
    assert verdict in r.stdout
    assert "RESULT {" not in r.output  # the machine line stays hidden


def test_run_shows_driver_output(cli, fixture_root, fake_driver, tmp_path):
    log = tmp_path / "log"
    r = cli("run", "p99", "--double-buffer", "--binary", fake_driver("fail", log=log), root=fixture_root)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "Puzzle p99 --double-buffer: one block, two buffers"
    assert "note:" not in r.stdout  # the driver names the backend; the CLI adds only why not the GPU
    assert "out:      0 1 3 7" in r.stdout and "expected: 0 1 3 6" in r.stdout
    assert "mismatch at index 3" in r.stdout
    assert read_log(log) == [["--variant", "double-buffer", "--show", "--n", "8", "--tpb", "8"]]
    assert "Compare the `out:` and `expected:` lines" in r.stdout


def test_run_pass_suggests_check(cli, fixture_root, fake_driver):
    r = cli("run", "p99", "--simple", "--solution", "--binary", fake_driver(), root=fixture_root)
    assert r.returncode == 0
    assert "check p99 --simple --solution" in r.stdout


# A driver whose kernel is right on the show input (a[i] = i) and wrong on every random input: the
# p14 --simple bug `local_i > offset` for `>=`, which a[0] = 0 hides.
SHOW_ONLY_DRIVER = """\
#!{python}
import json, sys
args = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
value = lambda flag: args[args.index(flag) + 1]
n, tpb = int(value("--n")), int(value("--tpb"))
if "--show" in args:
    print("config:   SIZE = %d, TPB = %d" % (n, tpb))
    print("input:    [0, 1, 2, 3]")
    print("out:      [0, 1, 3, 6]")
    print("expected: [0, 1, 3, 6]")
    verdict, seed = "pass", 0
else:
    seed = int(value("--seed"))
    print("case: SIZE = %d, TPB = %d, seed = %d" % (n, tpb, seed))
    print("mismatch: 3 of 4 outputs differ; first at index 1")
    print("  [1] expected -2, got 1")
    verdict = "fail"
print("RESULT " + json.dumps({{"verdict": verdict, "variant": value("--variant"), "n": n, "tpb": tpb, "seed": seed,
                              "mismatches": 3 if verdict == "fail" else 0}}))
sys.exit(0 if verdict == "pass" else 1)
"""


def show_only_driver(tmp_path, log):
    path = tmp_path / "show_only_driver.py"
    path.write_text(SHOW_ONLY_DRIVER.format(python=sys.executable, log=str(log)), encoding="utf-8")
    path.chmod(0o755)
    return path


def test_run_adds_one_random_input_of_the_show_size(cli, fixture_root, fake_driver, tmp_path):
    """A passing kernel: the show input, then one random input of the same size, whose seed is
    the same on every call; one line more than the show input's output."""
    log = tmp_path / "log"
    binary = fake_driver(log=log)
    seed = run_seed(discover(fixture_root)["p99"].variants["simple"])
    outputs = [cli("run", "p99", "--simple", "--binary", binary, root=fixture_root) for _ in range(2)]
    for r in outputs:
        assert r.returncode == 0, r
        lines = r.stdout.splitlines()
        verdict = lines.index("\u2705 p99 --simple passed")
        assert lines[verdict - 1] == "A random input of the same size passed too (seed %d)." % seed, r.stdout
        assert lines[verdict - 2] == "" and lines[verdict - 3].startswith("expected:"), r.stdout
    assert outputs[0].stdout == outputs[1].stdout
    show, random_input = read_log(log)[:2]
    assert show == ["--variant", "simple", "--show", "--n", "8", "--tpb", "8"]
    assert random_input == ["--variant", "simple", "--n", "8", "--tpb", "8", "--seed", str(seed)]


def test_run_fails_when_the_show_input_passes_and_the_random_one_does_not(cli, fixture_root, tmp_path):
    log = tmp_path / "log"
    binary = show_only_driver(tmp_path, log)
    seed = run_seed(discover(fixture_root)["p99"].variants["simple"])
    r = cli("run", "p99", "--simple", "--binary", binary, root=fixture_root)
    assert r.returncode == 1, r
    assert "\u2705" not in r.stdout and "passed too" not in r.stdout
    lines = r.stdout.splitlines()
    head = "The show input passed, but a random input of the same size failed (n=8 tpb=8 seed=%d):" % seed
    at = lines.index(head)
    assert lines[at + 1:at + 4] == ["case: SIZE = 8, TPB = 8, seed = %d" % seed,
                                    "mismatch: 3 of 4 outputs differ; first at index 1", "  [1] expected -2, got 1"]
    verdict = lines.index("\u274c p99 --simple failed on a random input: wrong answer")
    assert lines[verdict + 1] == "    replay: python3 scripts/puzzle.py run p99 --simple --n 8 --tpb 8 --seed %d " \
                                 "--backend cpu --binary %s" % (seed, binary)
    assert lines[verdict + 2] == "    trace: python3 scripts/puzzle.py trace p99 --simple --n 8 --tpb 8 --seed %d " \
                                 "--binary %s" % (seed, binary)
    assert "Look at the mismatches above" in lines[verdict + 3]
    assert read_log(log)[1] == ["--variant", "simple", "--n", "8", "--tpb", "8", "--seed", str(seed)]
    # The replay runs that very case again.
    replay = shlex.split(lines[verdict + 1].split("replay: ", 1)[1])[2:]
    again = cli(*replay, root=fixture_root)
    assert again.returncode == 1, again
    assert read_log(log)[-1] == read_log(log)[1]
    # And in Korean.
    ko = cli("run", "p99", "--simple", "--binary", binary, "--lang", "ko", root=fixture_root)
    assert ko.returncode == 1
    assert "위 입력은 통과했지만 같은 크기의 무작위 입력에서는 실패했습니다 (n=8 tpb=8 seed=%d):" % seed in ko.stdout
    assert "\u274c p99 --simple 무작위 입력에서 실패: 오답" in ko.stdout
    assert "    trace로 보기: python3 scripts/puzzle.py trace p99 --simple" in ko.stdout


def test_run_with_a_size_or_seed_runs_only_that_case(cli, fixture_root, tmp_path):
    log = tmp_path / "log"
    r = cli("run", "p99", "--simple", "--seed", "5", "--binary", show_only_driver(tmp_path, log), root=fixture_root)
    assert r.returncode == 1, r
    assert len(read_log(log)) == 1 and "random input of the same size" not in r.stdout


def test_run_timeout(cli, fixture_root, fake_driver):
    start = time.monotonic()
    r = cli("run", "p99", "--simple", "--binary", fake_driver("hang"), root=fixture_root,
            env={"PUZZLES_TIMEOUT": "1"})
    assert time.monotonic() - start < 30
    assert r.returncode == 1
    assert "\u274c p99 --simple failed: timed out" in r.stdout


def test_run_with_seed_runs_a_random_case(cli, fixture_root, fake_driver, tmp_path):
    log = tmp_path / "log"
    binary = fake_driver(log=log)
    for _ in range(2):
        r = cli("run", "p99", "--simple", "--seed", "42", "--binary", binary, root=fixture_root)
        assert r.returncode == 0, r
        assert "case: n=" in r.stdout
    first, second = read_log(log)
    assert first == second  # the seed fixes the size
    args = dict(zip(first[2::2], first[3::2]))
    assert first[:2] == ["--variant", "simple"]
    assert args["--tpb"] == "8" and args["--seed"] == "42"
    assert 1 <= int(args["--n"]) <= 8


def test_run_exact_case(cli, fixture_root, fake_driver, tmp_path):
    log = tmp_path / "log"
    r = cli("run", "p99", "--multi-block", "--n", "77", "--tpb", "32", "--seed", "9",
            "--binary", fake_driver(log=log), root=fixture_root)
    assert r.returncode == 0
    assert read_log(log) == [["--variant", "multi-block", "--n", "77", "--tpb", "32", "--seed", "9"]]


def test_missing_binary_is_a_setup_error_not_a_failed_puzzle(cli, fixture_root, tmp_path):
    r = cli("run", "p99", "--simple", "--binary", tmp_path / "nope", root=fixture_root)
    assert r.returncode == 2, r
    assert "\u274c p99 --simple failed: could not start the program" in r.stdout
    assert "not with your code" in r.stdout


# ---------------------------------------------------------------------------------- check

def case_args(call):
    return dict(zip(call[2::2], call[3::2]))


def test_check_all_pass(cli, fixture_root, fake_driver, tmp_path):
    log = tmp_path / "log"
    r = cli("check", "p99", "--seed", "100", "--binary", fake_driver(log=log), root=fixture_root)
    assert r.returncode == 0, r
    assert "seed: 100 (replay with --seed 100)" in r.stdout
    for v in ("p99 --simple", "p99 --double-buffer", "p99 --multi-block"):
        assert "\u2705 %s: pass" % v in r.stdout
    assert "variant" in r.stdout and "verdict" in r.stdout and "seconds" in r.stdout
    assert "3 of 3 variants passed" in r.stdout
    assert "\r" not in r.stdout  # no progress overwriting when not on a terminal

    calls = read_log(log)
    puzzles = discover(fixture_root)["p99"]
    by_variant = {}
    for call in calls:
        by_variant.setdefault(call[1], []).append(call)
    for name, v in puzzles.variants.items():
        expected = v.sweep("cpu", 100)
        got = [(int(case_args(c)["--n"]), int(case_args(c)["--tpb"])) for c in by_variant[name]]
        assert got == expected
        seeds = [int(case_args(c)["--seed"]) for c in by_variant[name]]
        # the input seeds of `grade --seed 100`, so a graded failure replays with check
        assert seeds == [case_seed(100, "p99", name, i) for i in range(len(expected))]
        assert len(set(seeds)) == len(seeds)
    assert by_variant["multi-block"][-1][3] == "100000"  # large_n for the cpu backend


def test_check_replays_the_same_cases(cli, fixture_root, fake_driver, tmp_path):
    logs = [tmp_path / "a", tmp_path / "b"]
    cli("check", "p99", "--seed", "7", "--binary", fake_driver(log=logs[0]), root=fixture_root)
    cli("check", "p99", "--simple", "--seed", "7", "--binary", fake_driver(log=logs[1]), root=fixture_root)
    simple = [c for c in read_log(logs[0]) if c[1] == "simple"]
    assert simple == read_log(logs[1])


def test_check_stops_variant_at_first_failure(cli, fixture_root, fake_driver, tmp_path):
    log = tmp_path / "log"
    binary = fake_driver(modes={"simple": {"mode": "fail", "n_over": 40}}, log=log)
    r = cli("check", "p99", "--seed", "11", "--binary", binary, root=fixture_root)
    assert r.returncode == 1, r
    simple = [c for c in read_log(log) if c[1] == "simple"]
    sizes = [int(case_args(c)["--n"]) for c in simple]
    assert sizes[-1] > 40 and all(n <= 40 for n in sizes[:-1])
    last = case_args(simple[-1])
    assert "\u274c p99 --simple: fail (wrong answer)" in r.stdout
    replay = "replay: python3 scripts/puzzle.py run p99 --simple --n %s --tpb %s --seed %s" % (
        last["--n"], last["--tpb"], last["--seed"])
    assert replay in r.stdout
    # ... and the trace of the same case, on the line after it
    trace = "    trace: python3 scripts/puzzle.py trace p99 --simple --n %s --tpb %s --seed %s --binary %s" % (
        last["--n"], last["--tpb"], last["--seed"], binary)
    lines = r.stdout.splitlines()
    assert lines[lines.index(trace) - 1].startswith("    " + replay), r.stdout
    assert "    | mismatch at index 3: got 7, expected 6" in r.stdout
    # the other variants still ran
    assert "\u2705 p99 --double-buffer: pass" in r.stdout
    assert "\u2705 p99 --multi-block: pass" in r.stdout
    assert "2 of 3 variants passed" in r.stdout


@pytest.mark.parametrize("mode, verdict", [
    ("race", "race (result depends on thread order)"),
    ("error", "error (kernel error)"),
    ("crash", "error (crashed (SIGSEGV))"),
    ("hang", "error (timed out)"),
])
def test_check_verdicts(cli, fixture_root, fake_driver, mode, verdict):
    r = cli("check", "p99", "--simple", "--seed", "1", "--binary", fake_driver(mode), root=fixture_root,
            env={"PUZZLES_TIMEOUT": "1"})
    assert r.returncode == 1, r
    assert "\u274c p99 --simple: %s, failed at case 1 of" % verdict in r.stdout
    assert "replay: " in r.stdout


def test_check_quick(cli, fixture_root, fake_driver, tmp_path):
    log = tmp_path / "log"
    r = cli("check", "p99", "--multi-block", "--quick", "--seed", "3", "--binary", fake_driver(log=log),
            root=fixture_root)
    assert r.returncode == 0
    calls = read_log(log)
    assert {case_args(c)["--tpb"] for c in calls} == {"8", "256"}
    assert all(int(case_args(c)["--n"]) < 100000 for c in calls)


def test_check_gpu_large_n(cli, fixture_root, fake_driver, tmp_path):
    log = tmp_path / "log"
    r = cli("check", "p99", "--multi-block", "--backend", "gpu", "--seed", "3",
            "--binary", fake_driver(log=log), root=fixture_root)
    assert r.returncode == 0, r
    assert read_log(log)[-1][3] == "1000000"


def test_check_binary_needs_one_puzzle(cli, fixture_root, fake_driver):
    r = cli("check", "--binary", fake_driver(), root=fixture_root)
    assert r.returncode == 2


def test_check_gives_no_trace_command_for_blocks_trace_cannot_draw(cli, fixture_root, fake_driver):
    d = fixture_root / "puzzles" / "p97"
    d.mkdir()
    (d / "puzzle.json").write_text(json.dumps({"title": "Fixture wide blocks", "summary": "blocks of 512", "variants": {
        "wide": {"summary": "one block of 512 threads", "show": {"n": 8, "tpb": 8}, "tpb": [2 * TRACE_MAX_THREADS],
                 "max_n": "tpb", "large_n": None}}}), encoding="utf-8")
    (d / "p97.cu").write_text("// learner file\n", encoding="utf-8")
    r = cli("check", "p97", "--seed", "1", "--binary", fake_driver("fail"), root=fixture_root)
    assert r.returncode == 1, r
    assert "replay: python3 scripts/puzzle.py run p97 --wide --n 1 --tpb 512" in r.stdout
    assert "trace p97" not in r.stdout
    assert "    trace: not for this case: its blocks have 512 threads, and trace draws at most %d" % TRACE_MAX_THREADS \
        in r.stdout.splitlines()


def test_check_gives_no_trace_command_for_a_gpu_binary(cli, fixture_root, fake_driver):
    r = cli("check", "p99", "--simple", "--seed", "1", "--backend", "gpu", "--binary", fake_driver("fail"),
            root=fixture_root)
    assert r.returncode == 1, r
    assert "replay: python3 scripts/puzzle.py run p99 --simple" in r.stdout and "puzzle.py trace" not in r.stdout
    assert "    trace:" not in r.stdout


@pytest.mark.parametrize("result, block", [
    (None, 0),
    ({"origin": {"nodes": [{"kind": "write", "block": [3, 0, 0], "thread": [1, 0, 0]}]}}, 3),
    ({"origin": {"nodes": [{"kind": "write", "block": [3, 1, 0]}]}}, 0),  # 2D grid: no blockIdx.x to give
    ({"diagnosis": {"kind": "race_shared", "block": [5, 0, 0]}}, 5),
    ({"diagnosis": {"kind": "race_schedule", "block": None}}, 0),
])
def test_the_trace_command_follows_the_block_that_went_wrong(result, block):
    assert commands.failing_block(result) == block
    variant = load_puzzle(REPO / "puzzles" / "p14").variants["complete"]
    lines = commands.case_lines(variant, 100, 8, 7, False, "cpu", None, result)
    assert lines[1].endswith("--n 100 --tpb 8 --seed 7" + (" --blockidx %d" % block if block else "")), lines


def test_trace_takes_the_flags_of_a_replay_line(cli, fixture_root):
    r = cli("trace", "--help", root=fixture_root)
    assert "--seed S" in r.stdout and "--backend cpu" in r.stdout
    # A replay line's flags are trace's: only a GPU cannot be traced, and says so.
    r = cli("trace", "p99", "--simple", "--n", "3", "--tpb", "8", "--seed", "5", "--backend", "gpu",
            root=fixture_root)
    assert r.returncode == 2 and "a GPU run cannot be traced" in r.stderr, r


# ------------------------------------------------------------------------------- build errors

GCC_OUTPUT = """\
[1/3] Building CXX object CMakeFiles/p99_cpu.dir/p99.cu.cpp.o
FAILED: CMakeFiles/p99_cpu.dir/p99.cu.cpp.o
/usr/bin/c++ -O2 -c {root}/build/p99.cu.cpp
{root}/puzzles/p99/p99.cu: In function 'void scan(int*, int)':
{root}/puzzles/p99/p99.cu:12:5: error: 'foo' was not declared in this scope
   12 |     foo(x);
      |     ^~~
{root}/harness/src/driver.cpp:40:1: error: something in the harness
{root}/puzzles/p99/p99.cu:3:1: note: declared here
ninja: build stopped: subcommand failed.
"""

NVCC_OUTPUT = """\
{root}/puzzles/p99/p99.cu(7): error: identifier "tid" is undefined
      out[tid] = 0;
          ^
1 error detected in the compilation of "{root}/puzzles/p99/p99.cu".
"""


def test_build_summary_gcc(tmp_path):
    text = bld.build_failure_summary(GCC_OUTPUT.format(root=tmp_path), tmp_path, "puzzles/p99/p99.cu", "p99_cpu")
    assert "puzzles/p99/p99.cu:12:5: error: 'foo' was not declared in this scope" in text
    assert "12 |     foo(x);" in text
    assert "puzzles/p99/p99.cu:3:1: note: declared here" in text
    assert "driver.cpp" not in text  # errors in other files are not the learner's
    assert str(tmp_path) not in text
    assert text.rstrip().endswith("Fix the first error above, then run the same command again.")


def test_build_summary_nvcc(tmp_path):
    text = bld.build_failure_summary(NVCC_OUTPUT.format(root=tmp_path), tmp_path, "puzzles/p99/p99.cu", "p99_gpu")
    assert 'puzzles/p99/p99.cu(7): error: identifier "tid" is undefined' in text
    assert "out[tid] = 0;" in text


def test_build_summary_other_errors(tmp_path):
    text = bld.build_failure_summary("x.o: undefined reference to `scan(int*)'\ncollect2: error: ld returned 1\n",
                                     tmp_path, "puzzles/p99/p99.cu", "p99_cpu")
    assert "undefined reference" in text


GCC_LABELS = """\
{root}/puzzles/p99/p99.cu:9:14: error: cannot convert 'float*' to 'int*'
    9 |   scan(out, buffer);
      |             ^~~~~~
      |             |
      |             float*
{root}/puzzles/p99/p99.cu:2:6: note:   initializing argument 2 of 'void scan(int*, int*)'
"""


def test_build_summary_keeps_the_type_label_lines(tmp_path):
    # g++ names the offending type on a label line under the caret; it is the useful part.
    text = bld.build_failure_summary(GCC_LABELS.format(root=tmp_path), tmp_path, "puzzles/p99/p99.cu", "p99_cpu")
    body = [l.strip() for l in text.splitlines()]
    i = body.index("9 |   scan(out, buffer);")
    assert body[i + 1:i + 4] == ["|             ^~~~~~", "|             |", "|             float*"]
    assert "note:   initializing argument 2" in text


SIM_REFUSAL = """\
In file included from {root}/build/generated/p99_cpu.cu.cpp:3:
{root}/harness/sim/include/cub/cub.cuh:2:2: error: #error "cudasim: CUB is not available on the CPU simulator; the puzzles ask you to write the collective yourself."
    2 | #error "cudasim: CUB is not available on the CPU simulator; the puzzles ask you to write the collective yourself."
      |  ^~~~~
{root}/puzzles/p99/p99.cu:5:16: error: 'cub' has not been declared
{root}/puzzles/p99/p99.cu:40:3: error: '__match_any_sync' was not declared in this scope; did you mean '__ballot_sync'?
   40 |   __match_any_sync(0xffffffffu, v);
      |   ^~~~~~~~~~~~~~~~
      |   __ballot_sync
{root}/puzzles/p99/p99.cu:41:3: error: 'cudaFrobnicate' was not declared in this scope
{root}/puzzles/p99/p99.cu:42:3: error: 'my_helper' was not declared in this scope
"""


def test_build_summary_shows_the_simulators_own_explanation(tmp_path):
    text = bld.build_failure_summary(SIM_REFUSAL.format(root=tmp_path), tmp_path, "puzzles/p99/p99.cu", "p99_cpu")
    assert "harness/sim/include/cub/cub.cuh:2:2: error: #error \"cudasim: CUB is not available on the CPU " \
           "simulator" in text
    # the explanation comes before the learner's errors it explains
    assert text.index("cub.cuh") < text.index("'cub' has not been declared")
    assert str(tmp_path) not in text


def test_build_summary_names_cuda_the_simulator_lacks(tmp_path):
    text = bld.build_failure_summary(SIM_REFUSAL.format(root=tmp_path), tmp_path, "puzzles/p99/p99.cu", "p99_cpu")
    assert "__match_any_sync is not supported by the CPU simulator; use __ballot_sync." in text
    assert "cudaFrobnicate is not part of the CPU simulator's CUDA" in text
    assert "my_helper" not in text.split("Fix the first error")[0].split("cudaFrobnicate is not part")[1]
    # nothing to add when no CUDA name is missing
    assert bld.unsupported_cuda_advice("p.cu:1:1: error: 'my_helper' was not declared in this scope") == []


def test_tidy_line_drops_addr2line_discriminators():
    assert tidy_line("    at puzzles/p14/p14.cu:56 (discriminator 1)") == "    at puzzles/p14/p14.cu:56"
    assert tidy_line("out:      [1, 2]") == "out:      [1, 2]"


def test_check_names_the_failing_case_and_points_at_lines_that_exist(cli, fixture_root, fake_driver):
    r = cli("check", "p99", "--simple", "--seed", "1", "--binary", fake_driver("fail"), root=fixture_root)
    assert r.returncode == 1, r
    total = len(discover(fixture_root)["p99"].variants["simple"].sweep("cpu", 1))
    assert "\u274c p99 --simple: fail (wrong answer), failed at case 1 of %d:" % total in r.stdout
    row = [l for l in r.stdout.splitlines() if l.startswith("p99 --simple ")][0]
    assert "failed at case 1 of %d" % total in row and "1/%d" % total not in row
    # the fake driver prints no out:/expected: lines, so the hint must not send the learner to them
    assert "Compare the `out:`" not in r.stdout
    assert "Look at the mismatches above" in r.stdout
    r = cli("check", "p99", "--simple", "--seed", "1", "--binary", fake_driver(), root=fixture_root)
    row = [l for l in r.stdout.splitlines() if l.startswith("p99 --simple ")][0]
    assert "%d of %d" % (total, total) in row


def test_unknown_target_detection():
    assert bld.unknown_target("ninja: error: unknown target 'p14_gpu'", "p14_gpu")
    assert bld.unknown_target("gmake: *** No rule to make target 'p14_gpu'.  Stop.", "p14_gpu")
    assert not bld.unknown_target("No rule to make target 'puzzles/p14/p14.cu', needed by 'x'.  Stop.", "p14_gpu")


TOY_CMAKE = """\
cmake_minimum_required(VERSION 3.16)
project(fixture CXX)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
foreach(kind puzzles solutions)
  if(kind STREQUAL "puzzles")
    set(t p99_cpu)
  else()
    set(t p99_solution_cpu)
  endif()
  set_source_files_properties(${kind}/p99/p99.cu PROPERTIES LANGUAGE CXX)
  add_executable(${t} driver.cpp ${kind}/p99/p99.cu)
  target_compile_options(${t} PRIVATE -x c++)
endforeach()
"""

TOY_DRIVER = r"""
#include <cstdio>
#include <cstring>
int answer();
int main(int argc, char** argv) {
  const char* variant = "?";
  for (int i = 1; i + 1 < argc; ++i) if (!strcmp(argv[i], "--variant")) variant = argv[i + 1];
  int a = answer();
  printf("out:      %d\nexpected: 42\n", a);
  printf("RESULT {\"verdict\": \"%s\", \"variant\": \"%s\", \"n\": 1, \"tpb\": 1, \"seed\": 0, \"mismatches\": %d}\n",
         a == 42 ? "pass" : "fail", variant, a == 42 ? 0 : 1);
  return a == 42 ? 0 : 1;
}
"""


@pytest.fixture
def toy_project(fixture_root):
    """The fixture root as a tiny CMake project whose p99 targets compile the .cu files as C++."""
    if not shutil.which("cmake") or not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("needs cmake and a C++ compiler")
    (fixture_root / "CMakeLists.txt").write_text(TOY_CMAKE)
    (fixture_root / "driver.cpp").write_text(TOY_DRIVER)
    (fixture_root / "puzzles" / "p99" / "p99.cu").write_text("int answer() { return 41; }\n")
    (fixture_root / "solutions" / "p99").mkdir(parents=True)
    (fixture_root / "solutions" / "p99" / "p99.cu").write_text("int answer() { return 42; }\n")
    return fixture_root


def test_build_and_run_with_cmake(cli, toy_project):
    env = {"PUZZLES_BUILD_DIR": str(toy_project / "build")}
    r = cli("run", "p99", "--simple", "--solution", "--backend", "cpu", root=toy_project, env=env)
    assert r.returncode == 0, r
    assert "source: solutions/p99/p99.cu" in r.stdout
    assert "\u2705 p99 --simple passed" in r.stdout
    r = cli("run", "p99", "--simple", "--backend", "cpu", root=toy_project, env=env)
    assert r.returncode == 1, r
    assert "\u274c p99 --simple failed: wrong answer" in r.stdout

    (toy_project / "puzzles" / "p99" / "p99.cu").write_text("int answer() {\n  return 42\n}\n")
    r = cli("run", "p99", "--simple", "--backend", "cpu", root=toy_project, env=env)
    assert r.returncode == 2, r
    assert "puzzles/p99/p99.cu:2:" in r.stderr and "error" in r.stderr
    assert str(toy_project / "puzzles") not in r.stderr
    assert "Fix the first error above, then run the same command again." in r.stderr

    r = cli("check", "p99", "--simple", "--backend", "cpu", root=toy_project, env=env)
    assert r.returncode == 2, r
    assert "\u274c p99 --simple: does not build" in r.stdout

    r = cli("list", "--backend", "cpu", root=toy_project, env=env)
    assert r.returncode == 0, r
    rows = {l.split()[0]: l for l in r.stdout.splitlines() if l.startswith("p9")}
    assert "does not build" in rows["p98"]  # the toy project has no p98 targets
    assert "does not build" in rows["p99"]


def test_build_prints_progress_when_output_is_not_a_terminal(cli, toy_project):
    # Redirected output (an editor, CI, a pipe) still sees what the first build is doing.
    env = {"PUZZLES_BUILD_DIR": str(toy_project / "build")}
    r = cli("run", "p99", "--simple", "--solution", "--backend", "cpu", root=toy_project, env=env)
    assert r.returncode == 0, r
    assert "configuring build" in r.stderr
    steps = [l for l in r.stderr.splitlines() if l.startswith("building p99_solution_cpu: [")]
    assert steps, r.stderr
    assert "building" not in r.stdout  # stdout keeps only the program's result
    r = cli("run", "p99", "--simple", "--solution", "--backend", "cpu", root=toy_project, env=env)
    assert "building" not in r.stderr  # nothing to build, nothing said


def test_first_configure_says_when_fibers_fall_back_to_ucontext(cli, toy_project):
    cmake = toy_project / "CMakeLists.txt"
    cmake.write_text(cmake.read_text() + 'message(STATUS "cudasim fibers: ucontext (install Boost.Context)")\n')
    env = {"PUZZLES_BUILD_DIR": str(toy_project / "build")}
    r = cli("run", "p99", "--simple", "--solution", "--backend", "cpu", root=toy_project, env=env)
    assert r.returncode == 0, r
    assert "Boost.Context was not found" in r.stderr and "libboost-context-dev" in r.stderr
    r = cli("run", "p99", "--simple", "--solution", "--backend", "cpu", root=toy_project, env=env)
    assert "Boost.Context was not found" not in r.output  # once, when the build folder is configured


def test_gpu_backend_without_gpu(cli, toy_project, monkeypatch):
    if bld.gpu_present():
        pytest.skip("this machine has a GPU")
    r = cli("run", "p99", "--simple", "--backend", "gpu", root=toy_project,
            env={"PUZZLES_BUILD_DIR": str(toy_project / "build")})
    assert r.returncode == 2
    assert "--backend gpu needs an NVIDIA GPU" in r.output


# ---------------------------------------------------------------------------------- test

def test_test_command_explains_missing_dependencies(monkeypatch, capsys):
    from puzzlelib import testcmd
    monkeypatch.setattr(testcmd, "missing_deps", lambda: [
        testcmd.Dep("Catch2 v2", apt="catch2"), testcmd.Dep("Boost.Context", apt="libboost-context-dev"),
        testcmd.Dep("pytest", pip="pytest")])
    monkeypatch.setattr(testcmd.os, "geteuid", lambda: 1000, raising=False)
    assert testcmd.cmd_test(REPO, []) == 2
    err = capsys.readouterr().err
    assert "sudo apt-get install catch2 libboost-context-dev" in err
    assert "python3 -m pip install pytest" in err
    assert "pixi run test" in err


def test_dependency_probe_runs():
    from puzzlelib import testcmd
    assert all(isinstance(d.name, str) for d in testcmd.missing_deps())


# ---------------------------------------------------------------------------------- pixi

def test_sync_pixi_check_passes():
    r = run_cli("sync-pixi", "--check")
    assert r.returncode == 0, r


def test_sync_pixi_rewrites_only_its_section(cli, fixture_root):
    r = cli("sync-pixi", "--check", root=fixture_root)
    assert r.returncode == 1
    assert "out of date" in r.output
    assert cli("sync-pixi", root=fixture_root).returncode == 0
    assert cli("sync-pixi", "--check", root=fixture_root).returncode == 0
    text = (fixture_root / "pixi.toml").read_text()
    assert '[tasks.after]\ncmd = "true"' in text
    tasks = toml_module().loads(text)["tasks"]
    assert tasks["p99"]["cmd"] == "python3 scripts/puzzle.py run p99"
    assert "Fixture scan" in tasks["p99"]["description"]
    assert set(tasks) == {"test", "after", "p98", "p99"}


def test_sync_pixi_needs_markers(cli, fixture_root):
    (fixture_root / "pixi.toml").write_text('[tasks]\nx = "true"\n')
    r = cli("sync-pixi", root=fixture_root)
    assert r.returncode == 2
    assert "BEGIN generated puzzle tasks" in r.output


def load_pixi():
    return toml_module().loads((REPO / "pixi.toml").read_text(encoding="utf-8"))


def test_pixi_manifest_basics():
    data = load_pixi()
    ws = data.get("workspace") or data.get("project")
    assert ws["name"] == "cuda-sync-puzzles"
    assert set(ws["platforms"]) == {"linux-64", "osx-arm64", "osx-64"}
    for dep in ("python", "cmake", "cxx-compiler", "ninja", "catch2", "libboost-devel", "pytest"):
        assert dep in data["dependencies"]
    assert data["dependencies"]["catch2"].startswith("2.13")
    assert data["feature"]["cuda"]["platforms"] == ["linux-64"]
    assert "cuda-nvcc" in data["feature"]["cuda"]["dependencies"]
    assert "cuda" in data["environments"]


def test_pixi_tasks_have_descriptions():
    for name, task in load_pixi()["tasks"].items():
        assert isinstance(task, dict) and task.get("description"), "task %s has no description" % name


def puzzle_task_names(tasks):
    return {name for name, t in tasks.items() if t["cmd"].startswith("python3 scripts/puzzle.py run ")}


def test_pixi_puzzle_tasks_match_puzzle_dirs():
    tasks = load_pixi()["tasks"]
    assert puzzle_task_names(tasks) == set(real_puzzles())
    for name in puzzle_task_names(tasks):
        assert tasks[name]["cmd"] == "python3 scripts/puzzle.py run %s" % name


def pixi_task_params():
    try:
        tasks = load_pixi()["tasks"]
    except BaseException:  # skip (no toml reader) or a broken file: test_pixi_* report it
        return []
    return sorted(tasks)


@pytest.mark.parametrize("name", pixi_task_params())
def test_pixi_task_runs(name):
    """Run each task the way pixi does: its cmd, split like a shell, with extra arguments appended."""
    tasks = load_pixi()["tasks"]
    argv = shlex.split(tasks[name]["cmd"])
    assert argv[0] == "python3"
    script = REPO / argv[1]
    if name in puzzle_task_names(tasks) and os.environ.get("PUZZLES_BUILD_DIR"):
        puzzle = real_puzzles()[name]
        first = next(iter(puzzle.variants.values()))
        extra = [first.flag, "--solution", "--backend", "cpu"]
    else:
        if not script.is_file() and name == "bench-sim":
            pytest.skip("scripts/bench_sim.py is not in the tree yet")
        extra = ["--help"]
    assert script.is_file(), "task %s runs %s, which does not exist" % (name, argv[1])
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env.pop("PUZZLES_ROOT", None)
    import subprocess
    proc = subprocess.run([sys.executable] + argv[1:] + extra, cwd=str(REPO), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    assert proc.returncode == 0, proc.stdout.decode("utf-8", "replace")


# ------------------------------------------------------------- the real puzzles (built tree)

def first_variant_flag(p):
    return "--simple" if "simple" in p.variants else next(iter(p.variants.values())).flag


def test_p14_solution_passes(p14):
    flag = first_variant_flag(p14)
    r = run_cli("run", "p14", flag, "--solution", "--backend", "cpu", timeout=600)
    assert r.returncode == 0, r
    assert "out:" in r.stdout and "expected:" in r.stdout
    assert "\u2705" in r.stdout


def test_p14_unsolved_learner_file_fails(p14):
    if (REPO / "puzzles/p14/p14.cu").read_bytes() == (REPO / "solutions/p14/p14.cu").read_bytes():
        pytest.skip("puzzles/p14/p14.cu is still the solution (no skeleton yet)")
    flag = first_variant_flag(p14)
    r = run_cli("run", "p14", flag, "--backend", "cpu", timeout=600)
    assert r.returncode == 1, r
    assert "\u274c" in r.stdout


def test_p14_check_solution_quick(p14):
    r = run_cli("check", "p14", "--solution", "--quick", timeout=1200)
    assert r.returncode == 0, r
