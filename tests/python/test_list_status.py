"""`list`'s status: the same for the same file on every call, the verdict of `check --quick --seed 1`,
remembered until the file changes.

A toy CMake project (the fixture puzzles p98/p99, as in test_cli.py) whose driver computes the
scan total of n elements with the learner's function: the learner file below is wrong only for
mid sizes, the shape of a scan loop capped at a fixed offset, which a status drawn from fresh
random sizes called solved on some calls and not on others.
"""

import re
import shutil

import pytest

from conftest import read_log
from test_cli import TOY_CMAKE

from puzzlelib.cases import STATUS_SEED, seeded_cases, status_cases
from puzzlelib.puzzles import discover

TOY_DRIVER = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
long long total(int n);
int main(int argc, char** argv) {
  const char* variant = "?";
  int n = 0, tpb = 0;
  long seed = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--variant")) variant = argv[i + 1];
    if (!strcmp(argv[i], "--n")) n = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--tpb")) tpb = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--seed")) seed = atol(argv[i + 1]);
  }
  if (const char* log = getenv("TOY_LOG")) {
    FILE* f = fopen(log, "a");
    fprintf(f, "[\"%s\", %d, %d]\n", variant, n, tpb);
    fclose(f);
  }
  if (const char* touch = getenv("TOY_TOUCH")) {  // the learner saves the file while the cases run
    FILE* f = fopen(touch, "a");
    fputs("// saved again\n", f);
    fclose(f);
  }
  long long got = total(n), want = (long long)n * (n + 1) / 2;
  printf("out:      %lld\nexpected: %lld\n", got, want);
  printf("RESULT {\"verdict\": \"%s\", \"variant\": \"%s\", \"n\": %d, \"tpb\": %d, \"seed\": %ld, \"mismatches\": %d}\n",
         got == want ? "pass" : "fail", variant, n, tpb, seed, got == want ? 0 : 1);
  return got == want ? 0 : 1;
}
"""

# Right for n < 20 and n >= 32 only.
MID_SIZE_BUG = "long long total(int n) { long long s = 0; for (int i = 1; i <= n; ++i) s += i; " \
               "return n >= 20 && n < 32 ? s - 1 : s; }\n"
RIGHT = "long long total(int n) { return (long long)n * (n + 1) / 2; }\n"
# Right up to n = 59: the quick cases (block sizes 8 and 32) pass; the full check (block size 100) fails.
LARGE_SIZE_BUG = "long long total(int n) { return (long long)n * (n + 1) / 2 - (n >= 60); }\n"


@pytest.fixture
def toy(fixture_root, tmp_path):
    if not shutil.which("cmake") or not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
        pytest.skip("needs cmake and a C++ compiler")
    (fixture_root / "CMakeLists.txt").write_text(TOY_CMAKE)
    (fixture_root / "driver.cpp").write_text(TOY_DRIVER)
    (fixture_root / "puzzles" / "p99" / "p99.cu").write_text(MID_SIZE_BUG)
    (fixture_root / "solutions" / "p99").mkdir(parents=True)
    (fixture_root / "solutions" / "p99" / "p99.cu").write_text(RIGHT)
    log = tmp_path / "runs.log"
    env = {"PUZZLES_BUILD_DIR": str(fixture_root / "build"), "TOY_LOG": str(log), "PUZZLE_LANG": "en"}
    return fixture_root, env, log


def statuses(stdout):
    """{"--simple": "not yet (n=31 tpb=32: wrong answer)", ...} of p99's rows."""
    rows = {}
    in_p99 = False
    for line in stdout.splitlines():
        if line.startswith("p9"):
            in_p99 = line.startswith("p99")
        m = re.search(r"\s(--[\w-]+)\s+(solved|not yet \([^)]*\))", line)
        if in_p99 and m:
            rows[m.group(1)] = m.group(2)
    return rows


def test_the_status_cases_are_the_quick_checks_with_the_fixed_seed(fixture_root):
    v = discover(fixture_root)["p99"].variants["simple"]
    assert status_cases(v, "cpu") == seeded_cases(v, "cpu", STATUS_SEED, quick=True)
    assert status_cases(v, "cpu") == status_cases(v, "cpu")


def test_a_mid_size_bug_gets_the_same_status_on_every_call_and_check_agrees(cli, toy):
    root, env, log = toy
    seen = [statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout) for _ in range(5)]
    assert all(s == seen[0] for s in seen), seen
    simple = seen[0]["--simple"]
    m = re.match(r"not yet \(n=(\d+) tpb=(\d+): wrong answer\)", simple)
    assert m, simple
    assert 20 <= int(m.group(1)) < 32

    r = cli("check", "p99", "--simple", "--quick", "--seed", str(STATUS_SEED), "--backend", "cpu", root=root, env=env)
    assert r.returncode == 1, r
    assert "failed at case" in r.stdout and "n=%s tpb=%s" % m.groups() in r.stdout, r.stdout
    # Every case that ran is one of the fixed status cases: no size was drawn at random.
    assert read_log(log) and all(call[1:] in [list(c[:2]) for v in discover(root)["p99"].variants.values()
                                              for c in status_cases(v, "cpu")] for call in read_log(log))


def test_the_status_is_remembered_until_the_file_changes(cli, toy):
    root, env, log = toy
    first = statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout)
    ran = len(read_log(log))
    assert ran > 0
    again = statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout)
    assert again == first
    assert len(read_log(log)) == ran  # nothing ran: the status came from the cache

    (root / "puzzles" / "p99" / "p99.cu").write_text(RIGHT)
    fixed = statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout)
    assert len(read_log(log)) > ran
    assert fixed == {flag: "solved" for flag in first}, fixed
    r = cli("check", "p99", "--quick", "--seed", str(STATUS_SEED), "--backend", "cpu", root=root, env=env)
    assert r.returncode == 0, r

    (root / "puzzles" / "p99" / "p99.cu").write_text(MID_SIZE_BUG)
    assert statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout) == first


def test_a_file_saved_during_the_run_is_named_and_not_remembered(cli, toy):
    root, env, log = toy
    source = root / "puzzles" / "p99" / "p99.cu"
    saving = dict(env, TOY_TOUCH=str(source))
    r = cli("check", "p99", "--simple", "--quick", "--backend", "cpu", root=root, env=saving)
    assert "note: puzzles/p99/p99.cu changed while this ran: the verdicts above are for the version built at " \
           "the start (sha256 " in r.stdout, r.stdout
    r = cli("list", "--backend", "cpu", root=root, env=saving)
    assert "note: puzzles/p99/p99.cu changed while this ran" in r.stdout, r.stdout
    ran = len(read_log(log))
    cli("list", "--backend", "cpu", root=root, env=env)
    assert len(read_log(log)) > ran  # the status measured on the old version was not kept
    r = cli("check", "p99", "--simple", "--quick", "--backend", "cpu", root=root, env=env)
    assert "changed while this ran" not in r.stdout


def test_list_never_calls_solved_what_a_full_check_of_the_same_file_rejected(cli, toy):
    root, env, log = toy
    (root / "puzzles" / "p99" / "p99.cu").write_text(LARGE_SIZE_BUG)
    assert statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout)["--simple"] == "solved"
    r = cli("check", "p99", "--simple", "--seed", "1", "--backend", "cpu", root=root, env=env)
    assert r.returncode == 1 and "n=99 tpb=100" in r.stdout, r.stdout
    for _ in range(3):
        shown = statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout)
        assert shown["--simple"] == "not yet (check failed at n=99 tpb=100: wrong answer)", shown
    (root / "puzzles" / "p99" / "p99.cu").write_text(LARGE_SIZE_BUG + "// edited\n")  # another file: unknown
    assert statuses(cli("list", "--backend", "cpu", root=root, env=env).stdout)["--simple"] == "solved"


def test_the_summary_column_is_cut_to_the_terminal_width(monkeypatch):
    import os as _os

    from puzzlelib import commands

    monkeypatch.setattr(commands, "stdout_is_tty", lambda: True)
    monkeypatch.setattr(commands.shutil, "get_terminal_size", lambda fallback: _os.terminal_size((80, 24)))
    header = ["puzzle", "title", "variant", "status", "summary"]
    rows = [["p14", "Prefix sum (scan)", "--simple", "solved", ""]]
    width = commands.summary_width(rows, header)
    line = commands.table([r[:-1] + [commands.cut("Kogge-Stone inclusive scan in one block: " * 3, width)]
                           for r in rows], header=header)
    assert all(len(l) <= 80 for l in line.splitlines()), line
    assert line.splitlines()[1].endswith("\u2026")
    monkeypatch.setattr(commands, "stdout_is_tty", lambda: False)
    assert commands.summary_width(rows, header) is None  # a pipe or a file keeps the whole summary
