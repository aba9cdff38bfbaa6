#!/usr/bin/env python3
"""Validate the puzzles on an NVIDIA GPU: build the GPU targets, run every variant's sweep, and
run each variant under compute-sanitizer racecheck, synccheck and memcheck.

    python3 scripts/gpu_validate.py [--learner] [--out DIR] [--puzzle p14]

Writes DIR/sanitizer.log (every tool's full output) and DIR/summary.md (a table: tool, variant,
cases, errors), and exits 1 if any case fails or any tool reports an error. Default DIR is
bench/results/gpu-validate. Needs nvcc, a GPU and compute-sanitizer on PATH (or under
/usr/local/cuda/bin).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from puzzlelib import build as bld  # noqa: E402
from puzzlelib.common import BuildError, repo_root  # noqa: E402
from puzzlelib.driver import run_driver  # noqa: E402
from puzzlelib.puzzles import discover  # noqa: E402

TOOLS = ("racecheck", "synccheck", "memcheck")
# Lines compute-sanitizer ends with: "ERROR SUMMARY: 0 errors" (memcheck, synccheck) and
# "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)".
SUMMARY = re.compile(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error)")


def sanitizer_cases(variant, seed):
    """A handful of sizes per variant: the show input plus the sweep's edge cases, kept small
    because racecheck slows kernels down by orders of magnitude."""
    n, tpb = variant.show_case()
    cases = [(n, tpb, None)]
    small = sorted((c for c in variant.sweep("gpu", seed, quick=True) if c[0] <= 1 << 16), reverse=True)
    for i, (n, tpb) in enumerate(small[:2]):  # the biggest: most blocks, partial last blocks
        cases.append((n, tpb, seed + i))
    return cases


def find_sanitizer():
    exe = shutil.which("compute-sanitizer")
    if exe:
        return exe
    for p in ("/usr/local/cuda/bin/compute-sanitizer", "/opt/cuda/bin/compute-sanitizer"):
        if os.path.exists(p):
            return p
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learner", action="store_true", help="validate the learner's files instead of the solutions")
    ap.add_argument("--out", default="bench/results/gpu-validate", help="folder for the logs")
    ap.add_argument("--puzzle", action="append", help="only these puzzles (default: all)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--jobs", type=int, default=8, help="sanitizer runs in parallel (they share the GPU)")
    ap.add_argument("--skip", action="append", default=[], help="skip this variant, e.g. p29 --double-buffer")
    args = ap.parse_args(argv)

    root = repo_root()
    build = root / "build-gpu"
    out_dir = (root / args.out) if not os.path.isabs(args.out) else Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    sanitizer = find_sanitizer()
    if not bld.gpu_present():
        print("no GPU found (nvidia-smi -L lists none)")
        return 2
    if not sanitizer:
        print("compute-sanitizer not found")
        return 2
    solution = not args.learner
    puzzles = discover(root)
    selected = [puzzles[p] for p in (args.puzzle or list(puzzles))]

    log = open(out_dir / "sanitizer.log", "w", encoding="utf-8")
    smi = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, text=True).stdout.strip()
    log.write("# %s\n# %s\n# sources: %s\n\n" % (time.strftime("%Y-%m-%d %H:%M:%S %Z"), smi,
                                                 "solutions" if solution else "learner files"))
    rows, failed = [], False
    for puzzle in selected:
        target = puzzle.target(solution, "gpu")
        try:
            bld.build_target(root, build, target, puzzle.source(solution))
        except BuildError:
            return 2
        binary = bld.binary_path(build, target)
        for variant in puzzle.variants.values():
            if variant.label in args.skip:
                print("skipped    %s" % variant.label)
                continue
            # 1. Correctness: the checker's full sweep, large size included.
            cases = variant.sweep("gpu", args.seed)
            bad = 0
            t0 = time.monotonic()
            cmds = [[str(binary), "--variant", variant.name, "--n", str(n), "--tpb", str(tpb), "--seed", str(args.seed + i)]
                    for i, (n, tpb) in enumerate(cases)]
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
                outcomes = list(pool.map(lambda c: run_driver(c, 600), cmds))
            for cmd, o in zip(cmds, outcomes):
                if not o.passed:
                    bad += 1
                    log.write("FAIL %s: %s\n%s\n" % (" ".join(cmd), o.kind, "\n".join(o.lines)))
            rows.append(("run", variant.label, len(cases), bad, time.monotonic() - t0))
            failed |= bad > 0
            print("run        %-24s %3d cases, %d failed" % (variant.label, len(cases), bad), flush=True)
            # 2. compute-sanitizer, each tool on a few small cases, in parallel.
            jobs = []
            for tool in TOOLS:
                for (n, tpb, seed) in sanitizer_cases(variant, args.seed):
                    case = ["--variant", variant.name, "--n", str(n), "--tpb", str(tpb)]
                    case += ["--show"] if seed is None else ["--seed", str(seed)]
                    jobs.append((tool, [sanitizer, "--tool", tool, "--error-exitcode", "99", str(binary)] + case))
            t0 = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
                done = list(pool.map(lambda j: (j[0], j[1], subprocess.run(j[1], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                                          text=True, timeout=900)), jobs))
            for tool in TOOLS:
                errors = ran = 0
                for (t, cmd, proc) in done:
                    if t != tool:
                        continue
                    ran += 1
                    log.write("$ %s\n%s\n" % (" ".join(cmd), proc.stdout))
                    found = [int(a or b) for a, b in SUMMARY.findall(proc.stdout)]
                    errors += max(1, sum(found)) if proc.returncode != 0 or not found else sum(found)
                rows.append((tool, variant.label, ran, errors, time.monotonic() - t0))
                failed |= errors > 0
                print("%-10s %-24s %3d cases, %d errors" % (tool, variant.label, ran, errors), flush=True)
    log.close()
    with open(out_dir / "summary.md", "w", encoding="utf-8") as f:
        f.write("# GPU validation (%s)\n\n%s, %s\n\n" % ("solutions" if solution else "learner files", smi,
                                                       time.strftime("%Y-%m-%d")))
        f.write("| check | variant | cases | failures / errors | seconds |\n|---|---|---|---|---|\n")
        for tool, label, ran, errors, secs in rows:
            f.write("| %s | %s | %d | %d | %.1f |\n" % (tool, label, ran, errors, secs))
    print("wrote %s and %s" % (out_dir / "sanitizer.log", out_dir / "summary.md"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
