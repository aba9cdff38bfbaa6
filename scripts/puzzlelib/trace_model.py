"""The trace's model: the simulator's event stream (CUDASIM_TRACE, harness/sim/src/trace.cpp)
turned into launches and steps that trace.py prints and trace_html.py draws.

A step is one barrier interval (from a __syncthreads() to the next), cut further at every warp
collective and every completed cuda::barrier phase, which are steps of their own.
"""

from __future__ import annotations

import json
import math
import re
import struct
from pathlib import Path
from typing import List, Optional, Tuple

SUB = str.maketrans("0123456789", "\u2080\u2081\u2082\u2083\u2084\u2085\u2086\u2087\u2088\u2089")


def tname(t: int) -> str:
    """T₁₂: the notes' name of a thread."""
    return "T" + str(t).translate(SUB)


def runs(ids: List[int]) -> List[Tuple[int, int]]:
    out = []  # type: List[Tuple[int, int]]
    for i in sorted(set(ids)):
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def tlist(ids: List[int], lanes: bool = False) -> str:
    """T₀…T₇, T₉ (or lanes 0-7, 9)."""
    if lanes:
        return ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in runs(ids))
    parts = []
    for a, b in runs(ids):
        parts.append(tname(a) if a == b else tname(a) + ("\u2026" if b > a + 1 else ", ") + tname(b))
    return ", ".join(parts)


def short_site(site: str) -> str:
    """`solutions/p14/p14.cu:49` -> `p14.cu:49`."""
    return site.rsplit("/", 1)[-1] if site else "?"


# ---- values -------------------------------------------------------------------------------------

def decode(hexbytes: str, size: int, ctype: str) -> object:
    """One element's value from its little-endian bytes, as the element's C type reads it."""
    raw = bytes.fromhex(hexbytes)[:size]
    if len(raw) < size:
        return None
    if ctype in ("float", "double") and size in (4, 8):
        v = struct.unpack("<f" if size == 4 else "<d", raw)[0]
        return v
    if ctype == "bool" and size == 1:
        return int(raw[0] != 0)
    signed = not ctype.startswith("unsigned") and ctype != "barrier"
    return int.from_bytes(raw, "little", signed=signed)


def fmt(v: object) -> str:
    if v is None:
        return "?"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if abs(v) >= 3.4e38:
            return "FLT_MAX" if v > 0 else "-FLT_MAX"
        if v == int(v) and abs(v) < 1e7:
            return str(int(v))
        return "%.4g" % v
    return str(v)


def source_type(source: List[str], name: str) -> str:
    """The element type of a `__shared__` declaration or a local variable named `name`."""
    pat = re.compile(r"(?:__shared__\s+|^\s*(?:const\s+)?)(?:__align__\(\d+\)\s+)?([A-Za-z_][\w:]*(?:<[^>]*>)?(?:\s+[A-Za-z_]\w*)?)"
                     r"\s+" + re.escape(name) + r"\s*(?:\[|;|=)")
    for line in source:
        m = pat.search(line)
        if m:
            t = m.group(1)
            if "barrier" in t:
                return "barrier"
            for known in ("unsigned long long", "long long", "unsigned", "float", "double", "bool", "int", "char"):
                if known in t:
                    return known
    return ""


def guess_type(raw: int, size: int) -> str:
    """Warp values carry no type: a 4-byte pattern that is a plain float but an odd int is a float."""
    if size != 4:
        return "int"
    as_int = struct.unpack("<i", struct.pack("<I", raw & 0xffffffff))[0]
    f = struct.unpack("<f", struct.pack("<I", raw & 0xffffffff))[0]
    if abs(as_int) < (1 << 24):
        return "int"
    if math.isfinite(f) and (1e-6 < abs(f) < 1e9 or abs(f) >= 3.4e38):
        return "float"
    return "int"


# ---- the model ----------------------------------------------------------------------------------

class Access:
    def __init__(self, ev: dict, ctype: str):
        self.thread = ev["t"]
        self.kind = ev["k"]  # r, w, rw
        self.atomic = ev.get("atomic", False)
        self.space = ev["sp"]
        self.array = ev["arr"]
        self.index = ev["i"]
        self.elem = max(1, ev.get("el", 4))
        self.size = ev.get("n", 4)
        self.pc = ev.get("pc", 0)
        self.ctype = ev.get("ty") or ctype
        count = max(1, self.size // self.elem) if self.size >= self.elem else 1
        self.cells = list(range(self.index, self.index + count))
        self.old = self._values(ev.get("v"))
        self.new = self._values(ev.get("nv"))
        self.hazard = False  # in a hazard or an uninitialized read: drawn red
        # A read of a cell that a thread wrote earlier in the same step: it saw that write's value,
        # which the step's own row shows (the row before shows the old one).
        self.fresh = False

    def _values(self, hexbytes: Optional[str]) -> Optional[List[object]]:
        if hexbytes is None:
            return None
        if self.size < self.elem:
            return [decode(hexbytes, self.size, "unsigned")]
        return [decode(hexbytes[2 * k * self.elem:], self.elem, self.ctype) for k in range(len(self.cells))]

    @property
    def shared(self) -> bool:
        return self.space in (0, 1)


class Step:
    def __init__(self, start: str):
        self.start = start  # "the kernel's start", "__syncthreads() at p14.cu:49", ...
        self.end = ""
        self.kind = "interval"  # interval, warp, cbar
        self.accesses = []  # type: List[Access]
        self.hazards = []  # type: List[dict]
        self.uninit = []  # type: List[dict]
        self.warp = None  # type: Optional[dict]
        self.cbar = []  # type: List[dict]   arrivals (the last one completes the phase in a cbar step)
        self.after = {}  # type: Dict[str, List[object]]   every shared array after the step
        self.written = {}  # type: Dict[Tuple[str, int], int]   cell -> the thread that wrote it last
        self.marked = set()  # type: set   cells in a hazard or an uninitialized read
        self.barriers = 0  # __syncthreads() the block had passed when the step began (the checker's epoch)

    @property
    def empty(self) -> bool:
        return not (self.accesses or self.hazards or self.uninit or self.warp or self.cbar)


class Launch:
    def __init__(self, ev: dict):
        self.kernel = ev["kernel"]
        self.site = short_site(ev["site"])
        self.grid = ev["grid"]
        self.block = ev["block"]
        self.shmem = ev["shmem"]
        self.traced = ev["traced"]
        self.block_index = None  # type: Optional[int]
        self.threads = 0
        self.arrays = []  # type: List[dict]   name, elem, count, type
        self.steps = []  # type: List[Step]
        self.error = None  # type: Optional[dict]
        self.stop = []  # type: List[list]   where each thread was when the launch stopped: [t, state, what, site]
        self.cut_off = False  # the process ended inside the launch (the watchdog): no end, no sites
        self.truncated = False
        # Cells on the chain back from the first wrong element (RESULT's "origin"): (row, array, index),
        # row k being the k-th step, where that write happened.
        self.origin = set()  # type: set
        self.sites = {}  # type: Dict[int, str]

    def site_of(self, pc: int) -> str:
        return short_site(self.sites.get(pc, "?"))

    def dims(self, d: List[int]) -> str:
        return str(d[0]) if d[1] == 1 and d[2] == 1 else "(%d, %d, %d)" % tuple(d)


def load(path: Path, source: List[str]) -> List[Launch]:
    """Parse the event file into launches; values are decoded with the types found in `source`."""
    launches = []  # type: List[Launch]
    types = {}  # type: Dict[str, str]

    def ctype(name: str) -> str:
        if name not in types:
            types[name] = source_type(source, name)
        return types[name]

    cur = None  # type: Optional[Launch]
    raw_events = []  # type: List[dict]
    built = True
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            break  # the last line, cut where the process ended
        kind = ev["e"]
        if kind == "launch":
            if not built:
                _cut_off(cur, raw_events, ctype)
            cur = Launch(ev)
            launches.append(cur)
            raw_events = []
            built = False
            continue
        if cur is None:
            continue
        if kind == "sites":
            cur.sites = {int(k): v for k, v in ev["pcs"].items()}
            _build_steps(cur, raw_events, ctype)
            built = True
            continue
        if kind == "block":
            cur.block_index = ev["b"]
            cur.threads = ev["threads"]
        elif kind == "end":
            cur.arrays = [dict(a, type=ctype(a["name"])) for a in ev["arrays"]]
        elif kind == "error":
            cur.error = ev
        elif kind == "stop":
            cur.stop = ev["threads"]
        elif kind == "truncated":
            cur.truncated = True
        raw_events.append(ev)
    if cur is not None and not built:
        _cut_off(cur, raw_events, ctype)
    return launches


def _cut_off(launch: Launch, events: List[dict], ctype) -> None:
    """A launch whose process ended inside it (the watchdog stops a runaway thread and exits): the
    events up to the stop are there, but not the block's arrays or the code sites. The arrays are
    the shared cells that the accesses reached."""
    launch.cut_off = True
    if launch.block_index is None:
        return
    if not launch.arrays:
        seen = {}  # type: Dict[str, dict]
        for ev in events:
            if ev["e"] == "acc" and ev["sp"] in (0, 1):
                count = ev["i"] + max(1, ev.get("n", 4) // max(1, ev.get("el", 4)))
                a = seen.setdefault(ev["arr"], dict(name=ev["arr"], elem=ev.get("el", 4), count=0, site="",
                                                    dyn=ev["sp"] == 1, type=ev.get("ty") or ctype(ev["arr"])))
                a["count"] = max(a["count"], count)
        launch.arrays = list(seen.values())
    _build_steps(launch, events, ctype)


def _build_steps(launch: Launch, events: List[dict], ctype) -> None:
    """Cut the block's events into steps, and replay shared memory to know each array after each."""
    step = Step("the kernel's start")
    steps = [step]
    state = {}  # type: Dict[str, List[object]]
    counts = {a["name"]: a["count"] for a in launch.arrays}
    for a in launch.arrays:
        state[a["name"]] = [None] * a["count"]
    arrivals = {}  # type: Dict[Tuple[str, int], List[dict]]
    bars = [0]

    def close(end: str, nxt: str) -> Step:
        step.end = end
        step.after = {k: list(v) for k, v in state.items()}
        s = Step(nxt)
        s.barriers = bars[0]
        steps.append(s)
        return s

    for ev in events:
        kind = ev["e"]
        if kind == "acc":
            acc = Access(ev, ctype(ev["arr"]) if ev["sp"] in (0, 1) else "")
            step.accesses.append(acc)
            acc.fresh = acc.kind in ("r", "rw") and any((acc.array, c) in step.written for c in acc.cells)
            if acc.shared and acc.new is not None and acc.array in state:
                for cell, v in zip(acc.cells, acc.new):
                    if 0 <= cell < counts[acc.array]:
                        state[acc.array][cell] = v
                        step.written[(acc.array, cell)] = acc.thread
        elif kind == "bar":
            site = short_site(ev["site"])
            bars[0] += 1
            step = close(site, "__syncthreads() at " + site)
        elif kind == "warp":
            site = short_site(ev["site"])
            if not step.empty:
                step = close("%s at %s" % (ev["op"], site), "%s at %s" % (ev["op"], site))
            step.kind = "warp"
            step.warp = ev
            step.end = step.start
            step = close("%s at %s" % (ev["op"], site), "%s at %s" % (ev["op"], site))
        elif kind == "cbar":
            key = (ev["arr"], ev["phase"])
            arrivals.setdefault(key, []).append(ev)
            if ev["done"]:
                what = "phase %d of %s" % (ev["phase"], ev["arr"])
                if not step.empty:
                    step = close("the arrival that completes " + what, "")
                step.kind = "cbar"
                step.cbar = arrivals.pop(key)
                step.start = step.end = "%s completes" % what
                step = close(step.end, "%s completed" % what)
        elif kind in ("hazard", "uninit"):
            (step.hazards if kind == "hazard" else step.uninit).append(ev)
            if ev["sp"] in (0, 1):
                step.marked.add((ev["arr"], ev["i"]))
            _mark(step, ev)
        elif kind == "error":
            pass
    step.end = ("the end of the kernel" if launch.error is None and not launch.cut_off and not launch.stop
                else "the stop below")
    step.after = {k: list(v) for k, v in state.items()}
    if step.empty and len(steps) > 1:
        steps.pop()
    launch.steps = steps


def _mark(step: Step, ev: dict) -> None:
    """Make the accesses of a hazard (both threads) or an uninitialized read red in the step."""
    threads = {ev.get("ta"), ev.get("tb"), ev.get("t")} - {None}
    for acc in step.accesses:
        if acc.thread in threads and acc.array == ev["arr"] and ev["i"] in acc.cells:
            acc.hazard = True


def mark_origin(launches: List[Launch], origin: Optional[dict]) -> int:
    """Mark, in the traced block, the shared-memory cells of the chain back from the first wrong
    element (RESULT's "origin": each write with its block, thread and barrier step) in the step that
    wrote them; returns how many were marked. The chain ends in the last launch that wrote them."""
    marked = 0
    for node in (origin or {}).get("nodes") or []:
        if node.get("kind") != "write" or node.get("space") != "shared":
            continue
        for launch in reversed(launches):
            if launch.block_index is None or _linear(node.get("block"), launch.grid) != launch.block_index:
                continue
            thread = _linear(node.get("thread"), launch.block)
            rows = [k for k, step in enumerate(launch.steps, 1)
                    if step.barriers == node.get("barrier") and any(
                        a.shared and a.kind in ("w", "rw") and a.thread == thread and a.array == node.get("array")
                        and node.get("index") in a.cells for a in step.accesses)]
            if rows:
                launch.origin.add((rows[-1], node["array"], node["index"]))
                marked += 1
                break
    return marked


def _linear(v, dims) -> int:
    """An (x, y, z) index as a linear number in a launch of dims (x, y, z)."""
    v = list(v or [0, 0, 0]) + [0, 0]
    d = list(dims if isinstance(dims, (list, tuple)) else [dims, 1, 1]) + [1, 1]
    return v[0] + d[0] * (v[1] + d[1] * v[2])
