"""`trace --html`: the trace as one web page (issue 11). The page's structure is checked from its
HTML; then headless Chromium loads it from disk, with every request blocked, and a probe script
appended to a copy measures what really rendered: the grid's cells, the arrows, the red hazard;
and, for a launch that barrier divergence stopped (issue 21), every step's cells up to the stop
with the values the terminal trace shows, and the threads shown waiting.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from puzzlelib.testcmd import CHROMIUM_APT, find_chromium  # noqa: E402


def build_dir():
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("set PUZZLES_BUILD_DIR to a build tree (python3 scripts/puzzle.py test does)")
    return Path(build)


def trace_html(tmp_path, name, *args, output=None):
    """Runs `trace ARGS --html PAGE`: (exit code, page); the terminal trace's lines are appended
    to `output` when a list is given."""
    build_dir()
    page = tmp_path / (name + ".html")
    env = dict(os.environ, PYTHONIOENCODING="utf-8", PUZZLE_LANG="en")
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "puzzle.py"), "trace"] + [str(a) for a in args]
                       + ["--html", str(page)], cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, universal_newlines=True, encoding="utf-8", timeout=600)
    assert page.is_file(), r.stdout
    assert "wrote %s: open it in a browser" % page in r.stdout
    if output is not None:
        output += r.stdout.splitlines()
    return r.returncode, page


def planted_race(tmp_path):
    binary = build_dir() / "bin" / "planted_p14_simple_no_read_write_split_cpu"
    if not binary.is_file():
        pytest.skip("%s is not built" % binary)
    return trace_html(tmp_path, "race", "p14", "--simple", "--binary", binary)


class Elements(HTMLParser):
    """Every element with its attributes, and the text of <script> elements."""

    def __init__(self):
        super().__init__()
        self.elements = []
        self.scripts = []
        self._in_script = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag == "script":
            self._in_script = a
            self.scripts.append([a, ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            self.scripts[-1][1] += data

    def having(self, tag, cls=None, **attrs):
        found = []
        for t, a in self.elements:
            if t != tag or (cls and cls not in a.get("class", "").split()):
                continue
            if all(a.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                found.append(a)
        return found


def parsed(page):
    p = Elements()
    p.feed(page.read_text(encoding="utf-8"))
    return p


def test_page_is_self_contained_and_draws_the_notes_grid(tmp_path):
    rc, page = trace_html(tmp_path, "simple", "p14", "--simple", "--solution")
    assert rc == 0
    text = page.read_text(encoding="utf-8")
    doc = parsed(page)
    # Nothing to fetch: no src or href anywhere, no url(), and a policy that forbids requests.
    assert not [a for _, a in doc.elements if "src" in a or "href" in a]
    assert "url(http" not in text and "@import" not in text
    csp = doc.having("meta", http_equiv="Content-Security-Policy")
    assert csp and csp[0]["content"].startswith("default-src 'none'")
    # One launch of 8 steps: the start row and a row per step, 8 cells each.
    section = doc.having("section", "launch")
    assert len(section) == 1 and section[0]["data-steps"] == "8"
    assert len(doc.having("g", "row")) == 9
    assert len(doc.having("g", "cell")) == 9 * 8
    # Offset 1: T₁ read shared[0] (as step 1 left it) and then wrote shared[1] in step 3.
    titles = re.findall(r'<path class="arrow" data-step="(\d+)" data-thread="(\d+)"[^>]*><title>([^<]*)</title>', text)
    assert ("3", "1", "T₁: shared[0] → shared[1]") in titles
    # The last offset (4): T₇ read shared[3] and wrote shared[7]; no arrow is red.
    assert ("7", "7", "T₇: shared[3] → shared[7]") in titles
    assert not doc.having("path", "hazard") and not doc.having("g", "hazard")
    # The last row holds the notes' result, and written cells carry their thread's colour.
    last = re.search(r'<g class="row" data-row="8">(.*?)</g><path', text, re.S).group(1)
    assert re.findall(r"<text [^>]*>([^<]*)</text>", last)[1:] == ["0", "1", "3", "6", "10", "15", "21", "28"]
    # Each step's words are the terminal trace's.
    steps = json.loads(next(body for a, body in doc.scripts if a.get("class") == "steps"))
    assert len(steps) == 9
    assert steps[2]["title"].startswith("step 2: after __syncthreads() at p14.cu:")
    assert "T₁ reads shared[0] = 0" in steps[2]["text"] and not steps[2]["bad"]


def test_planted_race_page_marks_the_racing_cells_and_arrows(tmp_path):
    rc, page = planted_race(tmp_path)
    assert rc == 1
    doc = parsed(page)
    red_cells = {a["data-cell"] for a in doc.having("g", "hazard")}
    assert "shared[1]" in red_cells, red_cells
    assert doc.having("path", "hazard"), "no arrow of the race is red"
    bad_rows = doc.having("g", "bad")
    assert bad_rows and bad_rows[0]["data-row"] == "2"
    steps = json.loads(next(body for a, body in doc.scripts if a.get("class") == "steps"))
    assert steps[2]["bad"]
    assert re.search(r"! read-after-write: write at simple_no_read_write_split\.cu:(\d+), then read at\s+"
                     r"simple_no_read_write_split\.cu:\1", steps[2]["text"]), steps[2]["text"]


# Appended to a copy of the page: what the browser really laid out and painted, as JSON in the DOM.
PROBE = """<script>
(function () {
  function boxes(sel) {
    return Array.prototype.filter.call(document.querySelectorAll(sel), function (e) {
      var r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0;
    }).length;
  }
  var hz = document.querySelector('g.cell.hazard rect');
  var ha = document.querySelector('path.arrow.hazard');
  var sec = document.querySelector('section.launch[data-steps]');
  var result = {
    ready: document.body.getAttribute('data-ready'),
    errors: document.body.getAttribute('data-errors'),
    cells: boxes('g.cell rect'), arrows: boxes('path.arrow:not(.hidden)'),
    hazard_fill: hz ? getComputedStyle(hz).fill : null,
    hazard_arrow: ha ? getComputedStyle(ha).stroke : null,
    steps: Number(sec.getAttribute('data-steps')),
    detail: sec.querySelector('.detail').textContent,
    shown: sec.getAttribute('data-shown')
  };
  sec.querySelector('.first').click();
  result.arrows_at_start = boxes('path.arrow:not(.hidden)');
  result.future_rows = document.querySelectorAll('g.row.future').length;
  sec.querySelector('.next').click(); sec.querySelector('.next').click();
  result.page_width = document.documentElement.scrollWidth;
  result.after_two = sec.getAttribute('data-shown');
  result.title_two = sec.querySelector('.stepname').textContent;
  var out = document.createElement('pre'); out.id = 'probe'; out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
})();
</script>"""


def chromium():
    found = find_chromium()
    if not found:
        pytest.skip("no headless Chromium: `python3 scripts/puzzle.py test` installs it as root "
                    "(sudo apt-get install %s)" % CHROMIUM_APT)
    return found


def browse(page, tmp_path, screenshot=None, window="1100,840", probe=PROBE):
    """Load the page from disk in headless Chromium; every host resolves nowhere, so a request
    would fail (and the page's policy would log it first). The probe script, appended after the
    page's own, leaves its findings as JSON in <pre id="probe">. Returns that JSON and the console."""
    probed = tmp_path / ("probed-" + page.name)
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", probe + "</body>"), encoding="utf-8")
    base = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--user-data-dir=%s" % (tmp_path / "profile"),
            "--enable-logging=stderr", "--v=0", "--window-size=%s" % window]
    r = subprocess.run(base + ["--dump-dom", probed.as_uri()], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, encoding="utf-8", errors="replace", timeout=120)
    m = re.search(r'<pre id="probe">(.*?)</pre>', r.stdout, re.S)
    assert m, "the page did not run in Chromium:\n" + r.stderr[-3000:]
    probe = json.loads(m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                       .replace("&amp;", "&"))
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    if screenshot:
        # At step 2, the racing interval: the panel under the grid names the race's lines.
        subprocess.run(base + ["--screenshot=%s" % screenshot, page.as_uri() + "#step=2"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
        assert screenshot.is_file() and screenshot.stat().st_size > 10000
    return probe, console


def test_race_page_renders_in_headless_chromium_with_no_errors(tmp_path):
    _, page = planted_race(tmp_path)
    shot = tmp_path / "trace-race.png"
    probe, console = browse(page, tmp_path, screenshot=shot)
    assert console == [], console
    assert probe["ready"] == "1" and probe["errors"] is None
    steps = probe["steps"]
    assert steps >= 3
    assert probe["cells"] == (steps + 1) * 8  # the start row and a row per step, 8 cells each, all laid out
    assert probe["arrows"] > 0
    assert probe["hazard_fill"] == "rgb(255, 214, 214)" and probe["hazard_arrow"] == "rgb(221, 0, 0)"
    assert probe["shown"] == str(steps) and "out[" in probe["detail"]
    # The slider: at the start no arrow shows and every step is faded; two steps on, step 2.
    assert probe["arrows_at_start"] == 0 and probe["future_rows"] == steps
    assert probe["after_two"] == "2" and probe["title_two"].startswith("step 2: after __syncthreads()")
    if os.environ.get("PUZZLES_TRACE_SCREENSHOT"):
        shutil.copy(str(shot), os.environ["PUZZLES_TRACE_SCREENSHOT"])


def test_wrong_answer_page_outlines_the_chain_of_the_first_wrong_element(tmp_path):
    """A plain wrong answer (the planted off-by-one scan): the page outlines the shared cells that the
    first wrong element, out[1], was computed from, each in the step that wrote it: shared[1] as
    copied from the input and shared[1] after the first scan step (thread 1 added its own element)."""
    binary = build_dir() / "bin" / "planted_p14_simple_neighbour_off_by_one_cpu"
    if not binary.is_file():
        pytest.skip("%s is not built" % binary)
    rc, page = trace_html(tmp_path, "origin", "p14", "--simple", "--binary", binary)
    assert rc == 1
    doc = parsed(page)
    outlined = [a["data-cell"] for a in doc.having("g", "origin")]
    assert outlined == ["shared[1]", "shared[1]"], outlined
    assert doc.having("span", "origin"), "the legend does not explain the outline"
    # A run that passes outlines nothing.
    rc, page = trace_html(tmp_path, "solution", "p14", "--simple", "--solution")
    assert rc == 0 and not parsed(page).having("g", "origin")


# What a launch stopped by barrier divergence really drew, read from the rendered DOM at the
# last step (where the page opens): every row's cells with their value, whether each is laid out
# and its painted fill, each row's opacity, and the report of where the threads were.
DIVERGENCE_PROBE = """<script>
(function () {
  function laid(e) { var r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }
  var sec = document.querySelector('section.launch[data-steps]');
  var rows = Array.prototype.map.call(sec.querySelectorAll('g.row'), function (row) {
    return {
      label: row.querySelector('.rowlabel').textContent, opacity: getComputedStyle(row).opacity,
      cells: Array.prototype.map.call(row.querySelectorAll('g.cell'), function (g) {
        var rect = g.querySelector('rect'), text = g.querySelector('text');
        return {cell: g.getAttribute('data-cell'), value: text.textContent, laid: laid(rect) && laid(text),
                fill: getComputedStyle(rect).fill};
      })
    };
  });
  var stop = sec.querySelector('pre.stop');
  var result = {
    ready: document.body.getAttribute('data-ready'),
    errors: document.body.getAttribute('data-errors'),
    steps: Number(sec.getAttribute('data-steps')), shown: sec.getAttribute('data-shown'),
    title: sec.querySelector('.stepname').textContent, detail: sec.querySelector('.detail').textContent,
    rows: rows, stop: stop && laid(stop) ? stop.innerText : null
  };
  var out = document.createElement('pre'); out.id = 'probe'; out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
})();
</script>"""


def terminal_rows(lines, array):
    """Per step of the terminal trace: the array's values after it, and how many cells it wrote
    (the ^ marks under the row)."""
    rows = []
    for i, line in enumerate(lines):
        m = re.match(r"^  %s\s+\[(.*)\]$" % re.escape(array), line)
        if m:
            marks = lines[i + 1] if i + 1 < len(lines) and re.fullmatch(r"[ ^]+", lines[i + 1]) else ""
            rows.append((m.group(1).split(), marks.count("^")))
    return rows


def test_divergence_page_draws_every_step_up_to_the_stop_in_headless_chromium(tmp_path):
    # p12 --k1 with __syncthreads() inside `if (tid % (2*s) == 0)`: the odd threads return after
    # the first barrier, the even ones wait at the second; the launch stops in step 2.
    binary = build_dir() / "bin" / "planted_p12_k1_barrier_in_if_cpu"
    if not binary.is_file():
        pytest.skip("%s is not built" % binary)
    chromium()  # skips, with the install advice, before anything runs
    lines = []
    rc, page = trace_html(tmp_path, "divergence", "p12", "--k1", "--binary", binary, output=lines)
    assert rc == 1, "\n".join(lines)
    rows = terminal_rows(lines, "sdata")
    waiting = [l.strip() for l in lines if re.match(r"^  T\S.* wait at __syncthreads\(\) at \S+\.cu:\d+$", l)]
    returned = [l.strip() for l in lines if re.match(r"^  T\S.* had returned$", l)]
    assert len(rows) >= 2 and waiting and returned, "\n".join(lines)
    assert waiting[0].startswith("T₀, T₂, T₄, T₆ wait") and returned == ["T₁, T₃, T₅, T₇ had returned"]

    probe, console = browse(page, tmp_path, probe=DIVERGENCE_PROBE)
    assert console == [], console
    assert probe["ready"] == "1" and probe["errors"] is None
    steps = probe["steps"]
    assert steps == len(rows) and probe["shown"] == str(steps)  # the page opens at the stopped step
    assert probe["title"].startswith("step %d: " % steps)
    drawn = probe["rows"]
    assert [r["label"] for r in drawn] == ["start"] + ["step %d" % k for k in range(1, steps + 1)]
    cells = [c for r in drawn for c in r["cells"]]
    assert len(cells) == (steps + 1) * 8 and all(c["laid"] for c in cells), cells
    with_values = [c for c in cells if c["value"] != "\u00b7"]  # the start row's cells hold no value yet
    assert len(with_values) == steps * 8 > 0
    white = "rgb(255, 255, 255)"
    for r, (values, written) in zip(drawn[1:], rows):
        # The array as it stood after each step, the stopped one included, as the terminal shows it;
        # the cells the step wrote painted in their thread's colour; no row faded at the last step.
        assert [c["value"] for c in r["cells"]] == values, (r["label"], r["cells"])
        assert len([c for c in r["cells"] if c["fill"] != white]) == written, (r["label"], r["cells"])
        assert r["opacity"] == "1", r
    assert [c["value"] for c in drawn[-1]["cells"]] == ["1", "1", "5", "3", "9", "5", "13", "7"]
    assert rows[-1][1] == 4  # T₀, T₂, T₄ and T₆ wrote before they waited
    # Where the threads were: under the grid, and in the stopped step's panel.
    assert probe["stop"], "the report of where the threads were is not shown"
    for line in waiting + returned:
        assert line in probe["stop"] and line in probe["detail"], (line, probe["stop"], probe["detail"])
