#!/usr/bin/env python3
"""Draw a benchmark's GB/s per variant as a bar chart.

    python3 scripts/bench_chart.py RESULTS.json OUT.png

RESULTS.json is what `python3 scripts/puzzle.py bench pNN` writes to bench/results/. One panel per
input size: a bar per variant (effective GB/s: input bytes / median time), the copy and library
(CUB) rows in grey, and dashed lines at their speed. Variants that were not timed (wrong result,
not run) are labelled instead of drawn. Needs matplotlib (`python3 -m pip install matplotlib`).
"""
import json
import sys
from pathlib import Path


def size_label(n):
    k = n.bit_length() - 1
    return "n = 2^%d" % k if n == 1 << k else "n = %d" % n


def main(argv):
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr if len(argv) != 1 else sys.stdout)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    src, dst = Path(argv[0]), Path(argv[1])
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("error: bench_chart.py needs matplotlib: `python3 -m pip install matplotlib` "
              "(or `pixi add matplotlib`), then run the same command again.", file=sys.stderr)
        return 2
    try:
        data = json.loads(src.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print("error: cannot read %s: %s" % (src, e), file=sys.stderr)
        return 2
    rows = data.get("rows") or []
    device = data.get("device") or {}
    lib = device.get("baseline") or "baseline"
    sizes = sorted({r["n"] for r in rows})
    if not sizes:
        print("error: %s has no rows" % src, file=sys.stderr)
        return 2

    fig, axes = plt.subplots(1, len(sizes), figsize=(6.5 * len(sizes), 0.45 * max(len([r for r in rows if r["n"] == n])
                                                                                 for n in sizes) + 2.2),
                             squeeze=False)
    for ax, n in zip(axes[0], sizes):
        here = [r for r in rows if r["n"] == n]
        names, values, colors, notes = [], [], [], []
        for r in here:
            names.append(r["variant"])
            ok = r.get("status") == "ok" and r.get("gbps")
            values.append(r["gbps"] if ok else 0.0)
            colors.append("#9e9e9e" if r.get("kind") in ("copy", "baseline") else "#1f77b4")
            notes.append(None if ok else {"wrong": "wrong result", "refused": "not run"}.get(r.get("status"), "error"))
        ypos = list(range(len(names)))[::-1]
        ax.barh(ypos, values, color=colors)
        ax.set_yticks(ypos)
        ax.set_yticklabels(names)
        top = max(values) if any(values) else 1.0
        for y, v, note, r in zip(ypos, values, notes, here):
            if note:
                ax.text(top * 0.01, y, note, va="center", fontsize=8, color="#b71c1c")
            else:
                pct = r.get("pct_baseline")
                text = "%.0f" % v + (" (%.0f %% of %s)" % (pct, lib) if pct is not None else "")
                ax.text(v + top * 0.01, y, text, va="center", fontsize=8)
        for kind, style in (("copy", ":"), ("baseline", "--")):
            ref = next((r for r in here if r.get("kind") == kind and r.get("status") == "ok"), None)
            if ref:
                ax.axvline(ref["gbps"], color="#616161", linestyle=style, linewidth=1)
        ax.set_xlim(0, top * 1.35)
        ax.set_xlabel("GB/s (input bytes / median time; copy counts read + write)")
        ax.set_title("%s, %.0f MiB" % (size_label(n), n * device.get("element_bytes", 4) / 1048576.0), fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle("%s on %s (%s, median of %s runs)" % (data.get("puzzle", "?"), device.get("name", "?"),
                                                      data.get("date", ""), device.get("runs", "?")))
    fig.tight_layout()
    dst.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(dst), dpi=120)
    print("wrote %s" % dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
