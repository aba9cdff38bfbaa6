#!/usr/bin/env python3
"""Does the profile's cost model order variants as the GPU does?

Profiles p12's eight reduction kernels and p14's two large scans on the CPU simulator (the
reference solutions), models their H200 times (scripts/puzzlelib/profile_model.py) and compares the
order with the H200's bench times, read from bench/results/<puzzle>-h200-*.md (the table of the
chosen n). Prints a Markdown report: modeled vs measured, Kendall's tau-b per group, and the pairs
that the model and the GPU order differently.

    python3 scripts/profile_rank.py [--n 4194304] [--out bench/results/profile-rank-DATE.md]
"""

from __future__ import annotations

import argparse
import datetime
import math
import re
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from puzzlelib import build as bld  # noqa: E402
from puzzlelib.common import build_dir  # noqa: E402
from puzzlelib.profile import profile_variant  # noqa: E402
from puzzlelib.puzzles import discover  # noqa: E402

GROUPS = (("p12", ("k1", "k2", "k3", "k4", "k5", "k6", "k7", "shuffle")), ("p14", ("complete", "single-pass")))
TPB = 256  # the bench's block size


def measured(puzzle: str, n: int) -> Tuple[Dict[str, float], str]:
    """{variant: ms} from the newest bench/results/<puzzle>-h200-*.md table at n, and that file."""
    files = sorted((ROOT / "bench" / "results").glob("%s-h200-*.md" % puzzle))
    if not files:
        raise SystemExit("no bench/results/%s-h200-*.md: run `puzzle.py bench %s` on an H200 first" % (puzzle, puzzle))
    text = files[-1].read_text(encoding="utf-8")
    section = re.search(r"^## n = %d\b.*?(?=^## |\Z)" % n, text, re.S | re.M)
    if not section:
        raise SystemExit("%s has no table for n = %d" % (files[-1].name, n))
    times = {m.group(1): float(m.group(2))
             for m in re.finditer(r"^\| `([\w-]+)` \| ([0-9.]+) \|", section.group(0), re.M)}
    return times, files[-1].relative_to(ROOT).as_posix()


def kendall_tau_b(xs: List[float], ys: List[float]) -> float:
    concordant = discordant = tie_x = tie_y = 0
    for i, j in combinations(range(len(xs)), 2):
        dx, dy = xs[i] - xs[j], ys[i] - ys[j]
        if dx == 0 and dy == 0:
            continue
        if dx == 0:
            tie_x += 1
        elif dy == 0:
            tie_y += 1
        elif dx * dy > 0:
            concordant += 1
        else:
            discordant += 1
    denom = math.sqrt((concordant + discordant + tie_x) * (concordant + discordant + tie_y))
    return (concordant - discordant) / denom if denom else 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 22, help="the size (a size the bench tables have)")
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args()
    puzzles = discover(ROOT)
    lines = ["# The profile's cost model against the H200", "",
             "- date: %s; command: `python3 scripts/profile_rank.py --n %d`" % (datetime.date.today(), args.n),
             "- modeled: `puzzle.py profile --solution` on the CPU simulator, n = %d, tpb = %d, seed 1, "
             "scripts/puzzlelib/profile_model.py" % (args.n, TPB), ""]
    for name, variants in GROUPS:
        puzzle = puzzles[name]
        times, source = measured(name, args.n)
        _, binary, _ = bld.build_for_backend(ROOT, build_dir(ROOT), puzzle, True, "cpu")
        rows = []
        started = time.time()
        for v in variants:
            vp, outcome = profile_variant(ROOT, binary, puzzle.variants[v], args.n, TPB, 1)
            if vp is None:
                raise SystemExit("%s --%s failed on the simulator: %s" % (name, v, outcome.reason))
            rows.append((v, vp.time_us, times[v] * 1e3))
        seconds = time.time() - started
        tau = kendall_tau_b([r[1] for r in rows], [r[2] for r in rows])
        lines += ["## %s (measured: %s)" % (name, source), "",
                  "| variant | modeled us | measured us | modeled rank | measured rank |", "|---|---:|---:|---:|---:|"]
        for v, mod, gpu in rows:  # rank 1 is the fastest; tied times share a rank
            lines.append("| `%s` | %.1f | %.1f | %d | %d |" % (v, mod, gpu, 1 + sum(r[1] < mod for r in rows),
                                                               1 + sum(r[2] < gpu for r in rows)))
        disagree = ["`%s` vs `%s`: model %.1f vs %.1f us, GPU %.1f vs %.1f us" % (a[0], b[0], a[1], b[1], a[2], b[2])
                    for a, b in combinations(rows, 2) if (a[1] - b[1]) * (a[2] - b[2]) <= 0]
        lines += ["", "Kendall's tau-b: %.3f (simulator: %.0f s for the %d variants)" % (tau, seconds, len(rows)), "",
                  "Pairs the model and the GPU order differently (or the model ties): %s"
                  % ("none" if not disagree else ""), ""][:-1 if disagree else None]
        lines += ["- " + d for d in disagree] + ([""] if disagree else [])
    text = "\n".join(l.rstrip() for l in lines).rstrip() + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
