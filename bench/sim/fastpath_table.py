#!/usr/bin/env python3
"""The cudasim fast path (one schedule, CUDASIM_CHECKS=0, one worker) of this tree against commit
REV's, next to PoCL on one core and the plain C++ loops on one core, in one run with the rows'
runs interleaved (so that the drift of a shared machine falls on every row alike): launched CUDA
threads (work-items) per second of p14 --complete, counted as scripts/bench_sim.py counts them
(its functions do the runs). Optionally bench/sim/matmul_tiled.cu's whole-program time with the
fast path, REV's build against this tree's.

    python3 bench/sim/fastpath_table.py --baseline REV [--n 1048576] [--tpb 256] [--runs 7]
                                        [--matmul-launches 3] [--out FILE]

REV's p14 is built in build-baseline/ (scripts/bench_sim.py --baseline builds it there too); its
matmul_tiled with `puzzle.py sim` in REV's worktree, against REV's library. Prints Markdown.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_sim as bs  # noqa: E402
from puzzlelib.common import build_dir  # noqa: E402


def matmul_binary(root: Path, build: Path) -> str:
    """bench/sim/matmul_tiled.cu built by `puzzle.py sim` of the tree at `root` into `build`, as
    for a run with the checks off (so that a tree that has an uninstrumented build makes it)."""
    env = dict(os.environ, PUZZLES_BUILD_DIR=str(build), CUDASIM_CHECKS="0")
    out = subprocess.run([sys.executable, str(root / "scripts" / "puzzle.py"), "sim", "--build-only",
                          str(root / "bench" / "sim" / "matmul_tiled.cu")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, check=True, env=env)
    return out.stdout.strip().splitlines()[-1]


def matmul_seconds(binary: str, launches: int, workers: int) -> float:
    """Wall seconds of one whole matmul_tiled run with the fast path (checks off, its default three
    schedules, as bench_sim.py --programs runs it)."""
    env = dict(os.environ, CUDASIM_CHECKS="0", CUDASIM_WORKERS=str(workers))
    t0 = time.monotonic()
    p = subprocess.run([binary, str(launches - 1)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, env=env)
    took = time.monotonic() - t0
    if p.returncode != 0 or "ok" not in p.stdout:
        raise RuntimeError("%s failed:\n%s" % (binary, p.stdout))
    return took


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True, metavar="REV")
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--tpb", type=int, default=256)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--matmul-launches", type=int, default=0, help="also time matmul_tiled with this many launches")
    ap.add_argument("--out")
    args = ap.parse_args(argv)

    old_bin = bs.build_baseline(ROOT, args.baseline)
    new_bin = bs.build_binary(ROOT, build_dir(ROOT), None)
    loops_bin = bs.build_loops(ROOT, build_dir(ROOT))
    ocl_bin = bs.build_opencl(ROOT, build_dir(ROOT))
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.strip()
    load0 = os.getloadavg()[0]
    times = {"old": [], "new": [], "pocl": [], "loops": []}
    builds = set()
    launched = None
    for _ in range(args.runs):
        for name, binary in (("old", old_bin), ("new", new_bin)):
            r = bs.run_sim(binary, args.n, args.tpb, "forward", checks=False)
            if r["verdict"] != "pass":
                raise RuntimeError("%s gave a wrong result" % binary)
            times[name].append(r["kernel_seconds"])
            launched = r["threads"]
            if name == "new":
                builds.add(r.get("build", "instrumented"))
        lp = bs.loops_rate(loops_bin, args.n, args.tpb, 5, 1)
        times["loops"].append(lp["s"])
        if ocl_bin:
            pr = bs.opencl_rate(ROOT, ocl_bin, args.n, args.tpb, 5, bs.POCL_PLATFORM,
                                env={v: "1" for v in bs.POCL_THREAD_VARS})
            if pr is not None:
                times["pocl"].append(pr["s"])
                pocl_version = bs.pocl_version(pr["version"])
    mm = None
    if args.matmul_launches:
        sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", args.baseline], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout.strip()[:12]
        old_mm = matmul_binary(ROOT / "build-baseline" / ("src-" + sha), ROOT / "build-baseline" / ("build-" + sha))
        new_mm = matmul_binary(ROOT, build_dir(ROOT))
        mm = {(b, w): [] for b in ("old", "new") for w in (1, os.cpu_count() or 1)}
        for _ in range(max(3, args.runs // 2)):
            for (b, w) in mm:
                mm[(b, w)].append(matmul_seconds(old_mm if b == "old" else new_mm, args.matmul_launches, w))
    load1 = os.getloadavg()[0]

    def rate(key):
        return launched / statistics.median(times[key])

    out = ["# cudasim fast path: this tree against %s, with PoCL and plain loops (%s)" % (rev, datetime.date.today().isoformat()),
           "",
           "- machine: %s; load average %.1f when it started, %.1f when it ended (other processes share the cores)"
           % (bs.machine(), load0, load1),
           "- this tree: %s" % (bs.source_version(ROOT) or "unknown"),
           "- command: `python3 bench/sim/fastpath_table.py %s`" % " ".join(argv),
           "- p14 `--complete`, n = %d, %d threads per block; %d rounds, each running every row once in turn; median "
           "seconds per row; launched CUDA threads (OpenCL work-items) per second, counted as scripts/bench_sim.py "
           "counts them (cudasim: `--stats` kernel_seconds, one schedule, `CUDASIM_CHECKS=0`, `CUDASIM_WORKERS=1`; "
           "PoCL: profiling events, one compute unit; loops: bench/sim/p14_loops.cpp, one thread)"
           % (args.n, args.tpb, args.runs),
           "- this tree's cudasim ran as its %s build" % " and ".join(sorted(builds)),
           "",
           "| row | seconds (median) | launched threads/s | vs %s fast path |" % rev,
           "|---|---:|---:|---:|"]
    base = rate("old")
    rows = [("cudasim fast path, %s" % rev, "old"), ("cudasim fast path, this tree", "new")]
    if times["pocl"]:
        rows.append(("PoCL %s, 1 core" % pocl_version, "pocl"))
    rows.append(("plain C++ loops, 1 core", "loops"))
    for label, key in rows:
        out.append("| %s | %.4f | %s | %.2fx |" % (label, statistics.median(times[key]), bs.fmt(rate(key)), rate(key) / base))
    if times["pocl"]:
        out += ["", "- this tree's fast path runs %.2f of PoCL's rate (1/%.1f); %s's ran %.2f (1/%.1f)."
                % (rate("new") / rate("pocl"), rate("pocl") / rate("new"), rev, base / rate("pocl"), rate("pocl") / base)]
    if mm:
        out += ["", "## bench/sim/matmul_tiled.cu, fast path",
                "",
                "Whole-program wall seconds of `matmul_tiled %d` (%d launches of 200 blocks of 1024 threads, 20 barriers a "
                "thread) with `CUDASIM_CHECKS=0` and its default three schedules, median of %d runs per row, rows "
                "interleaved; built with `puzzle.py sim` of each tree." % (args.matmul_launches - 1, args.matmul_launches,
                                                                            len(next(iter(mm.values())))),
                "",
                "| workers | %s s | this tree s | speed-up |" % rev, "|---|---:|---:|---:|"]
        for w in sorted({w for _, w in mm}):
            o, n = statistics.median(mm[("old", w)]), statistics.median(mm[("new", w)])
            out.append("| %d | %.2f | %.2f | %.2fx |" % (w, o, n, o / n))
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
