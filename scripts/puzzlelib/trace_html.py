"""`trace --html FILE`: the trace as one self-contained web page.

Per launch, a grid: one row per step (the start, then each barrier interval, warp collective or
cuda::barrier phase), one column per shared-memory cell, each cell holding its value after the
step. A cell a thread wrote is filled with that thread's colour; an arrow runs from every cell a
thread read to the cell it then wrote; cells and arrows of a hazard or an uninitialized read are
red. A slider (or the arrow keys) steps through the rows, and the panel under the grid says what
the step did, in the same words as the terminal trace.

The page loads nothing: the SVG is drawn here, the script and the style are inline, and a
Content-Security-Policy forbids every request, so it opens from disk with no network.
"""

from __future__ import annotations

import colorsys
import html
import json
from typing import List, Tuple

from .messages import lang, tr
from .trace_model import Launch, fmt, tname

CELL_W = 42
ROW_H = 46     # a cell is 26 px high: the 20 px between two rows hold the arrows
CELL_H = 26
LABEL_W = 96   # the row labels: "start", "step 3"
HEAD_H = 40    # array names and cell indices above the grid
GAP = 18       # between two shared arrays

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.2em; color: #222; }
h1 { font-size: 1.25em; margin: 0 0 .3em; overflow-wrap: anywhere; }  /* a long path in the title wraps */
h2 { font-size: 1.05em; margin: 1.6em 0 .3em; font-family: ui-monospace, monospace; }
pre { font: 12.5px/1.35 ui-monospace, Menlo, Consolas, monospace; margin: 0; white-space: pre-wrap; }
.io { background: #f5f5f5; padding: .5em .7em; border-radius: 4px; }
.grid { overflow-x: auto; border: 1px solid #ddd; border-radius: 4px; padding: 4px; }
.controls { margin: .5em 0; display: flex; gap: .5em; align-items: center; }
.controls input[type=range] { flex: 1; max-width: 40em; }
.detail { border-left: 4px solid #888; padding: .4em .8em; background: #fafafa; min-height: 3em; }
.detail, .io, .stop { overflow-wrap: anywhere; }
@media (max-width: 600px) { body { margin: .5em; } .controls { flex-wrap: wrap; } .controls input[type=range] { flex-basis: 100%; order: 5; } }
.detail.bad { border-left-color: #d00; }
.legend span { display: inline-block; margin: 0 .7em .2em 0; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 2px; vertical-align: -1px; margin-right: .25em; }
.swatch.origin { border: 2px dashed #111; box-sizing: border-box; }
.verdict-pass { color: #070; font-weight: bold; }
.verdict-fail { color: #d00; font-weight: bold; }
.red { color: #d00; }
svg text { font: 12px ui-monospace, Menlo, Consolas, monospace; }
svg .cell rect { fill: #fff; stroke: #bbb; }
svg .cell.empty text { fill: #aaa; }
svg .cell.hazard rect { fill: #ffd6d6; stroke: #d00; stroke-width: 2.5; }
svg .cell.origin rect { stroke: #111 !important; stroke-width: 3; stroke-dasharray: 5 3; }
svg .row.future { opacity: .12; }
svg .row.current .rowlabel { font-weight: bold; }
svg .rowband { fill: transparent; }
svg .row.current .rowband { fill: #fff4c2; }
svg .row.bad .rowlabel { fill: #d00; }
svg .arrow { fill: none; stroke-width: 1.6; opacity: .85; }
svg .arrow.hazard { stroke: #d00 !important; stroke-width: 2.6; opacity: 1; }
svg .arrow.hidden { display: none; }
svg .note { fill: #555; font-style: italic; }
"""

# Steps through one launch: rows after the slider's value fade, arrows into them are hidden,
# and the detail panel shows the current step. It records script errors on the body so a
# headless browser's DOM dump can prove that the page ran cleanly.
SCRIPT = r"""
(function () {
  var errors = 0;
  window.addEventListener('error', function () {
    errors += 1; document.body.setAttribute('data-errors', String(errors));
  });
  var launches = document.querySelectorAll('section.launch[data-steps]');
  launches.forEach(function (sec) {
    var slider = sec.querySelector('input[type=range]');
    var label = sec.querySelector('.stepname');
    var detail = sec.querySelector('.detail');
    var texts = JSON.parse(sec.querySelector('script.steps').textContent);
    function show(k) {
      k = Math.max(0, Math.min(texts.length - 1, k));
      slider.value = String(k);
      sec.querySelectorAll('g.row').forEach(function (row) {
        var r = Number(row.getAttribute('data-row'));
        row.classList.toggle('future', r > k);
        row.classList.toggle('current', r === k);
      });
      sec.querySelectorAll('.arrow').forEach(function (a) {
        a.classList.toggle('hidden', Number(a.getAttribute('data-step')) > k);
      });
      label.textContent = texts[k].title;
      detail.textContent = texts[k].text;
      detail.classList.toggle('bad', texts[k].bad);
      sec.setAttribute('data-shown', String(k));
    }
    slider.addEventListener('input', function () { show(Number(slider.value)); });
    sec.querySelector('.prev').addEventListener('click', function () { show(Number(slider.value) - 1); });
    sec.querySelector('.next').addEventListener('click', function () { show(Number(slider.value) + 1); });
    sec.querySelector('.first').addEventListener('click', function () { show(0); });
    sec.querySelector('.last').addEventListener('click', function () { show(texts.length - 1); });
    sec.addEventListener('keydown', function (e) {
      if (e.key === 'ArrowLeft') { show(Number(slider.value) - 1); e.preventDefault(); }
      if (e.key === 'ArrowRight') { show(Number(slider.value) + 1); e.preventDefault(); }
    });
    // page.html#step=2 opens at step 2; the last step otherwise.
    var wanted = /step=(\d+)/.exec(location.hash);
    show(wanted ? Number(wanted[1]) : texts.length - 1);
  });
  document.body.setAttribute('data-ready', String(launches.length));
})();
"""


# Thread colours. Every thread keeps one colour, and the threads drawn together must be told apart:
# the palette is a farthest-point sequence in CIE L*a*b* (each colour the candidate farthest from
# all those before it), so any first N threads, 8, 16 or 32 of them, are as far apart as a greedy
# choice gets (tests/python/test_trace_stop.py measures the distances). The candidates avoid the
# hazard red's neighbourhood (hues 0 +- HUE_GAP, and a distance in L*a*b*), so that no thread's
# cells or arrows can be mistaken for a hazard, and are dark enough to read on white (a contrast
# of 3:1, for the arrows and swatches); a written cell is filled with a pale tint of its thread's
# colour and outlined in the colour itself.
HAZARD_RED = "#d00"
HAZARD_FILL = "#ffd6d6"  # a hazard cell's fill (STYLE's .hazard rect)
HUE_GAP = 40
PALETTE_SIZE = 256  # trace's MAX_THREADS: a block drawn has at most this many threads
FILL_TINT = 0.3     # a written cell's fill: this much of the thread's colour, the rest white


def _rgb(hue: float, sat: float, light: float) -> Tuple[float, float, float]:
    return colorsys.hls_to_rgb(hue / 360, light / 100, sat / 100)


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _luminance(rgb: Tuple[float, float, float]) -> float:
    r, g, b = map(_linear, rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def lab(rgb: Tuple[float, float, float]) -> Tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour with components 0..1; the distance of two is ΔE (CIE76)."""
    r, g, b = map(_linear, rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _hex_rgb(text: str) -> Tuple[float, float, float]:
    digits = text[1:] if len(text) == 7 else "".join(c * 2 for c in text[1:])
    return tuple(int(digits[i:i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def _tint(rgb: Tuple[float, float, float]) -> Tuple[float, float, float]:
    return tuple(round(255 * (1 - FILL_TINT + FILL_TINT * c)) / 255 for c in rgb)  # type: ignore[return-value]


def _dist(a, b) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


_palette: List[str] = []


def palette() -> List[str]:
    """The thread colours, thread 0 first, as #rrggbb (computed once, in about a third of a second)."""
    if _palette:
        return _palette
    red, fill = lab(_hex_rgb(HAZARD_RED)), lab(_hex_rgb(HAZARD_FILL))
    cands = []  # type: List[Tuple[float, float, float]]
    for hue in range(HUE_GAP, 360 - HUE_GAP + 1, 5):
        for sat in (50, 70, 90):
            for light in (24, 32, 40, 48):
                rgb = _rgb(hue, sat, light)
                if (1.05 / (_luminance(rgb) + 0.05) >= 3 and _dist(lab(rgb), red) >= 55
                        and _dist(lab(_tint(rgb)), fill) >= 14):
                    cands.append(rgb)
    labs = [lab(c) for c in cands]
    first = cands.index(_rgb(215, 70, 40))  # thread 0: a plain blue
    chosen = [first]
    nearest = [_dist(l, labs[first]) for l in labs]
    while len(chosen) < min(PALETTE_SIZE, len(cands)):
        k = max(range(len(cands)), key=lambda i: nearest[i])  # the first of the farthest: deterministic
        chosen.append(k)
        nearest = [min(d, _dist(l, labs[k])) for d, l in zip(nearest, labs)]
    _palette.extend("#%02x%02x%02x" % tuple(round(255 * c) for c in cands[k]) for k in chosen)
    return _palette


def thread_colour(t: int, light: bool = False) -> str:
    """Thread t's colour (its arrows, outlines and swatch), or with light=True the pale fill of a
    cell it wrote. Beyond PALETTE_SIZE threads the colours repeat."""
    colours = palette()
    colour = colours[t % len(colours)]
    if not light:
        return colour
    return "#%02x%02x%02x" % tuple(round(255 * c) for c in _tint(_hex_rgb(colour)))


def esc(s: object) -> str:
    return html.escape(str(s), quote=True)


class Layout:
    """Where each shared cell's column is: arrays side by side, a gap between two."""

    def __init__(self, launch: Launch):
        self.x = {}  # type: Dict[Tuple[str, int], float]
        self.heads = []  # type: List[Tuple[str, float, int]]
        x = float(LABEL_W)
        for a in launch.arrays:
            if a["type"] == "barrier":  # a cuda::barrier's state is not data: its phases are rows
                continue
            self.heads.append((a["name"], x, a["count"]))
            for i in range(a["count"]):
                self.x[(a["name"], i)] = x + i * CELL_W
            x += a["count"] * CELL_W + GAP
        self.width = max(x, LABEL_W + 8 * CELL_W) + 8

    @staticmethod
    def y(row: int) -> float:
        return HEAD_H + row * ROW_H


def arrows(launch: Launch) -> List[dict]:
    """From each shared cell a thread read to the shared cell it wrote next.

    A read in step k saw the cell as it was after step k-1 (row k-1), unless a thread wrote the
    cell earlier in step k: then it saw that write, which row k shows (a race's essence: the value
    read is the new one). The write lands in the row of the step that made it, which is the same
    step or a later one (the read-barrier-write pattern of a scan holds the value in a register
    across the barrier)."""
    pending = {}  # type: Dict[int, List[Tuple[Access, int]]]
    out = []  # type: List[dict]
    for k, step in enumerate(launch.steps, 1):
        for acc in step.accesses:
            if not acc.shared:
                continue
            if acc.kind in ("r", "rw"):
                pending.setdefault(acc.thread, []).append((acc, k if acc.fresh else k - 1))
            if acc.kind in ("w", "rw"):
                for src, row in pending.pop(acc.thread, []):
                    for cell in src.cells[:1]:
                        for dst in acc.cells[:1]:
                            out.append(dict(thread=acc.thread, src=(src.array, cell), row0=row,
                                            dst=(acc.array, dst), row1=k, hazard=src.hazard or acc.hazard))
    return out


def grid_svg(launch: Launch) -> str:
    lay = Layout(launch)
    nrows = len(launch.steps) + 1
    height = HEAD_H + (nrows - 1) * ROW_H + CELL_H + 10
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" class="trace-grid" width="%d" height="%d" '
             'viewBox="0 0 %d %d" role="img" aria-label="shared memory after each step">'
             % (lay.width, height, lay.width, height)]
    parts.append('<defs><marker id="head-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
                 'markerHeight="8" markerUnits="userSpaceOnUse" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
                 'fill="context-stroke"/></marker></defs>' % id(launch))
    for name, x, count in lay.heads:
        parts.append('<text x="%.1f" y="14" class="arrayname">%s</text>' % (x, esc(name)))
        for i in range(count):
            parts.append('<text x="%.1f" y="32" text-anchor="middle" fill="#888">%d</text>'
                         % (x + i * CELL_W + CELL_W / 2, i))
    before = {a["name"]: [None] * a["count"] for a in launch.arrays}
    rows = [(tr("start"), before, {}, set(), None)]  # type: List[Tuple[str, dict, dict, set, Optional[Step]]]
    for k, s in enumerate(launch.steps, 1):
        rows.append((tr("step %d") % k, s.after, s.written, s.marked, s))
    for r, (label, values, written, marked, step) in enumerate(rows):
        y = lay.y(r)
        bad = bool(step and (step.hazards or step.uninit))
        parts.append('<g class="row%s" data-row="%d">' % (" bad" if bad else "", r))
        parts.append('<rect class="rowband" x="0" y="%.1f" width="%d" height="%d"/>' % (y - 3, lay.width, CELL_H + 6))
        kind = "" if step is None or step.kind == "interval" else (" (warp)" if step.kind == "warp" else " (barrier)")
        parts.append('<text class="rowlabel" x="4" y="%.1f">%s%s</text>' % (y + 17, esc(label), kind))
        for name, x0, count in lay.heads:
            vals = values.get(name, [None] * count)
            for i in range(count):
                x = x0 + i * CELL_W
                v = vals[i] if i < len(vals) else None
                cls = "cell"
                style = ""
                title = "%s[%d] = %s" % (name, i, fmt(v))
                if (name, i) in marked:
                    cls += " hazard"
                    title += " (in a hazard or an uninitialized read)"
                elif (name, i) in written:
                    t = written[(name, i)]
                    cls += " written"
                    style = ' style="fill:%s;stroke:%s"' % (thread_colour(t, True), thread_colour(t))
                    title += ", written by %s" % tname(t)
                if (r, name, i) in launch.origin:
                    cls += " origin"
                    title += " (%s)" % tr("on the chain back from the first wrong element")
                if v is None:
                    cls += " empty"
                parts.append('<g class="%s" data-cell="%s[%d]"><title>%s</title><rect x="%.1f" y="%.1f" width="%d" '
                             'height="%d"%s/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text></g>'
                             % (cls, esc(name), i, esc(title), x + 1, y, CELL_W - 2, CELL_H, style,
                                x + CELL_W / 2, y + 17, esc(fmt(v) if v is not None else "\u00b7")))
        if step is not None and step.kind == "warp" and not launch.arrays:
            parts.append('<text class="note" x="%d" y="%.1f">%s</text>' % (LABEL_W, y + 17, esc(step.start)))
        parts.append("</g>")
    for a in arrows(launch):
        x0 = lay.x.get(a["src"])
        x1 = lay.x.get(a["dst"])
        if x0 is None or x1 is None:
            continue
        x0 += CELL_W / 2
        x1 += CELL_W / 2
        if a["row0"] == a["row1"]:
            # Read and written in one step: an arc over the row, from the cell as written to the cell written.
            y0 = y1 = lay.y(a["row0"]) - 1
            c0 = c1 = y0 - (ROW_H - CELL_H) + 2
        else:
            # A gentle curve, so arrows between the same two rows that cross stay apart.
            y0 = lay.y(a["row0"]) + CELL_H + 1
            y1 = lay.y(a["row1"]) - 1
            c0 = c1 = (y0 + y1) / 2
        colour = thread_colour(a["thread"])
        parts.append('<path class="arrow%s" data-step="%d" data-thread="%d" data-row0="%d" '
                     'd="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" style="stroke:%s" marker-end="url(#head-%s)">'
                     '<title>%s: %s[%d] \u2192 %s[%d]</title></path>'
                     % (" hazard" if a["hazard"] else "", a["row1"], a["thread"], a["row0"], x0, y0, x0, c0, x1, c1,
                        x1, y1, colour, id(launch), tname(a["thread"]), esc(a["src"][0]), a["src"][1],
                        esc(a["dst"][0]), a["dst"][1]))
    parts.append("</svg>")
    return "".join(parts)


def legend(launch: Launch) -> str:
    shown = min(launch.threads, 32)
    items = ['<span><span class="swatch" style="background:%s"></span>%s</span>' % (thread_colour(t), tname(t))
             for t in range(shown)]
    more = tr(" \u2026 and %d more threads") % (launch.threads - shown) if launch.threads > shown else ""
    origin = (' <span><span class="swatch origin"></span>%s</span>' % esc(tr("on the chain back from the first wrong element"))
              if launch.origin else "")
    return ('<p class="legend">%s %s%s. <span><span class="swatch" style="background:%s"></span>%s</span>%s</p>'
            % (esc(tr("threads:")), "".join(items), esc(more), HAZARD_RED, esc(tr("a hazard or an uninitialized read")),
               origin))


def launch_section(n: int, total: int, launch: Launch, step_texts: List[Tuple[str, str, bool]], head: str,
                   stop: str = "") -> str:
    if not launch.traced or launch.block_index is None:
        return '<section class="launch"><h2>%s</h2><p>%s</p></section>' % (esc(head), esc(tr("None of its blocks is the traced one.")))
    texts = [dict(title=tr("start: shared memory before the kernel runs (nothing written yet)"),
                  text=tr("Rows below are the steps; use the slider, the buttons or the arrow keys."), bad=False)]
    texts += [dict(title=t, text=body, bad=bad) for t, body, bad in step_texts]
    body = ['<section class="launch" data-launch="%d" data-steps="%d" tabindex="0">' % (n, len(launch.steps))]
    body.append("<h2>%s</h2>" % esc(head))
    if launch.arrays:
        body.append("<p>%s%s</p>" % (esc(tr("shared memory: ")), esc(", ".join(
            "%s[%d] (%s%s)" % (a["name"], a["count"], a["type"] or "?", ", dynamic" if a["dyn"] else "")
            for a in launch.arrays))))
    body.append(legend(launch))
    body.append('<div class="controls"><button class="first" title="%s">%s</button>'
                '<button class="prev" title="%s (\u2190)">\u25c0</button>'
                '<input type="range" min="0" max="%d" value="%d" aria-label="step">'
                '<button class="next" title="%s (\u2192)">\u25b6</button>'
                '<button class="last" title="%s">%s</button></div>'
                % (esc(tr("the start")), esc(tr("start")), esc(tr("previous step")), len(launch.steps),
                   len(launch.steps), esc(tr("next step")), esc(tr("the last step")), esc(tr("end"))))
    body.append('<p><strong class="stepname"></strong></p>')
    body.append('<div class="grid">%s</div>' % grid_svg(launch))
    body.append('<pre class="detail"></pre>')
    # </script> cannot occur inside JSON text once "/" is escaped.
    body.append('<script type="application/json" class="steps">%s</script>'
                % json.dumps(texts, ensure_ascii=False).replace("</", "<\\/"))
    if launch.truncated:
        body.append('<p class="red">%s</p>' % esc(tr("(the block made more events than a trace can hold; the rest are not shown)")))
    if stop:  # where the threads were, and the simulator's report
        body.append('<pre class="red stop">%s</pre>' % esc(stop))
    body.append("</section>")
    return "".join(body)


def page(title: str, io_lines: List[str], sections: List[str], verdict: str) -> str:
    ok = verdict == "pass"
    return "".join([
        '<!DOCTYPE html>\n<html lang="%s"><head><meta charset="utf-8">' % lang(),
        '<meta http-equiv="Content-Security-Policy" content="%s">' % CSP,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>%s</title><style>%s</style></head><body>" % (esc(title), STYLE),
        "<h1>%s</h1>" % esc(title),
        '<pre class="io">%s</pre>' % esc("\n".join(io_lines)) if io_lines else "",
        '<p class="%s">%s</p>' % ("verdict-pass" if ok else "verdict-fail",
                                  esc(tr("passed")) if ok else esc(tr("failed: %s") % tr(verdict))),
        "".join(sections),
        "<script>%s</script></body></html>\n" % SCRIPT,
    ])
