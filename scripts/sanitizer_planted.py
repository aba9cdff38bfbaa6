#!/usr/bin/env python3
"""The planted bugs on a real GPU: what the run and compute-sanitizer say, next to cudasim's verdict.

Each tests/planted/<puzzle>/<name>.plant is built for the GPU (planted_<puzzle>_<name>_gpu) and run
on one input that exercises it (several blocks where the bug is between blocks), plainly and
under compute-sanitizer racecheck, synccheck, memcheck and initcheck. The table shows, per planted
bug, the plain run's verdict and each tool's error count, beside the verdict the CPU simulator must
give (the file's `expect:` header, checked by tests/python/test_planted.py).

    python3 scripts/sanitizer_planted.py [--out DIR] [--only NAME,...] [--timeout S] [--tool-timeout S]

Writes DIR/planted-sanitizer.md and DIR/planted-sanitizer.log (every tool's full output); DIR
defaults to bench/results. Needs nvcc, a GPU and compute-sanitizer (PATH or /usr/local/cuda/bin).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("racecheck", "synccheck", "memcheck", "initcheck")
SUMMARY = re.compile(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error)")
HEADER = re.compile(r"^//\s*(planted|expect|match|why):\s*(.*?)\s*$")


def planted_files(only):
    files = sorted((ROOT / "tests" / "planted").glob("*/*.plant"))
    return [f for f in files if not only or f.stem in only]


def header(path):
    h = {}
    for line in path.read_text(encoding="utf-8").splitlines()[:8]:
        m = HEADER.match(line)
        if m:
            h[m.group(1)] = m.group(2)
    return h


def case_for(puzzle, variant):
    """An input that exercises the variant: one full block for one-block variants, several
    blocks (and a partial last one) for the others."""
    decl = json.loads((ROOT / "puzzles" / puzzle / "puzzle.json").read_text(encoding="utf-8"))["variants"][variant]
    tpbs = decl["tpb"]
    tpb = 256 if 256 in tpbs else tpbs[len(tpbs) // 2]
    if decl.get("max_n") == "tpb":
        return tpb, tpb
    if decl.get("max_n") == "2*tpb":
        return 2 * tpb, tpb
    if isinstance(decl.get("max_n"), int):
        return min(decl["max_n"], 1000), tpb
    return 100003, tpb


def sanitizer():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    cand = Path("/usr/local/cuda/bin/compute-sanitizer")
    return str(cand) if cand.exists() else None


def run(cmd, timeout):
    """Runs cmd in its own process group; on timeout the whole group is killed (compute-sanitizer's
    target process too, which would otherwise keep a deadlocked kernel on the GPU)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out, time.time() - t0
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, (out or "") + "\n(timed out after %d s)" % timeout, time.time() - t0


def verdict_of(rc, out):
    if rc is None:
        return "hang"
    m = re.search(r'^RESULT (\{.*\})$', out, re.M)
    if m:
        try:
            return json.loads(m.group(1)).get("verdict", "?")
        except ValueError:
            pass
    return "exit %d" % rc


def errors_of(out):
    m = None
    for m in SUMMARY.finditer(out):
        pass
    if not m:
        return "?"
    return m.group(1) or m.group(2)


def write_report(out, gpu, rows, logs, total):
    md = ["# Planted bugs on %s: the plain run and compute-sanitizer, beside cudasim" % gpu, "",
          "Produced by `python3 scripts/sanitizer_planted.py`. Each row is one planted learner file",
          "(tests/planted/), run once plainly (`gpu`: the driver's verdict against the CPU reference;",
          "`hang`: stopped after the timeout) and under each compute-sanitizer tool (its error count;",
          "`hang`: stopped after the timeout). `cudasim` is the verdict the CPU simulator gives (`check`,",
          "asserted by tests/python/test_planted.py).", ""]
    if len(rows) < total:
        md += ["Only %d of the %d planted bugs ran." % (len(rows), total), ""]
    md += ["| planted bug | variant | n | tpb | gpu | racecheck | synccheck | memcheck | initcheck | cudasim |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append("| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s |" % (
            r["name"], r["flag"], r["n"], r["tpb"], r["gpu"], r["racecheck"], r["synccheck"], r["memcheck"],
            r["initcheck"], r["cudasim"]))
    md += ["", "What each planted bug is:", ""] + ["- `%s`: %s" % (r["name"], r["why"]) for r in rows]
    (out / "planted-sanitizer.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "planted-sanitizer.log").write_text("\n".join(logs) + "\n", encoding="utf-8")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--build", default=str(ROOT / "build-gpu-planted"))
    ap.add_argument("--only", default="")
    ap.add_argument("--timeout", type=int, default=15, help="seconds for a plain run (a deadlock hangs on a GPU)")
    ap.add_argument("--tool-timeout", type=int, default=60, help="seconds for one compute-sanitizer run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args(argv)
    cs = sanitizer()
    if not cs:
        print("compute-sanitizer not found (PATH or /usr/local/cuda/bin)", file=sys.stderr)
        return 2
    only = {s for s in args.only.split(",") if s}
    files = planted_files(only)
    build = Path(args.build)
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DPUZZLES_PLANTED=ON", "-DPUZZLES_CUDA=ON",
                    "-DCMAKE_CUDA_ARCHITECTURES=90"], check=True, stdout=subprocess.DEVNULL)
    targets = ["planted_%s_%s_gpu" % (f.parent.name, f.stem) for f in files]
    subprocess.run(["cmake", "--build", str(build), "-j", str(args.jobs), "--target"] + targets, check=True,
                   stdout=subprocess.DEVNULL)

    def one(f):
        h = header(f)
        puzzle, flag = h["planted"].split()
        variant = flag[2:]
        n, tpb = case_for(puzzle, variant)
        exe = str(build / "bin" / ("planted_%s_%s_gpu" % (puzzle, f.stem)))
        base = [exe, "--variant", variant, "--n", str(n), "--tpb", str(tpb), "--seed", "1"]
        rc, out, secs = run(base, args.timeout)
        row = {"name": "%s/%s" % (puzzle, f.stem), "flag": flag, "n": n, "tpb": tpb, "cudasim": h["expect"],
               "gpu": verdict_of(rc, out), "why": h["why"]}
        log = ["==== %s %s n=%d tpb=%d: plain run (%.1f s)\n%s" % (row["name"], flag, n, tpb, secs, out)]
        # The four tools at once: a hanging planted bug then costs one timeout, not four.
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(TOOLS)) as tools:
            futures = {tool: tools.submit(run, [cs, "--tool", tool] +
                                          (["--racecheck-report", "hazard"] if tool == "racecheck" else []) + base,
                                          args.tool_timeout) for tool in TOOLS}
        for tool in TOOLS:
            trc, tout, tsecs = futures[tool].result()
            row[tool] = "hang" if trc is None else errors_of(tout)
            log.append("==== %s: %s (%.1f s)\n%s" % (row["name"], tool, tsecs, tout))
        return row, "\n".join(log)

    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], stdout=subprocess.PIPE,
                         text=True).stdout.strip() or "?"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows, logs = [], []
    # One GPU: the runs share it, but none of them is timed; two bugs at a time keeps it busy.
    # The report is rewritten after every row, so a run stopped early still leaves its rows.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for row, log in pool.map(one, files):
            rows.append(row)
            logs.append(log)
            print("%-45s gpu=%-6s %s" % (row["name"], row["gpu"], " ".join("%s=%s" % (t, row[t]) for t in TOOLS)), flush=True)
            write_report(out, gpu, rows, logs, len(files))
    print("wrote %s" % (out / "planted-sanitizer.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
