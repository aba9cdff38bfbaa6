"""`trace`: run one small case on the simulator and print, barrier interval by barrier interval,
what each thread of one block read and wrote in shared memory, in the course notes' style
(`T₁ reads shared[0] = 0`), every shared array after the interval, and any hazard in red.
The events come from the simulator
(CUDASIM_TRACE, harness/sim/src/trace.cpp); trace_model.py turns them into steps.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import build as bld
from . import trace_html
from .common import PROG, BuildError, UsageError, build_dir, out, rel, run_timeout, stdout_is_tty
from .cases import TRACE_MAX_THREADS, random_case, traced_case
from .driver import diagnosis_record, parse_result_line
from .diagnosis import render as render_diagnosis
from .explain import diagnosis_reason, origin_lines
from . import driver_text
from .messages import activate, korean, tr, tr_reason
from .options import seed_int
from .request import Verb, parse_request, pick
from .trace_model import Access, Launch, Step, fmt, guess_type, load, mark_origin, short_site, tlist, tname

WIDTH = 100
MAX_THREADS = TRACE_MAX_THREADS
MAX_CELLS = 1024
COLLAPSE_ABOVE = 16  # more active threads than this: threads that do the same are one line

TRACE_HELP = """\
usage: {prog} trace pNN --VARIANT [--solution] [--n N --tpb T] [--seed S] [--blockidx B] [--html FILE] [--lang L]

Run one small case on the CPU simulator and show, for every kernel launch and every barrier
interval of one block, what each thread read and wrote in shared memory, the shared arrays after
the interval (written cells marked), and hazards, uninitialized reads and divergence in red.
Warp collectives and cuda::barrier phases are steps of their own.

  --VARIANT          which variant (see `{prog} run pNN --help`)
  --solution         trace the reference solution instead of your file
  --n N, --tpb T     this size instead of the show input (at most {threads} threads per block)
  --seed S           a random input: the one `run pNN --VARIANT --seed S` runs (with --n and
                     --tpb, of that size), so that a replay line of `check` or `run` traces as it is
  --backend cpu      accepted as the replay line has it: trace always runs the CPU simulator
  --blockidx B       the block to follow, its blockIdx.x (default 0)
  --html FILE        also write the trace as one web page (a grid per launch: a row per step,
                     a column per shared cell, arrows from what each thread read to what it
                     wrote, hazards in red, a slider to step through); it needs no network
  --lang en|ko       messages (and the page) in English (the default) or Korean; PUZZLE_LANG=ko
                     or a Korean locale does the same
"""

TRACE = Verb("trace", dict(pick("--solution", "--n", "--tpb", "--seed", "--backend"),
                           **{"--blockidx": seed_int, "--binary": str, "--html": str}),
             TRACE_HELP.replace("{threads}", str(MAX_THREADS)),
             missing="trace needs a puzzle and a variant, e.g. `{prog} trace p14 --simple`.", one_variant=True)


class Style:
    def __init__(self, color: bool):
        self.color = color

    def red(self, s: str) -> str:
        return "\033[1;31m%s\033[0m" % s if self.color else s

    def written(self, s: str) -> str:
        return "\033[1;32m%s\033[0m" % s if self.color else s

    def bad(self, s: str) -> str:
        return "\033[1;41;97m%s\033[0m" % s if self.color else s

    def dim(self, s: str) -> str:
        return "\033[2m%s\033[0m" % s if self.color else s


# ---- entries: what one thread did, in the notes' words ------------------------------------------

def cell_name(acc: Access) -> str:
    if len(acc.cells) == 1:
        return "%s[%d]" % (acc.array, acc.index)
    return "%s[%d\u2026%d]" % (acc.array, acc.cells[0], acc.cells[-1])


def values(vs: Optional[List[object]]) -> str:
    return " ".join(fmt(v) for v in (vs or [None]))


def thread_entries(accs: List[Access]) -> List[Tuple[str, bool]]:
    """One thread's shared accesses of a step as (text, red). A read of a cell that this thread
    then writes is one `updates` entry at the write (`shared[i] += x` reads, then writes)."""
    merged = {}  # type: Dict[int, Access]   index of a write -> the read it absorbs
    used = set()
    for k, a in enumerate(accs):
        if a.kind != "w":
            continue
        for j in range(k - 1, -1, -1):
            b = accs[j]
            if b.array == a.array and b.cells == a.cells:
                if b.kind == "r" and j not in used:
                    merged[k] = b
                    used.add(j)
                break
    items = []
    for k, a in enumerate(accs):
        if k in used:
            continue
        t = tname(a.thread)
        if k in merged:
            r = merged[k]
            items.append(("%s updates %s: %s \u2192 %s" % (t, cell_name(a), values(r.old), values(a.new)), a.hazard or r.hazard))
        elif a.kind == "r":
            items.append(("%s reads %s = %s" % (t, cell_name(a), values(a.old)), a.hazard))
        elif a.kind == "w":
            items.append(("%s writes %s = %s" % (t, cell_name(a), values(a.new)), a.hazard))
        else:
            items.append(("%s %supdates %s: %s \u2192 %s" % (t, "atomically " if a.atomic else "", cell_name(a),
                                                             values(a.old), values(a.new)), a.hazard))
    return repeats(items)


def repeats(items: List[Tuple[str, bool]]) -> List[Tuple[str, bool]]:
    """The same access made again and again (a thread spinning on a cell) is one entry: `... \u00d7N`."""
    out = []  # type: List[Tuple[str, bool]]
    count = 0
    for k, item in enumerate(items):
        count += 1
        if k + 1 < len(items) and items[k + 1] == item:
            continue
        out.append((item[0] + (" \u00d7%d" % count if count > 1 else ""), item[1]))
        count = 0
    return out


def columns(items: List[str], indent: int, width: int = WIDTH) -> List[str]:
    """Column-major layout, as the notes set `T₁ reads ...` side by side."""
    if not items:
        return []
    plain = [re.sub(r"\033\[[0-9;]*m", "", s) for s in items]
    colw = max(len(s) for s in plain) + 4
    fit = max(1, (width - indent) // colw)
    ncols = max(1, min(fit, max(2 if len(items) >= 4 else 1, -(-len(items) // 4))))
    nrows = -(-len(items) // ncols)
    lines = []
    for r in range(nrows):
        cells = []
        for c in range(ncols):
            k = c * nrows + r
            if k < len(items):
                pad = colw - len(plain[k]) if c < ncols - 1 else 0
                cells.append(items[k] + " " * pad)
        lines.append(" " * indent + "".join(cells).rstrip())
    return lines


def affine(idx: List[int], threads: List[int]) -> str:
    """`T-1`, `2T+1`, `0`: an index written in terms of the thread."""
    d = idx[1] - idx[0] if len(idx) > 1 else 0
    c = idx[0] - d * threads[0]
    if d == 0:
        return str(c)
    head = "T" if d == 1 else "%dT" % d
    return head + ("" if c == 0 else "%+d" % c)


def collapsed(by_thread: Dict[int, List[Access]], style: Style) -> List[str]:
    """Threads in a row that do the same thing with indices that move with the thread: one line."""
    lines = []
    ids = sorted(by_thread)
    shapes = {t: [(a.kind, a.array, a.cells[0], a.hazard) for a in by_thread[t]] for t in ids}
    i = 0
    while i < len(ids):
        j = i + 1
        first = shapes[ids[i]]
        delta = None
        while j < len(ids) and ids[j] == ids[j - 1] + 1:
            s, p = shapes[ids[j]], shapes[ids[j - 1]]
            if [x[:2] for x in s] != [x[:2] for x in first]:
                break
            d = [x[2] - y[2] for x, y in zip(s, p)]
            if delta is None:
                delta = d
            elif d != delta:
                break
            j += 1
        group = ids[i:j]
        verbs = {"r": "read", "w": "write", "rw": "update"}
        parts = []
        for k, (kind, arr, _, _) in enumerate(first):
            cells = [shapes[t][k][2] for t in group]
            parts.append("%s %s[%s]" % (verbs[kind], arr, affine(cells, group)))
        red = any(x[3] for t in group for x in shapes[t])
        head = tlist(group)
        text = "%s: %s" % (head, ", ".join(parts))
        lines += wrap(style.red(text + "  !") if red else text, 2)
        i = j
    return lines


def wrap(text: str, indent: int, width: int = WIDTH) -> List[str]:
    lines, line = [], " " * indent
    for word in text.split(" "):
        if len(line) + len(word) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = " " * (indent + 4)
        line += word + " "
    lines.append(line.rstrip())
    return lines


# ---- arrays -------------------------------------------------------------------------------------

def array_rows(name: str, vals: List[object], written: set, marked: set, cw: int, style: Style) -> List[str]:
    """`shared  [0  1  3 ...]`, with a marker line under written (^) and red (!) cells when there
    is no colour; long arrays wrap with their index range."""
    label_w = max(8, len(name) + 2)
    # A row is 2 + label_w + 1 + per_line * cw - 1 + 1 columns: `  label  [v1 v2 ... vk]`.
    per_line = max(1, (WIDTH - label_w - 3) // cw)
    if len(vals) > per_line:  # wrapped rows are labelled with their index range: `sdata[18…35] `
        label_w = max(label_w, len("%s[%d\u2026%d] " % (name, len(vals), len(vals))))
        per_line = max(1, (WIDTH - label_w - 3) // cw)
    lines = []
    for lo in range(0, len(vals), per_line):
        hi = min(len(vals), lo + per_line)
        label = name if len(vals) <= per_line else "%s[%d\u2026%d]" % (name, lo, hi - 1)
        label = label.ljust(label_w) if len(label) < label_w else label + " "
        cells, marks = [], []
        for i in range(lo, hi):
            text = fmt(vals[i]).ljust(cw - 1)
            if i in marked:
                cells.append(style.bad(text) if style.color else text)
                marks.append("!".ljust(cw - 1))
            elif i in written:
                cells.append(style.written(text))
                marks.append("^".ljust(cw - 1))
            else:
                cells.append(text)
                marks.append(" " * (cw - 1))
        lines.append("  " + label + "[" + " ".join(cells).rstrip() + "]")
        if not style.color and (written or marked) and any(m.strip() for m in marks):
            lines.append("  " + " " * len(label) + " " + " ".join(marks).rstrip())
    return lines


# ---- a step ------------------------------------------------------------------------------------

def lane_values(ev: dict, key: str, source: List[str]) -> Dict[int, str]:
    size = ev["bytes"] or 4
    present = [v for v in ev[key] if v is not None]
    ctype = "float" if present and all(guess_type(v, size) == "float" for v in present if v) and any(present) else "int"
    from .trace_model import decode
    res = {}
    for lane, v in enumerate(ev[key]):
        if v is not None:
            res[lane] = fmt(decode("%016x" % 0 if v is None else v.to_bytes(8, "little").hex(), size, ctype))
    return res


def warp_title(ev: dict) -> str:
    lanes = [l for l in range(32) if ev["lanes"] >> l & 1]
    base = ev["warp"] * 32
    who = "lanes %s" % tlist(lanes, lanes=True) + ("" if ev["warp"] == 0 else " of warp %d (threads %s)"
                                                  % (ev["warp"], tlist([base + l for l in lanes])))
    params = sorted({p for p in ev["param"] if p is not None})
    p = str(params[0]) if len(params) == 1 else "/".join(map(str, params))
    op = ev["op"]
    what = {"__shfl_down_sync": "shuffle down by " + p, "__shfl_up_sync": "shuffle up by " + p,
            "__shfl_xor_sync": "shuffle xor " + p, "__shfl_sync": "read lane " + p,
            "__ballot_sync": "vote (ballot)", "__any_sync": "vote (any)", "__all_sync": "vote (all)",
            "__syncwarp": "meet at __syncwarp", "__activemask": "take __activemask()",
            "__reduce_add_sync": "add up", "__reduce_min_sync": "take the minimum",
            "__reduce_max_sync": "take the maximum"}.get(op, op)
    return "%s %s (%s at %s)" % (who, what, op, short_site(ev["site"]))


def render_step(k: int, step: Step, launch: Launch, widths: Dict[str, int], style: Style, source: List[str],
                width: int = WIDTH) -> List[str]:
    """The step's lines; `width` 0 puts one entry a line (the page, which reflows them itself)."""
    lines = []
    if step.kind == "warp":
        ev = step.warp
        lines.append("step %d: %s" % (k, warp_title(ev)))
        if ev["op"] not in ("__syncwarp", "__activemask"):
            for key, label in (("val", "gave"), ("res", "got")):
                vals = lane_values(ev, key, source)
                lanes = sorted(vals)
                if lanes:
                    cw = max(len(v) for v in vals.values()) + 1
                    row = [vals[l] for l in range(lanes[0], lanes[-1] + 1) if l in vals]
                    lines += array_rows(label, row, set(), set(), max(cw, 3), style)
        return lines
    if step.kind == "cbar":
        arrived = [e["t"] for e in step.cbar]
        last = step.cbar[-1]
        lines.append("step %d: %s: %s arrived (the last at %s; initialised at %s)"
                     % (k, step.start, tlist(arrived), short_site(last["site"]), short_site(last["init"])))
        return lines
    title = interval_title(k, step)
    lines += wrap(title, 0) if width else [title]  # the page's title is one line; it wraps it itself
    # Global memory, shortened: one line per array and direction.
    glob = {}  # type: Dict[Tuple[str, str], List[Access]]
    for a in step.accesses:
        if not a.shared:
            glob.setdefault(("atomically update" if a.atomic else {"r": "read", "w": "write", "rw": "update"}[a.kind],
                             a.array), []).append(a)
    for (verb, arr), accs in glob.items():
        cells = sorted({c for a in accs for c in a.cells})
        rng = ", ".join(str(x) if x == y else "%d\u2026%d" % (x, y) for x, y in _runs(cells))
        vals = [fmt(v) for a in sorted(accs, key=lambda a: a.cells[0])
                for v in ((a.new if a.kind == "w" else a.old) or [None])]
        shown = " ".join(vals[:8]) + (" \u2026" if len(vals) > 8 else "")
        who = sorted({a.thread for a in accs})
        if len(who) == 1:
            verb = re.sub(r"^(atomically )?(\w+)", lambda m: (m.group(1) or "") + m.group(2) + "s", verb)
        text = "global: %s %s %s[%s] = %s" % (tlist(who), verb, arr, rng, shown)
        red = any(a.hazard for a in accs)
        lines += [style.red(l) if red else l for l in wrap(text, 2)]
    by_thread = {}  # type: Dict[int, List[Access]]
    for a in step.accesses:
        if a.shared:
            by_thread.setdefault(a.thread, []).append(a)
    if len(by_thread) > COLLAPSE_ABOVE:
        lines += collapsed(by_thread, style)
    else:
        items = []
        for t in sorted(by_thread):
            for text, red in thread_entries(by_thread[t]):
                items.append(style.red(text + " !") if red else text)
        lines += columns(items, 2, width)
    idle = [t for t in range(launch.threads) if t not in by_thread and not any(a.thread == t for a in step.accesses)]
    if by_thread and idle:
        lines.append(style.dim(tr("  idle: %s") % tlist(idle)))
    if step.cbar:
        lines.append("  %s arrive at %s (phase %d)" % (tlist([e["t"] for e in step.cbar]), step.cbar[0]["arr"],
                                                       step.cbar[0]["phase"]))
    touched = {a.array for a in step.accesses if a.shared} | {m[0] for m in step.marked}
    for arr in launch.arrays:
        name = arr["name"]
        if name in touched and name in step.after:
            written = {c for (n, c) in step.written if n == name}
            marked = {c for (n, c) in step.marked if n == name}
            lines += array_rows(name, step.after[name], written, marked, widths[name], style)
    lines += hazard_lines(step, launch, style)
    return lines


def _runs(cells: List[int]) -> List[Tuple[int, int]]:
    from .trace_model import runs
    return runs(cells)


def hazard_lines(step: Step, launch: Launch, style: Style) -> List[str]:
    lines = []
    groups = {}  # type: Dict[Tuple[str, str, str], List[dict]]
    for h in step.hazards:
        groups.setdefault((h["kind"], launch.site_of(h["pca"]), launch.site_of(h["pcb"])), []).append(h)
    for (kind, sa, sb), hs in groups.items():
        first = "read" if kind == "write-after-read" else "write"
        second = "read" if kind == "read-after-write" else "write"
        where = "another block" if hs[0]["cross"] else "no barrier between them"
        cells = ", ".join("%s[%d] %s\u2192%s" % (h["arr"], h["i"], tname(h["ta"]), tname(h["tb"])) for h in hs[:12])
        more = " \u2026 (%d in all)" % len(hs) if len(hs) > 12 else ""
        text = "! %s: %s at %s, then %s at %s, %s: %s%s" % (kind, first, sa, second, sb, where, cells, more)
        lines += [style.red(l) for l in wrap(text, 2)]
    ugroups = {}  # type: Dict[str, List[dict]]
    for u in step.uninit:
        ugroups.setdefault(launch.site_of(u["pc"]), []).append(u)
    for site, us in ugroups.items():
        cells = ", ".join("%s[%d] by %s" % (u["arr"], u["i"], tname(u["t"])) for u in us[:12])
        text = "! uninitialized read at %s (nothing wrote these before): %s%s" % (
            site, cells, " \u2026 (%d in all)" % len(us) if len(us) > 12 else "")
        lines += [style.red(l) for l in wrap(text, 2)]
    return lines


def interval_title(k: int, step: Step) -> str:
    """`step 2: after __syncthreads() at p14.cu:49, until p14.cu:53`."""
    if step.start == "the kernel's start":
        return tr("step %d: from the kernel's start, until %s") % (k, tr(step.end))
    return tr("step %d: after %s, until %s") % (k, step.start, tr(step.end))


def launch_head(n: int, total: int, launch: Launch) -> str:
    head = tr("launch %d of %d: %s<<<%s, %s%s>>> at %s") % (
        n, total, launch.kernel, launch.dims(launch.grid), launch.dims(launch.block),
        ", %d" % launch.shmem if launch.shmem else "", launch.site)
    if not launch.traced or launch.block_index is None:
        blocks = launch.grid[0] * launch.grid[1] * launch.grid[2]
        return head + tr(": %d block%s, none of them the traced one") % (blocks, "" if blocks == 1 or korean() else "s")
    return head + tr(", block %d (threads %s)") % (launch.block_index, tlist(list(range(launch.threads))))


def array_widths(launch: Launch) -> Dict[str, int]:
    widths = {}
    for a in launch.arrays:
        vals = [fmt(v) for s in launch.steps for v in s.after.get(a["name"], [])]
        widths[a["name"]] = max(3, max((len(v) for v in vals), default=1) + 1)
    return widths


def render_launch(n: int, total: int, launch: Launch, style: Style, source: List[str]) -> List[str]:
    lines = wrap(launch_head(n, total, launch), 0)
    if not launch.traced or launch.block_index is None:
        return lines
    if launch.arrays:
        lines.append(tr("shared memory: ") + ", ".join("%s[%d] (%s%s)" % (a["name"], a["count"], a["type"] or "?",
                                                                       ", dynamic" if a["dyn"] else "")
                                                   for a in launch.arrays))
    widths = array_widths(launch)
    for k, step in enumerate(launch.steps, 1):
        lines.append("")
        lines += render_step(k, step, launch, widths, style, source)
    if launch.truncated:
        lines.append(style.red(tr("(the block made more events than a trace can hold; the rest are not shown)")))
    lines += [style.red(l) for l in stop_lines(launch)]
    return lines


def stop_lines(launch: Launch) -> List[str]:
    """Where the threads were when the launch stopped, and the simulator's report; none for a
    launch that ran to its end."""
    lines = []  # type: List[str]
    if launch.stop:
        lines += ["", tr("where the threads were when the launch stopped:")]
        groups = {}  # type: Dict[Tuple[str, str, str], List[int]]
        for t, state, what, site in launch.stop:
            groups.setdefault((state, what, short_site(site)), []).append(t)
        for (state, what, site), ids in sorted(groups.items(), key=lambda g: g[1][0]):
            who = tlist(ids)
            if state == "barrier":
                text = tr("%s wait at __syncthreads() at %s") % (who, site)
            elif state == "warp":
                text = tr("%s wait in %s at %s") % (who, what or "a warp *_sync call", site)
            elif state == "cbar":
                text = tr("%s wait on a cuda::barrier at %s") % (who, site)
            elif state == "exited":
                text = tr("%s had returned") % who
            else:
                text = tr("%s still running (no barrier reached)") % who
            lines += wrap(text, 2)
    if launch.error:
        lines += ["", tr("the launch stopped: %s") % launch.error["kind"]]
        for l in launch.error["msg"].splitlines():
            lead = len(l) - len(l.lstrip())
            lines += wrap(l.strip(), 2 + lead)
    return lines


def html_sections(launches: List[Launch], source: List[str]) -> List[str]:
    """The page's sections: per launch its grid, and per step the terminal trace's words; the
    last step's words end with where the threads were when the launch stopped."""
    plain = Style(False)
    sections = []
    for n, launch in enumerate(launches, 1):
        widths = array_widths(launch)
        texts = []
        for k, step in enumerate(launch.steps, 1):
            lines = render_step(k, step, launch, widths, plain, source, width=0)
            texts.append((lines[0], "\n".join(lines[1:]), bool(step.hazards or step.uninit)))
        stop = stop_lines(launch)
        if stop and texts:
            title, body, _ = texts[-1]
            texts[-1] = (title, body + "\n" + "\n".join(stop), True)
        sections.append(trace_html.launch_section(n, len(launches), launch, texts, launch_head(n, len(launches), launch),
                                                  "\n".join(stop).strip()))
    return sections


def render(launches: List[Launch], style: Style, source: List[str]) -> List[str]:
    lines = []
    for n, launch in enumerate(launches, 1):
        lines.append("")
        lines += render_launch(n, len(launches), launch, style, source)
    return lines


# ---- the command -------------------------------------------------------------------------------

def fit_io_line(line: str, width: int = WIDTH) -> List[str]:
    """The driver's `input:` and `out:` lines, wrapped after a comma to fit the terminal."""
    if len(line) <= width:
        return [line]
    m = re.match(r"^(\w+:\s+)", line)
    indent = " " * (len(m.group(1)) if m else 4)
    lines, cur = [], ""
    for piece in re.split(r"(?<=,) ", line):
        if cur and len(cur) + 1 + len(piece) > width:
            lines.append(cur)
            cur = indent + piece
        else:
            cur = cur + " " + piece if cur else piece
    lines.append(cur)
    return lines


def run_traced(cmd: List[str], root: Path, trace: Path, block: int) -> Tuple[int, List[str], Optional[dict]]:
    env = driver_text.environment(dict(os.environ, CUDASIM_TRACE=str(trace), CUDASIM_TRACE_BLOCK=str(block),
                                       CUDASIM_SCHEDULES="forward", CUDASIM_CHECKS="1", CUDASIM_WORKERS="1"))
    proc = subprocess.Popen(cmd, cwd=str(root), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        text, _ = proc.communicate(timeout=run_timeout())
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise UsageError("the traced run took longer than %g s (PUZZLES_TIMEOUT); trace a smaller case" % run_timeout())
    lines, result = [], None
    for raw in text.decode("utf-8", errors="replace").splitlines():
        line, data = parse_result_line(raw)
        if data is not None:
            result = data
            line = line.rstrip()
        if line:
            lines.append(driver_text.render(line))  # a SAY record in the learner's words
    return proc.returncode, lines, result


def cmd_trace(root: Path, args: List[str]) -> int:
    activate()
    req = parse_request(root, args, TRACE)
    if req is None:
        return 0
    puzzle, variant, solution = req.puzzle, req.variant, req.solution
    if req.backend == "gpu":
        raise UsageError(tr("trace runs on the CPU simulator: a GPU run cannot be traced (leave out --backend gpu)"))
    seed = req.get("--seed")  # None: the show input; else the random input `run --seed` runs
    n, tpb = traced_case(variant, req.n, req.tpb) if seed is None else random_case(variant, seed, req.n, req.tpb)
    block = req.get("--blockidx") or 0
    if tpb > MAX_THREADS:
        raise UsageError("trace draws one block of at most %d threads, and tpb=%d is more. Use --tpb with a smaller "
                         "block (the show size of %s is --n %d --tpb %d)." % (MAX_THREADS, tpb, variant.label,
                                                                             *variant.show_case()))
    if req.binary:
        binary = Path(req.binary)
        source_path = None
    else:
        try:
            _, binary, _ = bld.build_for_backend(root, build_dir(root), puzzle, solution, "cpu")
        except BuildError:
            return 2
        source_path = root / puzzle.source(solution)
    with tempfile.TemporaryDirectory(prefix="puzzle-trace-") as tmp:
        events = Path(tmp) / "trace.jsonl"
        # The driver's own input for the case: `--show` (a[i] = i style), or `--seed S` as check and run give it.
        chosen = ["--show"] if seed is None else ["--seed", str(seed)]
        cmd = [str(binary), "--variant", variant.name] + chosen + ["--n", str(n), "--tpb", str(tpb)]
        code, lines, result = run_traced(cmd, root, events, block)
        if not events.is_file() or result is None and code == 2:
            for l in lines:
                out(l)
            out(tr("The traced program did not run (exit %d).") % code)
            return 2
        launches = load(events, [])
        source_path = source_path or _source_of(launches, root)
        source = source_path.read_text(encoding="utf-8", errors="replace").splitlines() if source_path else []
        launches = load(events, source)
    diagnosis = diagnosis_record(result)
    # A wrong answer: the page outlines the cells the first wrong element was computed from.
    mark_origin(launches, (result or {}).get("origin"))
    for launch in launches:
        if launch.cut_off and launch.error is None and diagnosis is not None:
            # The watchdog ended the process inside this launch: the report is the driver's RESULT.
            launch.error = {"kind": diagnosis_reason(diagnosis), "msg": diagnosis.get("message") or ""}
            launch.stop = [[_linear(t, launch.block), "running", "", ""] for t in diagnosis.get("threads") or []]
        if launch.error is not None and diagnosis is not None and render_diagnosis(diagnosis):
            # The error that ended the process is the record's: worded from its facts, in the
            # learner's language, as `check` words it (the trace event holds the English only).
            launch.error = {"kind": tr_reason(diagnosis_reason(diagnosis)), "msg": "\n".join(render_diagnosis(diagnosis))}
    cells = max((sum(a["count"] for a in l.arrays) for l in launches), default=0)
    if cells > MAX_CELLS:
        raise UsageError("the block has %d shared-memory elements; trace draws at most %d. Use a smaller --tpb."
                         % (cells, MAX_CELLS))
    style = Style(stdout_is_tty() and not os.environ.get("NO_COLOR"))
    shown = rel(source_path, root) if source_path else str(binary)
    if seed is None:
        title = tr("trace of %s (%s), n=%d tpb=%d, block %d") % (variant.label, shown, n, tpb, block)
    else:
        title = tr("trace of %s (%s), n=%d tpb=%d seed=%d, block %d") % (variant.label, shown, n, tpb, seed, block)
    out(title)
    if seed is None and not any(l.startswith("expected:") for l in lines) and (n, tpb) == variant.show_case():
        lines = lines + stopped_io(root, puzzle, variant, launches)  # the show input's, never a random one's
    head, tail = io_lines(lines, seed is not None)
    for l in head:
        for part in fit_io_line(l):
            out(part)
    for l in render(launches, style, source):
        out(l)
    out("")
    for l in tail:
        for part in fit_io_line(l):
            out(part)
    verdict = (result or {}).get("verdict", "error")
    if req.get("--html"):
        target = Path(req.get("--html"))
        try:
            target.write_text(trace_html.page(title, head + tail, html_sections(launches, source), verdict),
                              encoding="utf-8")
        except OSError as e:
            raise UsageError("cannot write the page to %s: %s" % (target, e.strerror or e))
        out(tr("wrote %s: open it in a browser (it loads nothing from the network)") % target)
    if verdict == "pass":
        return 0
    for line in origin_lines(result):
        out(line)
    # The run of the same case, input included: the show input, or the random one of --seed.
    again = " --n %d --tpb %d --seed %d --backend cpu" % (n, tpb, seed) if seed is not None else ""
    out(style.red(tr("%s: %s (the simulator's report: `%s run %s %s%s`)") % (
        variant.label, tr(verdict), PROG, puzzle.name, variant.flag, again + (" --solution" if solution else ""))))
    return 1


# The mismatch block: the SAY records of harness.cpp that say it (driver_text.py), whatever the language.
MISMATCH_KEYS = ("mismatch", "mismatch_at", "uninitialized")


def mismatch_line(line: str) -> bool:
    return isinstance(line, driver_text.SaidLine) and line.said.get("key") in MISMATCH_KEYS


def io_lines(lines: List[str], random_case: bool) -> Tuple[List[str], List[str]]:
    """The driver's lines about the case, above the steps (config or `case:`, input) and below them
    (out, expected). A random case (`--seed`) prints its arrays only when it failed, cut to a window
    around the first mismatch that says how many elements it leaves out; its mismatch lines come
    below the steps with them (the show input's full arrays say it all)."""
    head = [l for l in lines if l.startswith(("config:", "case:", "input:"))]
    tail = [l for l in lines if l.startswith(("out:", "expected:")) or random_case and mismatch_line(l)]
    return head, tail


def stopped_io(root: Path, puzzle, variant, launches: List[Launch]) -> List[str]:
    """A run that stopped (a race, a divergence) prints no input, out or expected: the show
    input's config, input and expected come from puzzles/pNN/expected/VARIANT.txt (what the
    solution prints for it), and out from what the traced block wrote to global memory."""
    path = root / "puzzles" / puzzle.name / "expected" / (variant.name + ".txt")
    try:
        known = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    lines = [l for l in known if l.startswith(("config:", "input:"))]
    written = {}  # type: Dict[str, Dict[int, object]]   the last launch's global stores, per array
    for launch in launches[-1:]:
        for step in launch.steps:
            for a in step.accesses:
                if not a.shared and a.new is not None:
                    for cell, v in zip(a.cells, a.new):
                        written.setdefault(a.array, {})[cell] = v
    if written:
        name, cells = list(written.items())[-1]
        expected = next((l for l in known if l.startswith("expected:")), "")
        length = max(max(cells) + 1, expected.count(",") + 1 if "[" in expected else 0)
        vals = [fmt(cells.get(i)) for i in range(length)]  # ? for an element the block never wrote
        lines.append("out:      [%s]   (%s)" % (", ".join(vals), tr("%s as the traced block left it before the stop")
                                                % name))
    return lines + [l for l in known if l.startswith("expected:")]


def _linear(tid: List[int], block: List[int]) -> int:
    """threadIdx (x, y, z) as the linear thread number the trace names threads by."""
    return tid[0] + block[0] * (tid[1] + block[1] * tid[2])


def _source_of(launches: List[Launch], root: Path) -> Optional[Path]:
    """The learner-visible source of a binary given by --binary: the file its kernels were launched from."""
    for l in launches:
        for site in l.sites.values():
            path = Path(site.rsplit(":", 1)[0])
            path = path if path.is_absolute() else root / path
            if path.suffix in (".cu", ".cuh") and path.is_file():
                return path
    return None
