"""The failing case can be watched (issue 5): `check` and `run` name the `trace` command of the
case that failed, `trace --seed` runs that very case (the same random input, not the show input),
and `run` also tries one random input of the show size, which finds what a[i] = i hides.
Runs against the test build (PUZZLES_BUILD_DIR), like test_trace.py.
"""

import os
import re
import shlex
import subprocess
import sys

import pytest

from test_trace import REPO, planted

SHOWN = "python3 scripts/puzzle.py"


def cli(*args):
    """scripts/puzzle.py in English: (exit code, stdout lines without the build's progress)."""
    if not os.environ.get("PUZZLES_BUILD_DIR"):
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree (python3 scripts/puzzle.py test does)")
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PUZZLE_LANG="en")
    env.pop("PUZZLES_ROOT", None)
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "puzzle.py")] + [str(a) for a in args],
                       cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       universal_newlines=True, encoding="utf-8", timeout=600)
    return r.returncode, [l for l in r.stdout.splitlines() if not l.startswith("building ")]


def given(line, label):
    """The command a `    replay: ...` or `    trace: ...` line gives, as arguments of puzzle.py."""
    text = line.strip()[len(label) + 2:]
    assert text.startswith(SHOWN + " "), line
    return shlex.split(text[len(SHOWN) + 1:])


def line_of(lines, prefix):
    found = [l for l in lines if l.strip().lstrip("| ").startswith(prefix)]
    assert found, "no %r line in:\n%s" % (prefix, "\n".join(lines))
    return found[0].strip().lstrip("| ")


def traced_input(lines):
    """The values the traced block read from the input array, in the first step."""
    m = next(re.match(r"^  global: \S+ read a\[0…(\d+)\] = (.*)$", l) for l in lines if l.startswith("  global: "))
    assert m, lines
    return m.group(2).split()


def test_trace_seed_traces_the_input_run_seed_runs():
    binary = planted("p14_simple_offset_strictly_greater")
    case = ["--n", "8", "--tpb", "8", "--seed", "7"]
    rc, run = cli("run", "p14", "--simple", "--binary", binary, *case)
    assert rc == 1, "\n".join(run)
    rc, trace = cli("trace", "p14", "--simple", "--binary", binary, *case)
    assert rc == 1, "\n".join(trace)
    assert trace[0].endswith("n=8 tpb=8 seed=7, block 0"), trace[0]
    shown = line_of(run, "input:")
    assert line_of(trace, "input:") == shown
    assert line_of(trace, "case: SIZE") == line_of(run, "case: SIZE") == "case: SIZE = 8, TPB = 8, blocks = 1, seed = 7"
    # What the traced block read is that input (the driver ran the seed's input, not a[i] = i) ...
    values = [v.strip() for v in shown.split("[", 1)[1].rstrip("]").split(",")]
    assert traced_input(trace) == values
    assert values != [str(i) for i in range(8)]
    # ... and its mismatch, out and expected come below the steps, as run prints them.
    for prefix in ("mismatch:", "out:", "expected:"):
        assert line_of(trace, prefix) == line_of(run, prefix)
    assert trace[-1].endswith("`%s run p14 --simple --n 8 --tpb 8 --seed 7 --backend cpu`)" % SHOWN), trace[-1]
    # Without --n and --tpb, --seed picks the size as `run --seed` does.
    rc, run = cli("run", "p14", "--simple", "--binary", binary, "--seed", "11")
    rc2, trace = cli("trace", "p14", "--simple", "--binary", binary, "--seed", "11")
    assert line_of(run, "case: SIZE") == line_of(trace, "case: SIZE"), (run, trace)


def test_check_names_a_trace_command_that_traces_the_failing_case():
    binary = planted("p14_simple_offset_strictly_greater")
    rc, check = cli("check", "p14", "--simple", "--binary", binary, "--backend", "cpu", "--seed", "1")
    assert rc == 1, "\n".join(check)
    replay = next(l for l in check if l.startswith("    replay: "))
    trace = check[check.index(replay) + 1]
    assert trace.startswith("    trace: "), "\n".join(check)
    args = given(trace, "trace")
    case = given(replay, "replay")
    n, tpb, seed = (case[case.index(flag) + 1] for flag in ("--n", "--tpb", "--seed"))
    assert args[:9] == ["trace", "p14", "--simple", "--n", n, "--tpb", tpb, "--seed", seed], args
    rc, traced = cli(*args)
    assert rc == 1, "\n".join(traced)  # the case fails: not a usage error (2)
    assert traced[0].endswith("n=%s tpb=%s seed=%s, block 0" % (n, tpb, seed)), traced[0]
    assert line_of(traced, "input:") == line_of(check, "input:")
    # The replay line's own flags (--backend cpu included) are trace's too.
    rc, replayed = cli("trace", *case[1:])
    assert rc == 1, "\n".join(replayed)
    assert line_of(replayed, "input:") == line_of(check, "input:")


def test_run_fails_when_a_random_input_of_the_show_size_fails():
    """p14 --simple with `local_i > offset`: right on a[i] = i (a[0] = 0 adds nothing), wrong on a
    random input of the same size, so `run` must not say ✅."""
    binary = planted("p14_simple_offset_strictly_greater")
    rc, run = cli("run", "p14", "--simple", "--binary", binary, "--backend", "cpu")
    assert rc == 1, "\n".join(run)
    text = "\n".join(run)
    assert "input:    [0, 1, 2, 3, 4, 5, 6, 7]" in run and line_of(run, "out:") == \
        "out:      [0, 1, 3, 6, 10, 15, 21, 28]", text  # the show input passed
    assert "\u2705" not in text and " passed\n" not in text
    head = next(l for l in run if l.startswith("The show input passed, but a random input of the same size failed"))
    seed = re.search(r"\(n=8 tpb=8 seed=(\d+)\):$", head).group(1)
    assert "\u274c p14 --simple failed on a random input: wrong answer" in run, text
    assert re.search(r"first wrong element: out\[\d+\] = -?\d+, expected -?\d+", text), text
    replay = next(l for l in run if l.startswith("    replay: "))
    trace = next(l for l in run if l.startswith("    trace: "))
    assert given(replay, "replay")[:9] == ["run", "p14", "--simple", "--n", "8", "--tpb", "8", "--seed", seed]
    rc, traced = cli(*given(trace, "trace"))
    assert rc == 1, "\n".join(traced)
    assert traced[0].endswith("n=8 tpb=8 seed=%s, block 0" % seed)
    assert line_of(traced, "input:") == line_of(run[run.index(head):], "input:")


def test_run_of_a_right_kernel_says_which_random_input_passed_too():
    rc, run = cli("run", "p14", "--simple", "--solution", "--backend", "cpu")
    assert rc == 0, "\n".join(run)
    verdict = run.index("\u2705 p14 --simple passed")
    assert re.match(r"^A random input of the same size passed too \(seed \d+\)\.$", run[verdict - 1]), run


def test_a_random_case_that_stops_shows_no_show_input():
    """A race stops the run before the driver prints the arrays; the show input's arrays (from
    puzzles/p14/expected) are not this case's and must not be shown for it."""
    rc, lines = cli("trace", "p14", "--simple", "--binary", planted("p14_simple_no_read_write_split"),
                    "--n", "8", "--tpb", "8", "--seed", "3")
    assert rc == 1, "\n".join(lines)
    assert lines[0].endswith("n=8 tpb=8 seed=3, block 0")
    assert not any(l.startswith(("config:", "input:", "expected:")) for l in lines), "\n".join(lines)
    rc, lines = cli("trace", "p14", "--simple", "--binary", planted("p14_simple_no_read_write_split"))
    assert "input:    [0, 1, 2, 3, 4, 5, 6, 7]" in lines  # the show input's, as before
