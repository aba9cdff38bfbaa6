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
from . import profile_data as pdata
from . import profile_model as model
from .common import PROG, BuildError, UsageError, build_dir, out, rel, run_timeout
from .driver import USAGE, run_driver
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
           [--n N --tpb T] [--seed S] [--json FILE] [--html FILE]

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
  --seed S           the seed of the random input (default 1)
  --json FILE        also write the whole profile as data (docs/profile-schema.json)
  --html FILE        also write it as one web page (it loads nothing from the network)

Exit status: 0 profiled, 1 a kernel failed (`{prog} check` says why),
2 a usage or build error.
"""

PROFILE = Verb("profile", dict(pick("--solution", "--n", "--tpb", "--seed", "--binary"), **{"--json": str, "--html": str}),
               PROFILE_HELP,
               missing="profile needs a puzzle and variants, e.g. `{prog} profile p12 --k1 --k2 --solution`.")


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
        return "words %d apart" % main
    return "words %d to %d apart" % (min(known), max(known))


def costs(vp: VariantProfile) -> List[dict]:
    """The wasted work found per source line, each with its share of the modeled time, largest first."""
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
            apart = stride_words(vp.strides.get((f, line), {}))
            touch = ("touch %s, so several of them land in one bank" % apart if apart
                     else "touch different words of the same bank")
            found.append(dict(where, kind="bank conflicts", us=model.shared_us(conflicts, sms), text=(
                "%s-way bank conflicts at %s: the lanes of a warp %s, and each shared access takes %.1f "
                "passes through the banks where 1 would do (%s extra wavefronts)"
                % (way(per), at, touch, per, "{:,}".format(conflicts)))))
        avg = a["lanes"] / a["inst"] if a.get("inst") else 32
        if avg < IDLE_BELOW:
            wasted = a["inst"] - a["lanes"] / 32.0
            found.append(dict(where, kind="idle lanes", us=model.issue_us(wasted * model.INST_PER_MEMORY_OP, sms), text=(
                "lanes idle: %.1f of 32 lanes active on average at %s: the `if` leaves most of each warp with "
                "nothing to do, and the warp still issues the instruction (%s warp instructions for work that "
                "full warps would do in %s)" % (avg, at, "{:,}".format(a["inst"]),
                                                 "{:,}".format(int(math.ceil(a["lanes"] / 32.0)))))))
        extra = a.get("gl_sectors", 0) - a.get("gl_ideal_sectors", 0)
        if extra > 0:
            found.append(dict(where, kind="uncoalesced", us=model.dram_us(extra), text=(
                "uncoalesced at %s: %.1f sectors per request where %.1f would do (the lanes' addresses are "
                "spread over more 32-byte sectors than their bytes need)"
                % (at, a["gl_sectors"] / a["gl_inst"], a["gl_ideal_sectors"] / a["gl_inst"]))))
        if a.get("atomics"):
            found.append(dict(where, kind="atomics", us=model.atomic_us(a["atomics"]), text=(
                "atomics at %s: %s warp-level atomics, served one after another where they meet at one address"
                % (at, "{:,}".format(a["atomics"])))))
    return sorted(found, key=lambda c: -c["us"])


def bound_text(vp: VariantProfile) -> str:
    """What the modeled time goes to when no waste stands out."""
    spent = {}  # type: Dict[str, float]
    for t in vp.terms:
        b = model.bound(t)
        spent[b] = spent.get(b, 0) + t["time"]
    b = max(spent, key=lambda k: spent[k])
    return {"launch": "the fixed cost of its %d launch(es)" % len(vp.launches),
            "issue": "issuing instructions (about %s warp instructions)" % compact(vp.totals["warp_inst"]),
            "shared": "shared-memory wavefronts (%s)" % compact(vp.totals["wavefronts"]),
            "dram": "reading and writing global memory (%s sectors of 32 bytes)" % compact(vp.totals["sectors"]),
            "atomics": "atomics on one address"}[b]


def top_sentence(vp: VariantProfile) -> str:
    top = vp.top
    if top:
        return "top cost: %s" % top["text"]
    return "top cost: no bank conflicts, idle lanes or uncoalesced accesses worth naming; the time goes to %s" \
        % bound_text(vp)


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
        text = "%s %s -> %s" % (words, fmt(a), fmt(b))
        if key == "conflicts":  # where: the lines that have them, or the line that now does the work without
            had, has = conflict_lines(prev), conflict_lines(cur)
            if has:
                text += " (at %s)" % ", ".join(has)
            elif had:
                text += " (%s had them; %s, the busiest shared line now, has none)" % (
                    ", ".join(had), busiest_shared_line(cur))
        return text

    parts = []
    if better:
        parts.append(say(better))
    if worse and (better is None or worse[0] > 2):
        parts.append("but " + say(worse))
    return "; ".join(parts) if parts else ("no counter changed by more than 5% (what did change is not counted: "
                                           "arithmetic, branches and loop tests touch no memory)")


def conflict_lines(vp: VariantProfile) -> List[str]:
    found = {}  # type: Dict[Tuple[str, int], int]
    for (f, ln, op), c in vp.sites.items():
        if op.startswith("shared") and c.get("wavefronts", 0) > c.get("ideal", 0):
            found[(f, ln)] = found.get((f, ln), 0) + c["wavefronts"] - c["ideal"]
    return ["%s:%d" % (Path(f).name, ln) for (f, ln), _ in sorted(found.items(), key=lambda kv: -kv[1])]


def busiest_shared_line(vp: VariantProfile) -> str:
    inst = {}  # type: Dict[Tuple[str, int], int]
    for (f, ln, op), c in vp.sites.items():
        if op.startswith("shared"):
            inst[(f, ln)] = inst.get((f, ln), 0) + c.get("inst", 0)
    if not inst:
        return "no line"
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


KERNEL_LEGEND = """\
  per warp-level instruction, as Nsight Compute counts: sh.ld/sh.st shared loads/stores, lanes
  their average active lanes of 32, wavefr passes through the 32 banks, confl bank conflicts
  (wavefronts beyond the fewest), gl.req global requests, sectors 32-byte sectors, s/req sectors
  per request (4 for 32 lanes x 4 bytes), atom atomics, bar barriers (one per warp), model the
  modeled H200 time (docs/architecture.md, "The cost model")"""


def fmt_table(rows: List[List[str]], header, indent: str = "  ") -> List[str]:
    cols = list(zip(*([list(header)] + rows)))
    widths = [max(len(c) for c in col) for col in cols]
    lines = []
    for r in [list(header)] + rows:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])] + [c.rjust(w) for c, w in zip(r[2:], widths[2:])]
        lines.append((indent + " ".join(cells)).rstrip())
    return lines


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
            lines.append("      {:<11} {:>9,} warp-level barriers".format("barrier:", vp.barriers[(f, ln)]))
        for (cf, cl, op), (inst, lanes) in sorted(vp.collectives.items()):
            if (cf, cl) == (f, ln):
                lines.append("      {:<11} {:>9,} inst, {:4.1f} lanes".format(op + ":", inst, lanes / inst))
    return lines


def counter_text(op: str, c: Dict[str, int]) -> str:
    inst = c.get("inst", 0)
    text = "{:<11} {:>9,} inst, {:4.1f} lanes".format(op.replace("_", " ") + ":", inst,
                                                      c.get("lanes", 0) / inst if inst else 0)
    if op.startswith("shared"):
        conflicts = c.get("wavefronts", 0) - c.get("ideal", 0)
        text += ", {:,} wavefronts ({:.2f}/inst), {:,} bank conflicts".format(
            c.get("wavefronts", 0), c.get("wavefronts", 0) / inst if inst else 0, conflicts)
    else:
        text += ", {:,} sectors ({:.1f}/request, {:.1f} would do)".format(
            c.get("sectors", 0), c.get("sectors", 0) / inst if inst else 0, c.get("ideal_sectors", 0) / inst if inst else 0)
    if "same_addr_max" in c:
        text += ", up to {} lanes/address".format(c["same_addr_max"])
    return text


def variant_title(vp: VariantProfile) -> str:
    calls = " (the first of %d calls)" % vp.calls if vp.calls > 1 else ""
    return "%s: n=%d tpb=%d seed=%d, %d launch(es)%s, modeled %.1f us on an H200" % (
        vp.variant.label, vp.n, vp.tpb, vp.seed, len(vp.launches), calls, vp.time_us)


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


def wrap(text: str, indent: str, width: int = 100) -> List[str]:
    words, lines, line = text.split(), [], indent
    for w in words:
        if len(line) + len(w) + 1 > width and line.strip():
            lines.append(line.rstrip())
            line = indent + "  "
        line += w + " "
    lines.append(line.rstrip())
    return lines


def render(vps: List[VariantProfile]) -> List[str]:
    lines = []
    for i, vp in enumerate(vps):
        lines += wrap(variant_title(vp), "")
        lines += fmt_table(kernel_rows(vp), KERNEL_HEADER)
        if i == 0:  # once: the columns mean the same in every table
            lines += KERNEL_LEGEND.splitlines()
        lines.append("")
        lines += site_lines(vp)
        lines.append("")
        lines += wrap(top_sentence(vp), "  ")
        lines.append("")
    if len(vps) > 1:
        lines.append("the story, one row per variant:")
        lines += fmt_table(story_rows(vps), STORY_HEADER)
        lines += wrap(STORY_LEGEND, "  ")
        for i, vp in enumerate(vps):
            if i:
                lines += wrap("%s vs %s: %s" % (vp.variant.flag, vps[i - 1].variant.flag, change(vps[i - 1], vp)), "  ")
            else:
                lines.append("  %s:" % vp.variant.flag)
            lines += wrap(top_sentence(vp), "    ")
    return lines


# ---- data --------------------------------------------------------------------------------------

def as_json(puzzle: Puzzle, solution: bool, vps: List[VariantProfile]) -> dict:
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
            "costs": [dict(c, us=round(c["us"], 6)) for c in vp.costs],
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
    req = parse_request(root, args, PROFILE)
    if req is None:
        return 0
    puzzle, variants, solution = req.puzzle, req.variants, req.solution
    if not variants:
        raise BareUsageError("name the variants to profile.\n%s" % PROFILE.puzzle_usage(puzzle))
    seed = req.seed if req.seed_given() else DEFAULT_SEED  # one fixed input: profiles compare across runs
    cases = []
    for v in variants:
        n, tpb = default_case(v, req.n, req.tpb)
        limit = v.n_limit(tpb)
        if limit is not None and n > limit:
            raise UsageError("%s takes at most n=%d with tpb=%d (one block); use a smaller --n."
                             % (v.label, limit, tpb))
        cases.append((v, n, tpb))
    if req.binary:
        binary = Path(req.binary)
    else:
        try:
            _, binary, _ = bld.build_for_backend(root, build_dir(root), puzzle, solution, "cpu")
        except BuildError:
            return 2
    out("profile of %s (%s) on the CPU simulator, seed %d" % (
        puzzle.name, rel(binary, root) if req.binary else puzzle.source(solution), seed))
    out("")
    vps = []
    for v, n, tpb in cases:
        vp, outcome = profile_variant(root, binary, v, n, tpb, seed)
        if outcome.kind == USAGE:
            out("%s did not run: %s (%s)" % (v.label, outcome.reason, " ".join(outcome.cmd)))
            return 2
        if vp is None:
            text = ("%s failed at n=%d tpb=%d seed=%d: %s. A profile of a wrong kernel would mislead; "
                    "run `%s check %s %s%s` to see what went wrong." % (
                        v.label, n, tpb, seed, outcome.reason, PROG, puzzle.name, v.flag, " --solution" if solution else ""))
            for line in wrap(text, ""):
                out(line)
            return 1
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
            raise UsageError("cannot write %s: %s" % (target, e.strerror or e))
        out("wrote %s" % target)
