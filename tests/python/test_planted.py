r"""Planted-bug learner files (tests/planted/<puzzle>/<name>.plant, edits of the solution) must be rejected by `check`.

Each file starts with a header that says what it plants and how it must be caught:

    // planted: p14 --simple
    // expect: race
    // match: race in kernel
    // why: Kogge-Stone without the read/write split
    // also: write at \S*p14\.cu:\d+     (optional, repeatable: more patterns the output must match)
    // env: CUDASIM_WORKERS=1            (optional: environment of the check run)
    // advice: divergence_returned_early (optional, repeatable: the advice rule its diagnosis must choose,
                                          tests/python/test_advice_*.py)

CTest builds each file into build/bin/planted_<puzzle>_<name>_cpu (tests/CMakeLists.txt).
"""
import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "planted"))
import plant  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PLANTED = sorted((ROOT / "tests" / "planted").glob("*/*.plant"))
HEADER = re.compile(r"^//\s*(planted|expect|match|why|also|env|advice):\s*(.*?)\s*$")


def header(path):
    fields = {"also": [], "env": {}, "advice": []}
    for line in path.read_text(encoding="utf-8").splitlines()[:12]:
        m = HEADER.match(line)
        if m and m.group(1) in ("also", "advice"):
            fields[m.group(1)].append(m.group(2))
        elif m and m.group(1) == "env":
            k, _, v = m.group(2).partition("=")
            fields["env"][k.strip()] = v.strip()
        elif m:
            fields[m.group(1)] = m.group(2)
    return fields


def build_dir():
    d = os.environ.get("PUZZLES_BUILD_DIR")
    return Path(d) if d else None


def test_there_are_planted_bugs_for_every_puzzle():
    puzzles = {p.parent.name for p in (ROOT / "puzzles").glob("*/puzzle.json")}
    planted = {p.parent.name for p in PLANTED}
    assert puzzles <= planted, "puzzles without planted-bug files: %s" % sorted(puzzles - planted)


@pytest.mark.parametrize("path", PLANTED, ids=lambda p: "%s/%s" % (p.parent.name, p.stem))
def test_planted_file_is_one_small_edit_with_a_complete_header(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    keys = [HEADER.match(l) for l in lines[:4]]
    assert all(keys), "%s: the first four lines must be the planted/expect/match/why header" % path
    h = {m.group(1): m.group(2) for m in keys}
    n_header = 4
    while n_header < len(lines) and HEADER.match(lines[n_header]):
        assert HEADER.match(lines[n_header]).group(1) in ("also", "env", "advice"), lines[n_header]
        n_header += 1
    assert list(h) == ["planted", "expect", "match", "why"]
    assert h["expect"] in ("fail", "race", "error"), h["expect"]
    puzzle, flag = h["planted"].split()
    assert puzzle == path.parent.name
    declared = json.loads((ROOT / "puzzles" / puzzle / "puzzle.json").read_text(encoding="utf-8"))["variants"]
    assert flag.startswith("--") and flag[2:] in declared, "%s is not a variant of %s" % (flag, puzzle)
    re.compile(h["match"])
    for extra in header(path)["also"]:
        re.compile(extra)
    # One bug: the edits apply to the current solution and change only a few lines (the 2007 warp
    # idiom, the largest, replaces a whole function body).
    solution = (ROOT / "solutions" / puzzle / ("%s.cu" % puzzle)).read_text(encoding="utf-8")
    body = plant.apply(path.read_text(encoding="utf-8"), solution).splitlines()[n_header:]
    changed = [l for l in difflib.unified_diff(solution.splitlines(), body, lineterm="", n=0)
               if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    assert 0 < len(changed) <= 16, changed


def planted_check(path):
    """The header of a planted file, its puzzle and flag, and the `check` command of its built
    binary; skips the test when there is no build or the binary was not built."""
    build = build_dir()
    if build is None:
        pytest.skip("PUZZLES_BUILD_DIR is not set (run through `python3 scripts/puzzle.py test`)")
    h = header(path)
    puzzle, flag = h["planted"].split()
    binary = build / "bin" / ("planted_%s_%s_cpu" % (puzzle, path.stem))
    if not binary.exists():
        pytest.skip("%s was not built" % binary)
    cmd = [sys.executable, str(ROOT / "scripts" / "puzzle.py"), "check", puzzle, flag, "--binary", str(binary),
           "--backend", "cpu", "--seed", "1"]
    return h, puzzle, flag, cmd


@pytest.mark.parametrize("path", PLANTED, ids=lambda p: "%s/%s" % (p.parent.name, p.stem))
def test_check_rejects_planted_bug(path):
    h, puzzle, flag, cmd = planted_check(path)
    env = dict(os.environ, **h["env"])
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300, env=env)
    output = proc.stdout
    assert proc.returncode == 1, "%s should fail check (exit 1), got %d:\n%s" % (path.name, proc.returncode, output)
    verdict = re.search(r"^\S+ %s %s: (\w+) \(" % (re.escape(puzzle), re.escape(flag)), output, re.M)
    assert verdict and verdict.group(1) == h["expect"], "expected verdict %r:\n%s" % (h["expect"], output)
    assert re.search(h["match"], output), "expected /%s/ in the output:\n%s" % (h["match"], output)
    for extra in h["also"]:
        assert re.search(extra, output), "expected /%s/ in the output:\n%s" % (extra, output)


# The plants that must be caught with one worker thread (`env: CUDASIM_WORKERS=1`) are the mistakes
# a one-core grading runner used to let through: `grade` must reject them too, with the same
# verdict as `check`, through its own path (the checker process, the case seeds, the limits).
ONE_WORKER = [p for p in PLANTED if header(p)["env"].get("CUDASIM_WORKERS") == "1"]


@pytest.mark.parametrize("path", ONE_WORKER, ids=lambda p: "%s/%s" % (p.parent.name, p.stem))
def test_grade_rejects_planted_bug_on_one_worker(path, tmp_path):
    from puzzlelib import grade, grade_report
    from puzzlelib.puzzles import load_puzzle

    build = build_dir()
    if build is None:
        pytest.skip("PUZZLES_BUILD_DIR is not set (run through `python3 scripts/puzzle.py test`)")
    h = header(path)
    puzzle, flag = h["planted"].split()
    binary = build / "bin" / ("planted_%s_%s_cpu" % (puzzle, path.stem))
    checker = build / "bin" / grade.checker_target(puzzle)
    for needed in (binary, checker):
        if not needed.exists():
            pytest.skip("%s was not built" % needed)
    settings = grade.Settings(seed=1, time_limit=60.0, memory=None, workers=1, build_timeout=60.0,
                              points=grade_report.Points(), only=None)
    grader = grade.Grader(ROOT, source=None, settings=settings, quiet=True)
    variant = load_puzzle(ROOT / "puzzles" / puzzle).variant_by_flag(flag)
    row = grader.run_variant(variant, binary, checker, ROOT, ROOT, tmp_path, [])
    assert row["verdict"] == h["expect"], "grade gave %r (%s), check gives %r:\n%s" % (
        row["verdict"], row["reason"], h["expect"], row["diagnostic"])
    assert row["points"] == 0 and row["failing_case"] is not None
    # The report names the cause: the diagnostic carries the simulator's own lines.
    assert re.search(h["match"], row["diagnostic"] or ""), "expected /%s/ in grade's diagnostic:\n%s" % (
        h["match"], row["diagnostic"])


def run_planted(path):
    """`check` of one planted binary, with its header's environment: the finished process."""
    h, _, _, cmd = planted_check(path)
    return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                          env=dict(os.environ, **h["env"]))


def test_runaway_thread_without_a_barrier_is_reported_at_a_line_of_its_loop():
    """A thread that loops for ever in a loop with no barrier is stopped by the stall watchdog, which
    samples where the thread runs: the report names a line inside that loop, with the block and the
    thread (issue 21: it used to name no line)."""
    path = ROOT / "tests" / "planted" / "p29" / "multi_stage_stride_from_start.plant"
    proc = run_planted(path)
    assert proc.returncode == 1, proc.stdout
    m = re.search(r"block 0, thread 128 has run for 1 s without reaching a barrier or returning, looping at "
                  r"(\S*multi_stage_stride_from_start\.cu):(\d+)\.", proc.stdout)
    assert m, "no line named for the runaway thread:\n" + proc.stdout
    assert "Does that loop have a condition that never changes" in proc.stdout, proc.stdout
    # The learner file as built: the reported line lies between the planted loop's `for` and its brace.
    lines = (ROOT / m.group(1)).read_text(encoding="utf-8").splitlines()
    first = next(i for i, l in enumerate(lines, 1) if "j += local_i - STAGE1_THREADS" in l)
    indent = len(lines[first - 1]) - len(lines[first - 1].lstrip())
    last = next(i for i in range(first + 1, len(lines) + 1) if lines[i - 1] == " " * indent + "}")
    assert first <= int(m.group(2)) <= last, "line %s is outside the loop at lines %d-%d:\n%s" % (
        m.group(2), first, last, proc.stdout)


def test_wrong_answer_names_the_writer_and_the_off_by_one_read():
    """A plain wrong answer (issue 21 item 5): check names who wrote the first wrong element (block,
    thread, line, barrier step) and walks back through the shared values it was computed from to
    the input; the chain names the planted off-by-one read `shared[local_i - offset + 1]`."""
    path = ROOT / "tests" / "planted" / "p14" / "simple_neighbour_off_by_one.plant"
    proc = run_planted(path)
    assert proc.returncode == 1, proc.stdout
    first = re.search(r"first wrong element: out\[(\d+)\] = (-?\d+), expected (-?\d+)\n\s+written by block 0, thread "
                      r"(\d+) at (\S*simple_neighbour_off_by_one\.cu):(\d+) \(after barrier (\d+)\)", proc.stdout)
    assert first, "no writer named for the first wrong element:\n" + proc.stdout
    index, thread, source, line = int(first.group(1)), int(first.group(4)), first.group(5), int(first.group(6))
    assert thread == index, proc.stdout  # one block: thread i writes out[i]
    lines = (ROOT / source).read_text(encoding="utf-8").splitlines()
    assert "out[global_i] = shared[local_i]" in lines[line - 1], (line, proc.stdout)
    # The barrier step is the one after the whole loop: the store follows the last __syncthreads().
    assert int(first.group(7)) > 0
    # Back through the scan step's write to the read whose index is one off, then to the input.
    off_by_one = next(i for i, l in enumerate(lines, 1) if "shared[local_i - offset + 1]" in l)
    step = next(i for i, l in enumerate(lines, 1) if "shared[local_i] += current" in l)
    chain = proc.stdout[first.end():]
    assert re.search(r"shared\[%d\] = -?\d+, read at simple_neighbour_off_by_one\.cu:%d, written by block 0, thread %d "
                     r"at simple_neighbour_off_by_one\.cu:%d \(after barrier \d+\)" % (index, line, index, step), chain), chain
    assert re.search(r"shared\[\d+\] = -?\d+, read at simple_neighbour_off_by_one\.cu:%d," % off_by_one, chain), chain
    assert re.search(r"a\[\d+\] = -?\d+, read at \S+: input \(copied from the host\)", chain), chain


def test_the_chain_names_a_buffer_as_the_reading_kernel_does():
    """--complete's scan writes the block totals as its `out`, which add_block_offsets reads as
    `scanned_sums`: the chain shows the read under the reader's name, on the line of the planted
    read, and the writer's name beside the writer."""
    path = ROOT / "tests" / "planted" / "p14" / "complete_own_block_offset.plant"
    proc = run_planted(path)
    assert proc.returncode == 1, proc.stdout
    first = re.search(r"first wrong element: out\[\d+\] = -?\d+, expected -?\d+\n\s+written by block \d+, thread \d+ "
                      r"at (\S*complete_own_block_offset\.cu):\d+", proc.stdout)
    assert first, proc.stdout
    lines = (ROOT / first.group(1)).read_text(encoding="utf-8").splitlines()
    read = next(i for i, l in enumerate(lines, 1) if "const int offset = scanned_sums[blockIdx.x];" in l)
    m = re.search(r"scanned_sums\[(\d+)\] = -?\d+, read at complete_own_block_offset\.cu:%d, written by block \d+, "
                  r"thread \d+ at complete_own_block_offset\.cu:\d+ as out\[(\d+)\] " % read, proc.stdout)
    assert m and m.group(1) == m.group(2), proc.stdout
