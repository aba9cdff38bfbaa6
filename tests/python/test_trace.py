"""`trace`: one block of a kernel, barrier interval by barrier interval, as the course notes draw
it (issue 11). Runs against the test build (PUZZLES_BUILD_DIR), like the README samples.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WIDTH = 100


def trace(*args):
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree (python3 scripts/puzzle.py test does)")
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "puzzle.py"), "trace"] + [str(a) for a in args],
                       cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       universal_newlines=True, encoding="utf-8", timeout=600)
    return r.returncode, [l for l in r.stdout.splitlines() if not l.startswith("building ")]


def planted(name):
    """The simulator binary of tests/planted/<puzzle>/<name>.plant in the test build."""
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree (python3 scripts/puzzle.py test does)")
    binary = Path(build) / "bin" / ("planted_%s_cpu" % name)
    if not binary.is_file():
        pytest.skip("%s is not built" % binary)
    return binary


def steps(lines):
    """{step number: its lines}"""
    out, current = {}, None
    for line in lines:
        m = re.match(r"^step (\d+): ", line)
        if m:
            current = int(m.group(1))
            out[current] = [line]
        elif current is not None:
            out[current].append(line)
    return out


def test_simple_solution_reads_like_the_notes_walk_through():
    rc, lines = trace("p14", "--simple", "--solution")
    assert rc == 0, "\n".join(lines)
    assert all(len(l) <= WIDTH for l in lines), max(lines, key=len)
    assert "input:    [0, 1, 2, 3, 4, 5, 6, 7]" in lines
    s = steps(lines)
    assert s[1][0].startswith("step 1: from the kernel's start, until p14.cu:")
    assert any("T₀ writes shared[0] = 0" in l for l in s[1])
    # Offset 1: the reads of the first scan step, then its writes, in a step of their own.
    assert re.match(r"^step 2: after __syncthreads\(\) at p14\.cu:\d+, until p14\.cu:\d+$", s[2][0])
    assert any("T₁ reads shared[0] = 0" in l for l in s[2]) and any("T₇ reads shared[6] = 6" in l for l in s[2])
    assert any(l.strip() == "idle: T₀" for l in s[2])
    assert any(l.strip() == "shared  [0  1  3  5  7  9  11 13]" for l in s[3])
    last = max(s)
    assert any(l.strip() == "shared  [0  1  3  6  10 15 21 28]" for l in s[last])
    assert "out:      [0, 1, 3, 6, 10, 15, 21, 28]" in lines
    assert not any(l.rstrip().endswith(" !") for l in lines)  # the solution has no hazard


def test_missing_barrier_is_marked_at_the_racing_cells_and_lines():
    rc, lines = trace("p14", "--simple", "--binary", planted("p14_simple_no_read_write_split"))
    assert rc == 1, "\n".join(lines)  # the puzzle failed: a race
    assert lines[-1].startswith("p14 --simple: race"), lines[-1]
    step2 = steps(lines)[2]
    text = "\n".join(step2)
    # The threads that read a cell another thread of the same interval wrote are marked ...
    assert re.search(r"T₂ reads shared\[1\] = 1 !", text), text
    # ... and so are the cells, under the array row, with the pair of lines and the threads.
    row = next(i for i, l in enumerate(step2) if l.strip().startswith("shared  ["))
    assert "!" in step2[row + 1]
    assert re.search(r"! read-after-write: write at simple_no_read_write_split\.cu:(\d+), then read at\s+"
                     r"simple_no_read_write_split\.cu:\1, no barrier between them", text), text
    assert "shared[1] T₁→T₂" in text


def test_block_too_large_to_draw_is_refused_with_the_option_to_use():
    rc, lines = trace("p14", "--simple", "--solution", "--n", 1024, "--tpb", 1024)
    assert rc == 2
    assert any("at most 256 threads" in l and "--tpb" in l and "--n 8 --tpb 8" in l for l in lines), lines


def test_warp_shuffles_are_steps_of_their_own():
    rc, lines = trace("p12", "--shuffle", "--solution")
    assert rc == 0, "\n".join(lines)
    s = steps(lines)
    titles = [body[0] for body in s.values()]
    # The tree of shuffles, lanes 0-31, each offset a step: 16, 8, 4, 2, 1.
    shuffles = [t for t in titles if re.match(r"^step \d+: lanes 0-31 shuffle down by \d+ \(__shfl_down_sync at p12\.cu:\d+\)$", t)]
    assert [int(re.search(r"by (\d+)", t).group(1)) for t in shuffles[:5]] == [16, 8, 4, 2, 1], titles
    first = next(k for k, body in s.items() if body[0] == shuffles[0])
    # What each lane gave and what it got: lane 0 gets lane 16's value, lanes 16-31 get their own.
    gave = next(l for l in s[first] if l.strip().startswith("gave"))
    got = next(l for l in s[first] if l.strip().startswith("got"))
    assert gave.split("[", 2)[2].split()[0] != "" and got
    # After the last shuffle, lane 0 holds the warp's sum and writes it for the block: 0+1+…+18.
    assert any("T₀ writes warp_sums[0] = 171" in l for l in lines), "\n".join(lines)
    assert "out:      [171]" in lines


def test_cuda_barrier_phases_are_steps_of_their_own():
    rc, lines = trace("p29", "--double-buffer", "--solution")
    assert rc == 0, "\n".join(lines)
    titles = [body[0] for body in steps(lines).values()]
    phases = [t for t in titles if " completes: " in t]
    assert phases, titles
    assert re.match(r"^step \d+: phase 0 of bar completes: T₀…T₇ arrived \(the last at p29\.cu:\d+; "
                    r"initialised at p29\.cu:\d+\)$", phases[0]), phases[0]
    # Between two phases, the interval is bounded by them, not by a __syncthreads().
    k = titles.index(phases[0])
    assert titles[k + 1].endswith("after phase 0 of bar completed, until the arrival that completes phase 1 of bar")


def variants():
    sys.path.insert(0, str(REPO / "scripts"))
    from puzzlelib.puzzles import discover
    return [(p.name, v.flag) for p in discover(REPO).values() for v in p.variants.values()]


@pytest.mark.parametrize("puzzle,flag", variants())
def test_every_variant_traces_at_its_show_size_and_as_a_page(puzzle, flag, tmp_path):
    page = tmp_path / "trace.html"
    rc, lines = trace(puzzle, flag, "--solution", "--html", page)
    assert rc == 0, "\n".join(lines)
    assert lines[-1] == "wrote %s: open it in a browser (it loads nothing from the network)" % page
    lines = lines[:-1]
    assert all(len(l) <= WIDTH for l in lines), max(lines, key=len)
    assert any(l.startswith("step 1: ") for l in lines), "\n".join(lines)
    assert not any(l.rstrip().endswith(" !") for l in lines)
    text = page.read_text(encoding="utf-8")
    traced = re.findall(r'<section class="launch" data-launch="\d+" data-steps="(\d+)"', text)
    assert traced, "no launch of the traced block in the page"
    assert text.count('<g class="row') == sum(int(n) + 1 for n in traced)


def test_a_write_that_races_shows_the_value_it_stored():
    # A write-after-read is found inside the write's own hook, before the store: the trace must
    # still show what the store put there (1 + 5 = 6), and the array after the step must agree.
    rc, lines = trace("p12", "--k3", "--binary", planted("p12_k3_no_barrier_in_loop"))
    assert rc == 1, "\n".join(lines)
    text = "\n".join(steps(lines)[2])
    assert "T₁ updates sdata[1]: 1 → 6 !" in text and "T₁ updates sdata[1]: 6 → 9" in text, text
    assert "T₃ updates sdata[3]: 3 → 10 !" in text, text
    assert re.search(r"^  sdata   \[7  9  8  10 4  5  6  7\]$", text, re.M), text
    assert re.search(r"! write-after-read: read at k3_no_barrier_in_loop\.cu:(\d+), then write at\s+"
                     r"k3_no_barrier_in_loop\.cu:\1, no barrier between them", text), text
