"""`trace` of a launch that stops (issue 21): barrier divergence, a runaway block, a runaway thread
that the watchdog ends. The trace still draws every step up to the stop, the shared arrays as they
stood, and where each thread was; the page draws a same-step read from the written cell, keeps
thread colours away from the hazard red and apart from each other, and shows input/out/expected when the run stopped.
Runs against the test build (PUZZLES_BUILD_DIR), like test_trace.py.
"""

import colorsys
import json
import math
import os
import re
import subprocess
import sys

import pytest

from test_trace import REPO, WIDTH, planted, steps
from test_trace_html import browse, parsed

from puzzlelib.trace import Style, render_launch, stop_lines
from puzzlelib.trace_html import HAZARD_RED, thread_colour
from puzzlelib.trace_model import load


def trace(*args, env=None):
    if not os.environ.get("PUZZLES_BUILD_DIR"):
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree (python3 scripts/puzzle.py test does)")
    full = dict(os.environ, PYTHONIOENCODING="utf-8", PUZZLE_LANG="en", **(env or {}))
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "puzzle.py"), "trace"] + [str(a) for a in args],
                       cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=full,
                       universal_newlines=True, encoding="utf-8", timeout=600)
    return r.returncode, [l for l in r.stdout.splitlines() if not l.startswith("building ")]


DIVERGENT = [
    # (planted bug, variant, shared array, returned threads, waiting threads)
    ("p14_simple_barriers_in_offset_if", "--simple", "shared", "T₀ had returned", "T₁…T₇ wait at __syncthreads() at "),
    ("p12_k1_barrier_in_if", "--k1", "sdata", "T₁, T₃, T₅, T₇ had returned",
     "T₀, T₂, T₄, T₆ wait at __syncthreads() at "),
]


@pytest.mark.parametrize("name,flag,array,returned,waiting", DIVERGENT, ids=[d[0] for d in DIVERGENT])
def test_divergence_keeps_every_step_the_arrays_and_where_the_threads_wait(name, flag, array, returned, waiting,
                                                                          tmp_path):
    page = tmp_path / "trace.html"
    rc, lines = trace(name.split("_")[0], flag, "--binary", planted(name), "--html", page)
    assert rc == 1, "\n".join(lines)
    drawn = [l for l in lines if not l.startswith("wrote ")]  # the page's path is as long as the temp dir
    assert all(len(l) <= WIDTH for l in drawn), max(drawn, key=len)
    assert any(l.startswith("shared memory: %s[" % array) for l in lines), "\n".join(lines)
    s = steps(lines)
    assert len(s) >= 2
    for k, body in s.items():  # the array as it stood after every step, the stopped one included
        assert any(l.startswith("  %s" % array) and "[" in l for l in body), (k, body)
    assert "where the threads were when the launch stopped:" in lines
    assert "  " + returned in lines
    assert any(l.startswith("  " + waiting) and re.search(r"\.cu:\d+$", l) for l in lines), "\n".join(lines)
    assert any(l.startswith("the launch stopped: ") for l in lines)
    # input, out and expected, though the driver printed none of them (the run stopped)
    assert any(l.startswith("input:") for l in lines) and any(l.startswith("expected:") for l in lines)

    text = page.read_text(encoding="utf-8")
    doc = parsed(page)
    nsteps = int(doc.having("section", "launch")[0]["data-steps"])
    count = len(doc.having("g", "cell")) // (nsteps + 1)
    assert count >= 8 and len(doc.having("g", "cell")) == (nsteps + 1) * count  # every row has its cells
    stop = re.search(r'<pre class="red stop">(.*?)</pre>', text, re.S)
    assert stop and returned in stop.group(1) and waiting in stop.group(1)
    io = re.search(r'<pre class="io">(.*?)</pre>', text, re.S).group(1)
    assert "input:" in io and "expected:" in io


def test_a_runaway_block_keeps_its_steps_up_to_the_stop():
    rc, lines = trace("p14", "--simple", "--binary", planted("p14_simple_offset_never_grows"),
                      env={"CUDASIM_MAX_BARRIERS": "40"})
    assert rc == 1, "\n".join(lines)
    s = steps(lines)
    assert len(s) > 40  # two barriers a pass of the loop, up to the limit
    assert all(any(l.startswith("  shared  [") for l in body) for body in s.values())
    assert any(re.match(r"^  T₀…T₇ wait at __syncthreads\(\) at \S+\.cu:\d+$", l) for l in lines), "\n".join(lines)
    assert any(l.startswith("the launch stopped: endless loop") for l in lines), "\n".join(lines)


def test_a_launch_the_watchdog_cut_off_is_drawn_up_to_the_stop(tmp_path):
    # What a runaway thread leaves: trace.cpp writes each event as it completes, and the watchdog's
    # exit leaves no `end` (the arrays), no `sites`, and maybe half a line.
    events = [
        {"e": "launch", "kernel": "k", "site": "p.cu:9", "grid": [1, 1, 1], "block": [4, 1, 1], "shmem": 16,
         "traced": True},
        {"e": "block", "b": 0, "threads": 4},
    ]
    for t in range(4):
        events.append({"e": "acc", "t": t, "k": "w", "atomic": False, "sp": 1, "arr": "buf", "i": t, "el": 4,
                       "ty": "int", "n": 4, "pc": 1, "nv": (t * 10).to_bytes(4, "little").hex() + "00" * 4})
    events.append({"e": "bar", "site": "p.cu:5"})
    for _ in range(3):
        events.append({"e": "acc", "t": 2, "k": "r", "atomic": False, "sp": 1, "arr": "buf", "i": 0, "el": 4,
                       "ty": "int", "n": 4, "pc": 2, "v": "00000000"})
    path = tmp_path / "trace.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + '\n{"e":"acc","t":2,"k"', encoding="utf-8")
    (launch,) = load(path, [])
    assert launch.cut_off and [a["name"] for a in launch.arrays] == ["buf"] and launch.arrays[0]["count"] == 4
    assert len(launch.steps) == 2 and launch.steps[0].after["buf"] == [0, 10, 20, 30]
    assert launch.steps[1].end == "the stop below"
    launch.error = {"kind": "endless loop (a thread never reached a barrier)", "msg": "runaway thread in kernel k"}
    launch.stop = [[2, "running", "", ""]]
    lines = render_launch(1, 1, launch, Style(False), [])
    assert "  T₂ reads buf[0] = 0 \u00d73" in lines  # a spin is one entry, not one line per read
    assert any(l.startswith("  buf") and "[0  10 20 30]" in l for l in lines)
    assert "  T₂ still running (no barrier reached)" in stop_lines(launch)


def test_a_same_step_read_is_drawn_from_the_cell_as_written_in_that_row(tmp_path):
    # Without the read/write split, T₃ reads shared[2] after T₂ wrote it in the same step: the arrow
    # must start at the written cell of that step's row (it holds the 3 T₃ read), not the row above.
    page = tmp_path / "race.html"
    rc, lines = trace("p14", "--simple", "--binary", planted("p14_simple_no_read_write_split"), "--html", page)
    assert rc == 1
    assert any("T₃ reads shared[2] = 3 !" in l for l in lines), "\n".join(lines)
    arrows = re.findall(r'<path class="arrow[^"]*" data-step="(\d+)" data-thread="3" data-row0="(\d+)"[^>]*>'
                        r'<title>T₃: shared\[(\d+)\] → shared\[3\]</title>', page.read_text(encoding="utf-8"))
    first = [(step, row0) for step, row0, src in arrows if src == "2"]
    assert first and first[0][0] == first[0][1], arrows
    io = re.search(r'<pre class="io">(.*?)</pre>', page.read_text(encoding="utf-8"), re.S).group(1)
    assert "input:" in io and "out:" in io and "expected:" in io


def lab(rgb):
    """CIE L*a*b* of an sRGB colour (components 0..1), for the colour distance ΔE (CIE76)."""
    def linear(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = map(linear, rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t):
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def css_rgb(text):
    if text.startswith("#"):
        digits = text[1:]
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        return tuple(int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4))
    h, s, light = [float(x) for x in re.findall(r"[\d.]+", text)]
    return colorsys.hls_to_rgb(h / 360, light / 100, s / 100)


def test_no_thread_colour_is_close_to_the_hazard_red():
    red = lab(css_rgb(HAZARD_RED))
    fill = lab(css_rgb("#ffd6d6"))  # a hazard cell's fill (trace_html.STYLE)
    assert math.dist(lab(css_rgb("hsl(0, 70%, 40%)")), red) < 50  # the old T₀: the measure tells them apart
    for t in range(1024):
        assert math.dist(lab(css_rgb(thread_colour(t))), red) >= 50, thread_colour(t)
        assert math.dist(lab(css_rgb(thread_colour(t, True))), fill) >= 12, thread_colour(t, True)


def old_thread_colour(t, light=False):
    """The colours before issue 5: golden-angle steps of 137.5 degrees taken modulo 280, which put
    odd and even threads into two clusters (T₁, T₃, T₅ and T₇ all greenish)."""
    hue = 40 + (t * 137.508) % 280
    return "hsl(%.0f, 70%%, %d%%)" % (hue, 88 if light else 36)


def closest_pair(colour, count):
    """(ΔE, t, u): the two of threads 0..count-1 whose colours are closest in CIE L*a*b*."""
    labs = [lab(css_rgb(colour(t))) for t in range(count)]
    return min((math.dist(labs[t], labs[u]), t, u) for t in range(count) for u in range(t + 1, count))


# The least ΔE (CIE76) between two of the first N threads. About 2 is a just noticeable difference;
# the legend shows 32 threads, a block of 8 or 16 is the usual trace.
DISTINCT = {8: 40, 16: 25, 32: 15}


@pytest.mark.parametrize("count", sorted(DISTINCT))
def test_the_threads_drawn_together_have_distinct_colours(count):
    far, t, u = closest_pair(thread_colour, count)
    assert far >= DISTINCT[count], "T%d %s and T%d %s are only %.1f apart" % (
        t, thread_colour(t), u, thread_colour(u), far)
    # The measure catches what the old scheme did: its odd threads looked alike.
    old, t, u = closest_pair(old_thread_colour, count)
    assert old < DISTINCT[count] / 2, (old, t, u)
    # The pale fills of written cells differ too (each cell is also outlined in its thread's colour).
    fills, t, u = closest_pair(lambda t: thread_colour(t, True), count)
    assert fills >= 4, (fills, thread_colour(t, True), thread_colour(u, True))
    # Each thread keeps its colour: the same every call.
    assert [thread_colour(t) for t in range(count)] == [thread_colour(t) for t in range(count)]


def test_thread_colours_are_dark_enough_for_arrows_on_white():
    def luminance(rgb):
        return sum(w * (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4) for w, c in zip((0.2126, 0.7152, 0.0722), rgb))

    for t in range(256):
        assert 1.05 / (luminance(css_rgb(thread_colour(t))) + 0.05) >= 3, thread_colour(t)
        assert luminance(css_rgb(thread_colour(t, True))) >= 0.4, thread_colour(t, True)  # dark text stays legible


def test_the_page_reflows_at_500_px(tmp_path):
    page = tmp_path / "race.html"
    rc, _ = trace("p14", "--simple", "--binary", planted("p14_simple_no_read_write_split"), "--html", page)
    assert rc == 1
    probe, console = browse(page, tmp_path, window="500,900")
    assert console == [] and probe["errors"] is None
    assert probe["page_width"] <= 500, probe  # nothing but the grid (which scrolls) is wider than the window
    # One entry a line: a narrow panel wraps between entries, never inside one.
    assert all(len(re.findall(r"T\S+ (?:reads|writes|updates)", l)) <= 1 for l in probe["detail"].splitlines())


def test_the_trace_and_its_page_in_korean(tmp_path):
    page = tmp_path / "trace.html"
    rc, lines = trace("p14", "--simple", "--binary", planted("p14_simple_barriers_in_offset_if"), "--html", page,
                      "--lang", "ko")
    assert rc == 1, "\n".join(lines)
    assert lines[0].startswith("p14 --simple의 trace (")
    assert any(re.match(r"^step 1: kernel 시작부터 \S+\.cu:\d+까지$", l) for l in lines), "\n".join(lines)
    assert "launch가 멈췄을 때 thread들의 위치:" in lines and "  T₀: 이미 return함" in lines
    text = page.read_text(encoding="utf-8")
    assert '<html lang="ko">' in text
    assert ">시작</button>" in text and ">끝</button>" in text and "hazard(Race Condition)" in text
    assert "T₁…T₇: " in re.search(r'<pre class="red stop">(.*?)</pre>', text, re.S).group(1)
