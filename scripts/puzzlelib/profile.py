"""`profile`: run variants once on the CPU simulator with its profiler on (CUDASIM_PROFILE,
harness/sim/src/profile.cpp) and show what a GPU's memory pipeline would do with them, in Nsight
Compute's terms: per kernel, per source line, the top cost in words, and with several variants the
course notes' story (what changed from one kernel to the next, and which counter shows it).
profile_data.py reads the records, profile_model.py turns them into modeled H200 times.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from . import build as bld
from . import messages
from . import profile_data as pdata
from . import profile_model as model
from .common import PROG, BuildError, UsageError, build_dir, out, rel, run_timeout, width
from .driver import USAGE, run_driver
from .messages import activate, tr, tr_reason
from .puzzles import Puzzle, Variant
from .request import BareUsageError, Verb, parse_request, pick

SCHEMA_VERSION = 1
DEFAULT_N = 1 << 20       # large enough that every cost shows, small enough for a few seconds
DEFAULT_TPB = 256
DEFAULT_SEED = 1
IDLE_BELOW = 16           # average active lanes under which idle lanes are a cost: most of the warp idles
NAMED_SHARE = 0.05        # a cost is named when it is at least this share of the modeled time
                          # beyond the launches' fixed cost (which no change to a kernel's code removes)

PROFILE_HELP = """\
usage: {prog} profile pNN --VARIANT [--VARIANT ...] [--solution]
           [--n N --tpb T] [--seed S] [--backend cpu] [--json FILE] [--html FILE] [--lang en|ko]

Run each variant once on the CPU simulator with its profiler on, and show what an NVIDIA GPU's
memory pipeline would do with it, counted the way Nsight Compute counts: shared-memory warp
instructions, wavefronts and bank conflicts, global requests and 32-byte sectors, active lanes,
atomics, barriers, and a modeled H200 time (docs/architecture.md, "The cost model").
It prints a table per kernel, the source lines with their counters, the top cost in words, and,
with several variants, one row per variant saying what changed and which counter shows it.

  --VARIANT          the variants to profile, in the order to compare them
  --solution         profile the reference solution instead of your file
  --n N, --tpb T     the size and block size (default: 2^20 elements and 256 threads, or the
                     variant's largest one-block size)
  --seed S           the seed of the random input (default 1). `check` names a case it failed
                     by its replay line, `... --n N --tpb T --seed S`: those flags here profile
                     that very input
  --backend cpu      taken as the replay line gives it: the profiler is the CPU simulator's
  --json FILE        also write the whole profile as data, in English (docs/profile-schema.json)
  --html FILE        also write it as one web page (it loads nothing from the network)
  --lang en|ko       the language of the output and of the page

Exit status: 0 profiled, 1 a kernel failed (`{prog} check` says why),
2 a usage or build error.
"""

PROFILE_MISSING = "profile needs a puzzle and variants, e.g. `{prog} profile p12 --k1 --k2 --solution`."


class ProfileVerb(Verb):
    """The profile command's Verb, whose help and usage error follow the language asked for (they
    are read after --lang is parsed, not when the module is imported)."""

    def __init__(self):
        super().__init__("profile", dict(pick("--solution", "--n", "--tpb", "--seed", "--backend", "--binary"),
                                         **{"--json": str, "--html": str}), PROFILE_HELP, missing=PROFILE_MISSING)

    @property
    def help(self) -> str:
        return tr(PROFILE_HELP).replace("{prog}", PROG)

    @help.setter
    def help(self, _text: str) -> None:
        pass  # always PROFILE_HELP, translated when read

    @property
    def missing(self) -> str:
        return tr(PROFILE_MISSING)

    @missing.setter
    def missing(self, _text: str) -> None:
        pass


PROFILE = ProfileVerb()


def label(text: str) -> str:
    """A short label of the profile's tables and story (a column, a counter's name), in the language
    asked for. Its Korean form is under msgctxt "profile" in profile.po: short words like `lanes`
    or `model` may mean something else in another command's catalogue."""
    if messages.korean():
        return messages.KO.get("profile\x04" + text, text)
    return text


def default_case(variant: Variant, n: Optional[int], tpb: Optional[int]) -> Tuple[int, int]:
    """The profiled size: 2^20 elements in blocks of 256 (the sizes ncu was compared at), or for
    a one-block variant its largest block and the most elements that block takes."""
    if tpb is None:
        tpb = DEFAULT_TPB if DEFAULT_TPB in variant.tpb and variant.n_limit(DEFAULT_TPB) is None else max(variant.tpb)
    if n is None:
        limit = variant.n_limit(tpb)
        n = DEFAULT_N if limit is None else min(DEFAULT_N, limit)
    return n, tpb


# ---- the analysis ------------------------------------------------------------------------------

class VariantProfile:
    """One variant's profiled run: its launches, their sums per source line, the modeled time."""

    def __init__(self, variant: Variant, n: int, tpb: int, seed: int, verdict: str, launches: List[pdata.Launch],
                 root: Path):
        self.variant, self.n, self.tpb, self.seed, self.verdict = variant, n, tpb, seed, verdict
        self.launches = launches
        self.root = root
        self.calls = 1  # how often the driver called the variant; the profile keeps one call
        self.sites = {}  # type: Dict[Tuple[str, int, str], Dict[str, int]]
        self.barriers = {}  # type: Dict[Tuple[str, int], int]
        self.collectives = {}  # type: Dict[Tuple[str, int, str], List[int]]
        self.strides = {}  # type: Dict[Tuple[str, int], Dict[int, int]]
        for l in launches:
            for s in l.sites:
                st = self.strides.setdefault((self.path(s.file), s.line), {})
                for stride, extra in s.strides.items():
                    st[stride] = st.get(stride, 0) + extra
                c = self.sites.setdefault((self.path(s.file), s.line, s.op), {})
                for k, v in s.counts.items():
                    c[k] = max(c.get(k, 0), v) if k == "same_addr_max" else c.get(k, 0) + v
            for f, line, inst in l.barriers:
                key = (self.path(f), line)
                self.barriers[key] = self.barriers.get(key, 0) + inst
            for f, line, op, inst, lanes in l.collectives:
                c2 = self.collectives.setdefault((self.path(f), line, op), [0, 0])
                c2[0] += inst
                c2[1] += lanes
        self.terms = [model.launch_terms(l) for l in launches]
        self.time_us = sum(t["time"] for t in self.terms)
        self.totals = totals(launches)
        self.costs = costs(self)

    def path(self, f: str) -> str:
        return rel(f, self.root) if f.startswith("/") else f

    @property
    def top(self) -> Optional[dict]:
        busy = self.time_us - sum(t["launch"] for t in self.terms)
        named = [c for c in self.costs if c["us"] > 0 and c["us"] >= NAMED_SHARE * busy]
        return named[0] if named else None


def totals(launches: List[pdata.Launch]) -> Dict[str, float]:
    t = {}  # type: Dict[str, float]

    def add(k, v):
        t[k] = t.get(k, 0) + v

    for l in launches:
        for op in pdata.OPS:
            add(op, l.total(op, "inst"))
        shared = [s for s in l.sites if s.op.startswith("shared")]
        add("shared_lanes", sum(s.counts.get("lanes", 0) for s in shared))
        add("wavefronts", sum(s.counts.get("wavefronts", 0) for s in shared))
        add("conflicts", sum(s.conflicts for s in shared))
        glob = [s for s in l.sites if s.op.startswith("global")]
        add("requests", sum(s.counts.get("inst", 0) for s in glob))
        add("sectors", sum(s.counts.get("sectors", 0) for s in glob))
        add("ideal_sectors", sum(s.counts.get("ideal_sectors", 0) for s in glob))
        add("atomics", l.total("shared_atom", "inst") + l.total("global_atom", "inst"))
        add("barriers", l.barrier_inst())
        add("collectives", sum(c[3] for c in l.collectives))
        add("warp_inst", model.warp_instructions(l))
    t["launches"] = len(launches)
    t["shared"] = t.get("shared_ld", 0) + t.get("shared_st", 0) + t.get("shared_atom", 0)
    return t


def way(x: float) -> str:
    return "%d" % round(x) if abs(x - round(x)) < 0.05 else "%.1f" % x


def stride_words(strides: Dict[int, int]) -> Optional[str]:
    """How far apart the conflicting lanes' words are ("words 2 apart", "words 2 to 16 apart"), from
    the conflicts by lane stride; None when most conflicts have no stride the lanes share."""
    total = sum(strides.values())
    known = {s: n for s, n in strides.items() if s > 0 and n >= 0.05 * total}
    if not total or sum(known.values()) < total / 2:
        return None
    main = max(known, key=lambda s: known[s])
    if known[main] >= 0.9 * total:
        return tr("words {stride} apart").format(stride=main)
    return tr("words {low} to {high} apart").format(low=min(known), high=max(known))


def count(x: int) -> str:
    return "{:,}".format(x)


def costs(vp: VariantProfile) -> List[dict]:
    """The wasted work found per source line, each with its share of the modeled time, largest first.
    Each cost keeps what its sentence needs (`args`); cost_text() words it in the language asked for."""
    found = []
    sms = max((model.busy_sms(l) for l in vp.launches), default=model.SMS)  # the launch that does the most work
    by_line = {}  # type: Dict[Tuple[str, int], Dict[str, int]]
    for (f, line, op), c in vp.sites.items():
        agg = by_line.setdefault((f, line), {})
        for k in ("inst", "lanes"):
            agg[k] = agg.get(k, 0) + c.get(k, 0)
        if op.startswith("shared"):
            for k in ("wavefronts", "ideal"):
                agg["sh_" + k] = agg.get("sh_" + k, 0) + c.get(k, 0)
        else:
            for k in ("inst", "sectors", "ideal_sectors"):
                agg["gl_" + k] = agg.get("gl_" + k, 0) + c.get(k, 0)
        if op == "global_atom":
            agg["atomics"] = agg.get("atomics", 0) + c.get("inst", 0)
    for (f, line), a in by_line.items():
        at = "%s:%d" % (Path(f).name, line)
        where = {"file": f, "line": line}
        conflicts = a.get("sh_wavefronts", 0) - a.get("sh_ideal", 0)
        if conflicts > 0:
            per = a["sh_wavefronts"] / a["sh_ideal"]
            found.append(dict(where, kind="bank conflicts", us=model.shared_us(conflicts, sms), args=dict(
                at=at, per=per, conflicts=conflicts, strides=vp.strides.get((f, line), {}))))
        avg = a["lanes"] / a["inst"] if a.get("inst") else 32
        if avg < IDLE_BELOW:
            wasted = a["inst"] - a["lanes"] / 32.0
            found.append(dict(where, kind="idle lanes", us=model.issue_us(wasted * model.INST_PER_MEMORY_OP, sms),
                              args=dict(at=at, avg=avg, inst=a["inst"], full=int(math.ceil(a["lanes"] / 32.0)))))
        extra = a.get("gl_sectors", 0) - a.get("gl_ideal_sectors", 0)
        if extra > 0:
            found.append(dict(where, kind="uncoalesced", us=model.dram_us(extra), args=dict(
                at=at, per=a["gl_sectors"] / a["gl_inst"], ideal=a["gl_ideal_sectors"] / a["gl_inst"])))
        if a.get("atomics"):
            found.append(dict(where, kind="atomics", us=model.atomic_us(a["atomics"]),
                              args=dict(at=at, atomics=a["atomics"])))
    return sorted(found, key=lambda c: -c["us"])


def cost_text(cost: dict) -> str:
    """One cost in words: what is wasted, where, and why."""
    a = cost["args"]
    if cost["kind"] == "bank conflicts":
        apart = stride_words(a["strides"])
        touch = (tr("touch {apart}, so several of them land in one bank").format(apart=apart) if apart
                 else tr("touch different words of the same bank"))
        return tr("{way}-way bank conflicts at {at}: the lanes of a warp {touch}, and each shared access takes "
                  "{passes} passes through the banks where 1 would do ({extra} extra wavefronts)").format(
            way=way(a["per"]), at=a["at"], touch=touch, passes="%.1f" % a["per"], extra=count(a["conflicts"]))
    if cost["kind"] == "idle lanes":
        return tr("lanes idle: {active} of 32 lanes active on average at {at}: the `if` leaves most of each warp "
                  "with nothing to do, and the warp still issues the instruction ({inst} warp instructions for work "
                  "that full warps would do in {full})").format(
            active="%.1f" % a["avg"], at=a["at"], inst=count(a["inst"]), full=count(a["full"]))
    if cost["kind"] == "uncoalesced":
        return tr("uncoalesced at {at}: {per} sectors per request where {ideal} would do (the lanes' addresses are "
                  "spread over more 32-byte sectors than their bytes need)").format(
            at=a["at"], per="%.1f" % a["per"], ideal="%.1f" % a["ideal"])
    return tr("atomics at {at}: {atomics} warp-level atomics, served one after another where they meet at one "
              "address").format(at=a["at"], atomics=count(a["atomics"]))


def bound_text(vp: VariantProfile) -> str:
    """What the modeled time goes to when no waste stands out."""
    spent = {}  # type: Dict[str, float]
    for t in vp.terms:
        b = model.bound(t)
        spent[b] = spent.get(b, 0) + t["time"]
    b = max(spent, key=lambda k: spent[k]) if spent else "launch"
    if b == "launch":
        return tr("the fixed cost of its {launches} launch(es)").format(launches=len(vp.launches))
    if b == "issue":
        return tr("issuing instructions (about {inst} warp instructions)").format(inst=compact(vp.totals["warp_inst"]))
    if b == "shared":
        return tr("shared-memory wavefronts ({wavefronts})").format(wavefronts=compact(vp.totals["wavefronts"]))
    if b == "dram":
        return tr("reading and writing global memory ({sectors} sectors of 32 bytes)").format(
            sectors=compact(vp.totals["sectors"]))
    return tr("atomics on one address")


def top_sentence(vp: VariantProfile) -> str:
    top = vp.top
    if top:
        return tr("top cost: {cost}").format(cost=cost_text(top))
    return tr("top cost: no bank conflicts, idle lanes or uncoalesced accesses worth naming; the time goes to "
              "{bound}").format(bound=bound_text(vp))


# The counters a step of the story can change, as (key, words); a ratio is taken of each.
STORY_COUNTERS = (
    ("conflicts", "bank conflicts"),
    ("lanes_avg", "active lanes per shared instruction"),
    ("shared", "shared-memory warp instructions"),
    ("warp_inst", "warp instructions (estimated)"),
    ("barriers", "barriers"),
    ("sectors_per_req", "sectors per global request"),
    ("launches", "launches"),
    ("atomics", "atomics"),
)


def story_value(vp: VariantProfile, key: str) -> float:
    t = vp.totals
    if key == "lanes_avg":
        return t["shared_lanes"] / t["shared"] if t["shared"] else 0
    if key == "sectors_per_req":
        return t["sectors"] / t["requests"] if t["requests"] else 0
    return t.get(key, 0)


def change(prev: VariantProfile, cur: VariantProfile) -> str:
    """What moved between two variants, in words: the counter that improved the most and, when
    one got worse by more, the new cost too. Fewer is better for every counter but active lanes."""
    better, worse = None, None
    for key, words in STORY_COUNTERS:
        a, b = story_value(prev, key), story_value(cur, key)
        ratio = (max(a, b) + 1) / (min(a, b) + 1)  # +1: a counter that drops to 0 still has a ratio
        if ratio < 1.05:
            continue
        improved = (b > a) if key == "lanes_avg" else (b < a)
        item = (ratio, key, words, a, b)
        # A later counter must move clearly more to be named: STORY_COUNTERS lists the telling ones first.
        if improved and (better is None or ratio > better[0] * 1.05):
            better = item
        if not improved and (worse is None or ratio > worse[0] * 1.05):
            worse = item

    def say(item):
        _, key, words, a, b = item
        fmt = (lambda x: "%.1f" % x) if key in ("lanes_avg", "sectors_per_req") else compact
        text = "%s %s -> %s" % (label(words), fmt(a), fmt(b))
        if key == "conflicts":  # where: the lines that have them, or the line that now does the work without
            had, has = conflict_lines(prev), conflict_lines(cur)
            if has:
                text += tr(" (at {lines})").format(lines=", ".join(has))
            elif had:
                busiest = busiest_shared_line(cur)
                text += (tr(" ({had} had them; {line}, the busiest shared line now, has none)") if busiest
                         else tr(" ({had} had them; no line uses shared memory now)")).format(
                    had=", ".join(had), line=busiest)
        return text

    parts = []
    if better:
        parts.append(say(better))
    if worse and (better is None or worse[0] > 2):
        parts.append(tr("but {change}").format(change=say(worse)) if parts else say(worse))
    return "; ".join(parts) if parts else tr("no counter changed by more than 5% (what did change is not counted: "
                                             "arithmetic, branches and loop tests touch no memory)")


def conflict_lines(vp: VariantProfile) -> List[str]:
    found = {}  # type: Dict[Tuple[str, int], int]
    for (f, ln, op), c in vp.sites.items():
        if op.startswith("shared") and c.get("wavefronts", 0) > c.get("ideal", 0):
            found[(f, ln)] = found.get((f, ln), 0) + c["wavefronts"] - c["ideal"]
    return ["%s:%d" % (Path(f).name, ln) for (f, ln), _ in sorted(found.items(), key=lambda kv: -kv[1])]


def busiest_shared_line(vp: VariantProfile) -> Optional[str]:
    inst = {}  # type: Dict[Tuple[str, int], int]
    for (f, ln, op), c in vp.sites.items():
        if op.startswith("shared"):
            inst[(f, ln)] = inst.get((f, ln), 0) + c.get("inst", 0)
    if not inst:
        return None
    f, ln = max(inst, key=lambda k: inst[k])
    return "%s:%d" % (Path(f).name, ln)


# ---- text --------------------------------------------------------------------------------------

def compact(x: float) -> str:
    """A count in at most 5 characters: 9,999, 38.9k, 389k, 4.46M."""
    x = float(x)
    if x < 10000:
        return "{:,}".format(int(round(x))) if x == int(x) or x >= 100 else "%.1f" % x
    if x < 1e5:
        return "%.1fk" % (x / 1e3)
    if x < 1e6:
        return "%.0fk" % (x / 1e3)
    return "%.2fM" % (x / 1e6)


def grid_text(launches: List[pdata.Launch]) -> str:
    grids = []
    for l in launches:
        g = "x".join(str(d) for d in l.grid if d > 1) or "1"
        if not grids or grids[-1] != g:
            grids.append(g)
    b = "x".join(str(d) for d in launches[0].block if d > 1) or "1"
    return "%sx%s" % (",".join(grids), b)


def kernel_groups(vp: VariantProfile) -> List[Tuple[str, List[int]]]:
    """Launches of one kernel with one block shape, in first-launch order: (kernel, launch indices)."""
    groups = []  # type: List[Tuple[str, List[int]]]
    keys = []
    for i, l in enumerate(vp.launches):
        key = (l.kernel, l.block)
        if key in keys:
            groups[keys.index(key)][1].append(i)
        else:
            keys.append(key)
            groups.append((l.kernel, [i]))
    return groups


KERNEL_HEADER = ("kernel", "grid x block", "sh.ld", "sh.st", "lanes", "wavefr", "confl", "gl.req", "sectors",
                 "s/req", "atom", "bar", "model")


def kernel_header() -> List[str]:
    return [label(h) for h in KERNEL_HEADER]


def kernel_rows(vp: VariantProfile) -> List[List[str]]:
    rows = []
    for kernel, idx in kernel_groups(vp):
        ls = [vp.launches[i] for i in idx]
        t = totals(ls)
        name = kernel if len(ls) == 1 else "%s (%d)" % (kernel, len(ls))
        rows.append([name, grid_text(ls), compact(t["shared_ld"]), compact(t["shared_st"]),
                     "%.1f" % (t["shared_lanes"] / t["shared"]) if t["shared"] else "-",
                     compact(t["wavefronts"]), compact(t["conflicts"]), compact(t["requests"]), compact(t["sectors"]),
                     "%.1f" % (t["sectors"] / t["requests"]) if t["requests"] else "-", compact(t["atomics"]),
                     compact(t["barriers"]), "%.1f us" % sum(vp.terms[i]["time"] for i in idx)])
    return rows


KERNEL_LEGEND = ("per warp-level instruction, as Nsight Compute counts: sh.ld/sh.st shared loads/stores, lanes "
                 "their average active lanes of 32, wavefr passes through the 32 banks, confl bank conflicts "
                 "(wavefronts beyond the fewest), gl.req global requests, sectors 32-byte sectors, s/req sectors "
                 "per request (4 for 32 lanes x 4 bytes), atom atomics, bar barriers (one per warp), model the "
                 "modeled H200 time (docs/architecture.md, \"The cost model\")")


def pad(text: str, cells: int, right: bool = False) -> str:
    """`text` padded to `cells` terminal columns (a Hangul syllable takes two)."""
    fill = " " * max(0, cells - width(text))
    return fill + text if right else text + fill


def fmt_table(rows: List[List[str]], header, indent: str = "  ") -> List[str]:
    cols = list(zip(*([list(header)] + rows)))
    widths = [max(width(c) for c in col) for col in cols]
    lines = []
    for r in [list(header)] + rows:
        cells = [pad(r[0], widths[0]), pad(r[1], widths[1])] + [pad(c, w, right=True) for c, w in zip(r[2:], widths[2:])]
        lines.append((indent + " ".join(cells)).rstrip())
    return lines


# The ops as the source listing names them.
OP_LABELS = {"shared_ld": "shared ld", "shared_st": "shared st", "shared_atom": "shared atom",
             "global_ld": "global ld", "global_st": "global st", "global_atom": "global atom"}


def label_cells() -> int:
    """The columns of the source listing's labels (`shared ld:`, `barrier:`): 11, or the widest
    label of the language asked for (an atomic's label may stick out, as it always has)."""
    return max([11] + [width(label(t) + ":") for t in ("shared ld", "shared st", "global ld", "global st", "barrier")])


def op_label(op: str) -> str:
    """`shared ld:` and the like, padded as the source listing aligns them."""
    return pad(label(OP_LABELS.get(op, op.replace("_", " "))) + ":", label_cells())


def site_lines(vp: VariantProfile) -> List[str]:
    """The source lines with counters, Nsight's source page in text."""
    lines = []
    keys = sorted({(f, ln) for f, ln, _ in vp.sites} | set(vp.barriers) | {(f, ln) for f, ln, _ in vp.collectives})
    texts = {}  # type: Dict[str, List[str]]
    for f, ln in keys:
        if f not in texts:
            p = Path(f) if Path(f).is_absolute() else vp.root / f
            try:
                texts[f] = p.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                texts[f] = []
        src = texts[f][ln - 1].strip() if 0 < ln <= len(texts[f]) else ""
        lines.append("  %s:%d  %s" % (f, ln, src[:96 - len(f) - len(str(ln))]))
        for op in pdata.OPS:
            c = vp.sites.get((f, ln, op))
            if c:
                lines.append("      " + counter_text(op, c))
        if (f, ln) in vp.barriers:
            lines.append("      %s %s" % (pad(label("barrier") + ":", label_cells()), tr("{count} warp-level barriers").format(
                count=pad(count(vp.barriers[(f, ln)]), 9, right=True))))
        for (cf, cl, op), (inst, lanes) in sorted(vp.collectives.items()):
            if (cf, cl) == (f, ln):
                lines.append("      %s %s" % (pad(op + ":", label_cells()), tr("{inst} inst, {lanes} lanes").format(
                    inst=pad(count(inst), 9, right=True), lanes="%4.1f" % (lanes / inst))))
    return lines


def counter_text(op: str, c: Dict[str, int]) -> str:
    inst = c.get("inst", 0)
    text = "%s %s" % (op_label(op), tr("{inst} inst, {lanes} lanes").format(
        inst=pad(count(inst), 9, right=True), lanes="%4.1f" % (c.get("lanes", 0) / inst if inst else 0)))
    if op.startswith("shared"):
        conflicts = c.get("wavefronts", 0) - c.get("ideal", 0)
        text += tr(", {wavefronts} wavefronts ({per}/inst), {conflicts} bank conflicts").format(
            wavefronts=count(c.get("wavefronts", 0)), per="%.2f" % (c.get("wavefronts", 0) / inst if inst else 0),
            conflicts=count(conflicts))
    else:
        text += tr(", {sectors} sectors ({per}/request, {ideal} would do)").format(
            sectors=count(c.get("sectors", 0)), per="%.1f" % (c.get("sectors", 0) / inst if inst else 0),
            ideal="%.1f" % (c.get("ideal_sectors", 0) / inst if inst else 0))
    if "same_addr_max" in c:
        text += tr(", up to {lanes} lanes/address").format(lanes=c["same_addr_max"])
    return text


def variant_title(vp: VariantProfile) -> str:
    calls = tr(" (the first of {calls} calls)").format(calls=vp.calls) if vp.calls > 1 else ""
    return tr("{variant}: n={n} tpb={tpb} seed={seed}, {launches} launch(es){calls}, modeled {us} us on an "
              "H200").format(variant=vp.variant.label, n=vp.n, tpb=vp.tpb, seed=vp.seed, launches=len(vp.launches),
                             calls=calls, us="%.1f" % vp.time_us)


def story_rows(vps: List[VariantProfile]) -> List[List[str]]:
    rows = []
    for vp in vps:
        t = vp.totals
        rows.append([vp.variant.flag, "%.1f us" % vp.time_us, compact(t["warp_inst"]), compact(t["shared"]),
                     compact(t["conflicts"]), "%.1f" % story_value(vp, "lanes_avg"), compact(t["sectors"]),
                     str(len(vp.launches))])
    return rows


STORY_HEADER = ("variant", "model", "warp inst", "shared", "confl", "lanes", "sectors", "launches")
STORY_LEGEND = ("model: modeled H200 time, warp inst: estimated warp instructions, shared: shared-memory "
                "warp instructions, confl: bank conflicts, lanes: active lanes per shared instruction, "
                "sectors: global 32-byte sectors")


def story_header() -> List[str]:
    return [label(h) for h in STORY_HEADER]


def wrap(text: str, indent: str, width_: int = 100, hang: str = "  ") -> List[str]:
    """`text` in lines of at most `width_` terminal columns, the first after `indent`, the others
    after `indent` + `hang`."""
    words, lines, line = text.split(), [], indent
    for w in words:
        if width(line) + width(w) + 1 > width_ and line.strip():
            lines.append(line.rstrip())
            line = indent + hang
        line += w + " "
    lines.append(line.rstrip())
    return lines


def render(vps: List[VariantProfile]) -> List[str]:
    lines = []
    for i, vp in enumerate(vps):
        lines += wrap(variant_title(vp), "")
        lines += fmt_table(kernel_rows(vp), kernel_header())
        if i == 0:  # once: the columns mean the same in every table
            lines += wrap(tr(KERNEL_LEGEND), "  ", hang="")
        lines.append("")
        lines += site_lines(vp)
        lines.append("")
        lines += wrap(top_sentence(vp), "  ")
        lines.append("")
    if len(vps) > 1:
        lines.append(tr("the story, one row per variant:"))
        lines += fmt_table(story_rows(vps), story_header())
        lines += wrap(tr(STORY_LEGEND), "  ")
        for i, vp in enumerate(vps):
            if i:
                lines += wrap(tr("{variant} vs {previous}: {change}").format(
                    variant=vp.variant.flag, previous=vps[i - 1].variant.flag, change=change(vps[i - 1], vp)), "  ")
            else:
                lines.append("  %s:" % vp.variant.flag)
            lines += wrap(top_sentence(vp), "    ")
    return lines


# ---- data --------------------------------------------------------------------------------------

@contextmanager
def in_english():
    """English for what is written inside: the --json data reads the same whatever --lang said
    (tools and tests read it; the schema's enums are English)."""
    saved = messages._chosen
    messages.set_lang("en")
    try:
        yield
    finally:
        messages.set_lang(saved)


def as_json(puzzle: Puzzle, solution: bool, vps: List[VariantProfile]) -> dict:
    with in_english():
        return json_data(puzzle, solution, vps)


def json_data(puzzle: Puzzle, solution: bool, vps: List[VariantProfile]) -> dict:
    variants = []
    for i, vp in enumerate(vps):
        top = vp.top
        variants.append({
            "variant": vp.variant.name, "n": vp.n, "tpb": vp.tpb, "seed": vp.seed, "verdict": vp.verdict,
            "modeled_us": round(vp.time_us, 3),
            "totals": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in sorted(vp.totals.items())},
            "launches": [{
                "index": l.index, "kernel": l.kernel, "file": vp.path(l.file), "line": l.line,
                "grid": list(l.grid), "block": list(l.block), "shmem": l.shmem, "blocks": l.blocks, "warps": l.warps,
                "bound": model.bound(t), "model_us": {k: round(v, 6) for k, v in sorted(t.items())},
                "totals": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in sorted(totals([l]).items())},
            } for l, t in zip(vp.launches, vp.terms)],
            "sites": [dict({"file": f, "line": ln, "op": op}, **c) for (f, ln, op), c in sorted(vp.sites.items())],
            "barriers": [{"file": f, "line": ln, "inst": n} for (f, ln), n in sorted(vp.barriers.items())],
            "collectives": [{"file": f, "line": ln, "op": op, "inst": c[0], "lanes": c[1]}
                            for (f, ln, op), c in sorted(vp.collectives.items())],
            "costs": [{"file": c["file"], "line": c["line"], "kind": c["kind"], "us": round(c["us"], 6),
                       "text": cost_text(c)} for c in vp.costs],
            "top_cost": top_sentence(vp),
            "top_cost_kind": top["kind"] if top else None,
            "change": None if i == 0 else change(vps[i - 1], vp),
        })
    return {"schema_version": SCHEMA_VERSION, "tool": "%s profile" % PROG, "puzzle": puzzle.name,
            "solution": solution, "model": {k: getattr(model, k) for k in MODEL_CONSTANTS}, "variants": variants}


MODEL_CONSTANTS = ("SMS", "CLOCK_HZ", "ISSUE_PER_CYCLE", "INST_PER_MEMORY_OP", "COLLECTIVE_INST",
                   "WAVEFRONTS_PER_CYCLE", "DRAM_BYTES_PER_S", "LAUNCH_US", "ATOMIC_NS")


# ---- running -----------------------------------------------------------------------------------

@contextmanager
def profiling_env(path: Path):
    """The driver inherits our environment: the profiler on, one schedule, the memory checks off
    (they do not change the counters and cost most of the time)."""
    keys = {"CUDASIM_PROFILE": str(path), "CUDASIM_CHECKS": "0", "CUDASIM_SCHEDULES": "forward"}
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update(keys)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def profile_variant(root: Path, binary: Path, variant: Variant, n: int, tpb: int, seed: int):
    """Run one variant; returns (VariantProfile or None, the driver's outcome)."""
    with tempfile.TemporaryDirectory(prefix="puzzle-profile-") as tmp:
        records = Path(tmp) / "profile.jsonl"
        cmd = [str(binary), "--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)]
        with profiling_env(records):
            outcome = run_driver(cmd, run_timeout())
        recorded = pdata.load(records) if records.is_file() else []
    if not outcome.passed:
        return None, outcome
    launches = pdata.one_call(recorded)
    vp = VariantProfile(variant, n, tpb, seed, outcome.kind, launches, root)
    vp.calls = len(recorded) // len(launches) if launches else 1
    return vp, outcome


def cmd_profile(root: Path, args: List[str]) -> int:
    activate()
    req = parse_request(root, args, PROFILE)
    if req is None:
        return 0
    puzzle, variants, solution = req.puzzle, req.variants, req.solution
    if not variants:
        raise BareUsageError("%s\n%s" % (tr("name the variants to profile."), PROFILE.puzzle_usage(puzzle)))
    if req.backend == "gpu":
        raise UsageError(tr("profile counts on the CPU simulator: a GPU run has no profiler here (leave out "
                            "--backend gpu)"))
    # The driver's --seed is the input's seed, as `check` gives it to the driver: with --n and --tpb
    # too, the input of the case a replay line names. Without --seed, one fixed input, so that
    # profiles compare across runs.
    seed = req.seed if req.seed_given() else DEFAULT_SEED
    cases = []
    for v in variants:
        n, tpb = default_case(v, req.n, req.tpb)
        limit = v.n_limit(tpb)
        if limit is not None and n > limit:
            raise UsageError(tr("{variant} takes at most n={most} with tpb={tpb} (one block); use a smaller "
                                "--n.").format(variant=v.label, most=limit, tpb=tpb))
        cases.append((v, n, tpb))
    if req.binary:
        binary = Path(req.binary)
    else:
        try:
            _, binary, _ = bld.build_for_backend(root, build_dir(root), puzzle, solution, "cpu")
        except BuildError:
            return 2
    out(tr("profile of {puzzle} ({source}) on the CPU simulator, seed {seed}").format(
        puzzle=puzzle.name, source=rel(binary, root) if req.binary else puzzle.source(solution), seed=seed))
    out("")
    vps = []
    for v, n, tpb in cases:
        vp, outcome = profile_variant(root, binary, v, n, tpb, seed)
        if outcome.kind == USAGE:
            out(tr("{variant} did not run: {reason} ({command})").format(
                variant=v.label, reason=outcome.reason, command=" ".join(outcome.cmd)))
            return 2
        if vp is None:
            extra = " --solution" if solution else ""
            run = "%s run %s %s --n %d --tpb %d --seed %d%s" % (PROG, puzzle.name, v.flag, n, tpb, seed, extra)
            check = "%s check %s %s%s" % (PROG, puzzle.name, v.flag, extra)
            text = tr("{variant} failed at n={n} tpb={tpb} seed={seed}: {reason}. A profile of a wrong kernel would "
                      "mislead; run `{run}` to see what went wrong on this input, and `{check}` for many "
                      "sizes.").format(variant=v.label, n=n, tpb=tpb, seed=seed, reason=tr_reason(outcome.reason),
                                       run=run, check=check)
            for line in wrap(text, ""):
                out(line)
            return 1
        if not vp.launches:
            text = tr("{variant} ran, but the profiler recorded no kernel launch: {binary} is not a CPU simulator "
                      "build, or the variant launches no kernel.").format(
                variant=v.label, binary=rel(binary, root))
            for line in wrap(text, ""):
                out(line)
            return 2
        vps.append(vp)
    for line in render(vps):
        out(line)
    write_outputs(req, puzzle, solution, vps)
    return 0


def write_outputs(req, puzzle: Puzzle, solution: bool, vps: List[VariantProfile]) -> None:
    targets = []
    if req.get("--json"):
        targets.append((req.get("--json"), json.dumps(as_json(puzzle, solution, vps), indent=1) + "\n"))
    if req.get("--html"):
        from .profile_html import page
        targets.append((req.get("--html"), page(puzzle, vps)))
    for target, text in targets:
        try:
            Path(target).write_text(text, encoding="utf-8")
        except OSError as e:
            raise UsageError(tr("cannot write {file}: {reason}").format(file=target, reason=e.strerror or e))
        out(tr("wrote {file}").format(file=target))
