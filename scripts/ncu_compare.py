#!/usr/bin/env python3
"""Compare the simulator's profiler (CUDASIM_PROFILE) with Nsight Compute on a GPU, per counter.

    python3 scripts/ncu_compare.py [--out DIR] [--puzzles p12,p14] [--variants k2,naive]
                                   [--sizes 262144,100003] [--sim-only]

For every variant of every selected puzzle (puzzles/pNN/puzzle.json lists them) at two sizes, it
runs the GPU driver (pNN_solution_gpu) under `ncu` and the CPU driver (pNN_solution_cpu) with the
profiler on, with the same seeded input, matches their launches by kernel name and order, and
prints one row per (puzzle, variant, size, launch, counter): simulator, ncu, difference, and
whether they agree within 2 %. DIR (default bench/results/) receives ncu-compare-<gpu>-<date>.md
(the report: device, ncu version, commit, the rows, a summary per counter and the known gaps of the
model), .csv (the rows) and a raw/ folder (ncu's CSV and the simulator's JSON lines per run).

--sim-only runs the simulator's side alone (no GPU needed). Without it, a missing GPU, nvcc or ncu
ends the script with status 2 and a message saying which.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from puzzlelib import build as bld  # noqa: E402
from puzzlelib import profile_data  # noqa: E402
from puzzlelib.common import BuildError, repo_root  # noqa: E402
from puzzlelib.puzzles import discover  # noqa: E402

PUZZLES = ("p12", "p13", "p14", "p29")
TOLERANCE = 0.02  # the target: the simulator within 2 % of ncu
SEED = 2026
# Multi-block variants run at these sizes: 2^18 has 1024 blocks of 256 (every block full), 100003
# (prime) leaves a partial last block. Larger sizes add ncu replay time, not information.
MULTI_BLOCK_SIZES = (262144, 100003)
PREFERRED_TPB = 256

# (ncu metric, simulator op, simulator quantity). The quantity is a profile_data counter, or
# "conflicts" (wavefronts - ideal).
SIM_METRICS = [
    ("smsp__sass_inst_executed_op_shared_ld.sum", "shared_ld", "inst"),
    ("smsp__sass_inst_executed_op_shared_st.sum", "shared_st", "inst"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared_ld", "wavefronts"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "shared_st", "wavefronts"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "shared_ld", "conflicts"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "shared_st", "conflicts"),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global_ld", "inst"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "global_ld", "sectors"),
    ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "global_st", "inst"),
    ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "global_st", "sectors"),
]
ATOM = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
RED = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
# The simulator sees one kind of global atomic; the GPU issues ATOM when the old value is used and
# RED when it is not. Their sum is what the simulator's count compares with.
ATOM_RED = "atom+red requests (sum of the two above)"
# Counted by ncu only: printed for context next to the simulator's rows.
NCU_ONLY = ["smsp__inst_executed.sum", "smsp__thread_inst_executed_per_inst_executed.ratio", "gpu__time_duration.sum"]
METRICS = [m for m, _, _ in SIM_METRICS] + [ATOM, RED] + NCU_ONLY

GAPS = {
    "inst": "the simulator counts memory instructions only, not the other SASS instructions "
            "(arithmetic, branches, address computation): smsp__inst_executed is ncu's figure alone.",
    "compiler": "the compilers differ: g++ may keep a value in a register where nvcc reloads it from shared "
                "memory (p14 brent-kung's down-sweep `temp[ai] = temp[bi]; temp[bi] += t;`: nvcc reloads "
                "temp[bi] after the store, one more shared load per instance), or the reverse; so shared "
                "load counts can differ by a whole number of instructions per loop trip.",
    "atomics": "red vs atom: the simulator cannot tell whether an atomic's result is used, so it cannot split "
               "global atomics into ATOM and RED as the GPU does; compare their sum.",
}
# Shown next to a shared-load row outside the tolerance: the compiler gap of GAPS is its likely cause.
SHARED_LD_GAP = "may be the compiler gap: nvcc reloads a shared value g++ kept in a register (or the reverse)"


# ---- ncu's CSV ---------------------------------------------------------------------------------

def _number(text: str) -> Optional[float]:
    """'1,048,576' or '1048576' or '12.5' -> float; 'n/a' or '' -> None."""
    t = text.strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def base_kernel_name(name: str) -> str:
    """The function name alone, however a tool spells it: 'void reduce_k6<256u>(const int *, int *, int)',
    'reduce_k6<256>' and 'reduce_k6' are all 'reduce_k6'."""
    n = name.strip()
    n = re.sub(r"^(?:void|__global__)\s+", "", n)
    n = n.split("(", 1)[0].split("<", 1)[0]
    return n.split("::")[-1].strip()


def parse_ncu_csv(text: str) -> List[Dict[str, object]]:
    """The kernel launches of `ncu --csv --page raw` output, in order: dicts with 'id', 'kernel'
    (base name), 'name' (as ncu printed it) and 'metrics' {metric: float or None}.

    ncu prints a header row ("ID", "Process ID", ..., "Kernel Name", ..., metric names), then a row
    of units (empty for the identifying columns), then one row per profiled kernel. Anything before
    the header (==PROF== notes, the program's own output) is skipped.
    """
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    name_col = next((header.index(c) for c in ("Kernel Name", "Function Name", "Demangled Name") if c in header), None)
    if name_col is None:
        raise ValueError("ncu CSV has no kernel name column: %s" % header[:12])
    metric_cols = [(i, h) for i, h in enumerate(header) if "__" in h]
    launches = []
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        if not row[0].strip().isdigit():  # the units row
            continue
        launches.append({
            "id": int(row[0]),
            "name": row[name_col],
            "kernel": base_kernel_name(row[name_col]),
            "metrics": {h: _number(row[i]) for i, h in metric_cols},
        })
    return launches


# ---- matching and rows -------------------------------------------------------------------------

def sim_value(launch: profile_data.Launch, op: str, quantity: str) -> int:
    if quantity == "conflicts":
        return launch.total(op, "wavefronts") - launch.total(op, "ideal")
    return launch.total(op, quantity)


def match_launches(sim: List[profile_data.Launch], gpu: List[Dict[str, object]]):
    """Pairs (kernel, k, sim launch or None, ncu launch or None): the k-th launch of each kernel on
    one side with the k-th on the other, in the order of the first side that has it. A None says
    that one side launched that kernel fewer times."""
    by_sim, by_gpu = defaultdict(list), defaultdict(list)
    order = []
    for s in sim:
        name = base_kernel_name(s.kernel)
        by_sim[name].append(s)
        order.append((name, len(by_sim[name]) - 1))
    for g in gpu:
        by_gpu[g["kernel"]].append(g)
        key = (g["kernel"], len(by_gpu[g["kernel"]]) - 1)
        if key not in order:
            order.append(key)
    pairs = []
    for name, k in order:
        s = by_sim[name][k] if k < len(by_sim[name]) else None
        g = by_gpu[name][k] if k < len(by_gpu[name]) else None
        pairs.append((name, k, s, g))
    return pairs


def diff_pct(sim: Optional[float], gpu: Optional[float]) -> Optional[float]:
    if sim is None or gpu is None:
        return None
    if gpu == 0:
        return 0.0 if sim == 0 else float("inf")
    return 100.0 * (sim - gpu) / gpu


def within(sim, gpu) -> Optional[bool]:
    d = diff_pct(sim, gpu)
    return None if d is None else abs(d) <= 100 * TOLERANCE


def explain(metric: str, sim, gpu) -> str:
    """The known model gap a mismatch on this counter may come from, or ''."""
    if metric in NCU_ONLY:
        return "ncu only (the simulator counts memory instructions alone)" if metric == "smsp__inst_executed.sum" else "ncu only"
    if within(sim, gpu) is not False:
        return ""
    if metric in (ATOM, RED):
        return "red vs atom: compare the sum"
    if metric.startswith("smsp__sass_inst_executed_op_shared_ld") or metric.endswith("mem_shared_op_ld.sum"):
        return SHARED_LD_GAP
    return ""


def rows_for(case: Dict[str, object], sim: List[profile_data.Launch], gpu: Optional[List[Dict[str, object]]]):
    """Row dicts for one (puzzle, variant, n, tpb): one per launch and counter."""
    rows = []
    pairs = match_launches(sim, gpu if gpu is not None else [])
    for name, k, s, g in pairs:
        base = dict(case, kernel=name, launch=k,
                    note="" if (s is not None and (gpu is None or g is not None))
                    else ("no simulator launch" if s is None else "no ncu launch"))
        gm = g["metrics"] if g is not None else {}
        for metric, op, q in SIM_METRICS:
            sv = sim_value(s, op, q) if s is not None else None
            rows.append(dict(base, counter=metric, sim=sv, ncu=gm.get(metric)))
        atom_sim = s.total("global_atom", "inst") if s is not None else None
        if gpu is not None:
            for metric in (ATOM, RED):
                rows.append(dict(base, counter=metric, sim=None, ncu=gm.get(metric)))
        both = None
        if g is not None and gm.get(ATOM) is not None and gm.get(RED) is not None:
            both = gm[ATOM] + gm[RED]
        rows.append(dict(base, counter=ATOM_RED, sim=atom_sim, ncu=both))
        if gpu is not None:
            for metric in NCU_ONLY:
                rows.append(dict(base, counter=metric, sim=None, ncu=gm.get(metric)))
    for r in rows:
        r["diff_pct"] = diff_pct(r["sim"], r["ncu"])
        r["ok"] = within(r["sim"], r["ncu"])
        r["why"] = explain(r["counter"], r["sim"], r["ncu"])
    return rows


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return "%.4g" % v
    return "%d" % v


def fmt_row(r) -> str:
    d = r["diff_pct"]
    mark = {True: "ok", False: "OFF", None: ""}[r["ok"]]
    dtext = "-" if d is None else ("inf" if d == float("inf") else "%+.2f%%" % d)
    tail = "  ".join(t for t in (r["note"], r["why"]) if t)
    return "%-4s %-14s %8d %4d %-18s #%d %-58s %14s %14s %9s %-3s %s" % (
        r["puzzle"], r["variant"], r["n"], r["tpb"], r["kernel"], r["launch"], r["counter"],
        fmt(r["sim"]), fmt(r["ncu"]), dtext, mark, tail)


def summary(rows) -> List[Tuple[str, int, int, int, Optional[float]]]:
    """Per counter: (counter, rows compared, within 2 %, outside, worst |difference| %)."""
    out = []
    for metric in [m for m, _, _ in SIM_METRICS] + [ATOM_RED]:
        rs = [r for r in rows if r["counter"] == metric and r["ok"] is not None]
        good = sum(1 for r in rs if r["ok"])
        worst = max((abs(r["diff_pct"]) for r in rs), default=None)
        out.append((metric, len(rs), good, len(rs) - good, worst))
    return out


# ---- cases -------------------------------------------------------------------------------------

def cases_for(variant, sizes: Optional[List[int]]) -> List[Tuple[int, int]]:
    """Two (n, tpb) per variant: a tpb the variant accepts (256 where it can), and for one-block
    variants the largest n plus a not-power-of-two one below it; for the others MULTI_BLOCK_SIZES
    (or --sizes, capped at the variant's limit)."""
    tpb = PREFERRED_TPB if PREFERRED_TPB in variant.tpb else max(t for t in variant.tpb if t <= 1024)
    limit = variant.n_limit(tpb)
    if sizes:
        ns = [n if limit is None else min(n, limit) for n in sizes]
    elif limit is not None:
        ns = [limit, max(1, limit * 3 // 4 + 3)]
    else:
        ns = list(MULTI_BLOCK_SIZES)
    out = []
    for n in ns:
        if (n, tpb) not in out:
            out.append((n, tpb))
    return out


# ---- running -----------------------------------------------------------------------------------

def find_tool(name: str) -> Optional[str]:
    exe = shutil.which(name)
    if exe:
        return exe
    for d in ("/usr/local/cuda/bin", "/opt/cuda/bin", "/opt/nvidia/nsight-compute"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def run_logged(cmd: List[str], log, env=None, timeout=600) -> subprocess.CompletedProcess:
    print("$ " + " ".join(cmd), flush=True)
    log.write("$ %s\n" % " ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)
    log.write(proc.stdout + "\n")
    log.flush()
    return proc


def configure(root: Path, build: Path, cuda: bool, log) -> None:
    """Configure the build dir; with the GPU targets when `cuda` (PUZZLES_CUDA=ON fails loudly
    without nvcc, rather than quietly leaving them out). The simulator's side alone takes a build
    dir as it is (its CPU targets are always there)."""
    if not cuda:
        bld.ensure_configured(root, build)
        return
    cache = build / "CMakeCache.txt"
    if bld.is_configured(build) and "PUZZLES_CUDA:STRING=ON" in cache.read_text(errors="replace"):
        return
    proc = run_logged(bld.configure_cmd(root, build, ["-DPUZZLES_CUDA=ON"]), log)
    if proc.returncode != 0:
        print(proc.stdout[-4000:])
        raise BuildError("configure failed")


def sim_run(binary: Path, case_args: List[str], profile: Path) -> Tuple[subprocess.CompletedProcess, List]:
    # The H200's SM count: kernels that size their grid by it (p13 --single-pass) launch as many
    # blocks on the simulator as on the GPU.
    env = dict(os.environ, CUDASIM_CHECKS="0", CUDASIM_PROFILE=str(profile), CUDASIM_SM_COUNT=str(SM_COUNT))
    proc = subprocess.run([str(binary)] + case_args + ["--schedules", "forward"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, env=env, timeout=900)
    return proc, (profile_data.load(profile) if profile.exists() else [])


SM_COUNT = 132  # NVIDIA H200 (bench/results/p12-h200-2026-11-30.md names the device)


def verdict(output: str) -> str:
    """The driver's own verdict (its RESULT line), or "none" when it printed none: counters of a run
    that did not pass describe a kernel that did not do the work."""
    for line in reversed(output.splitlines()):
        if line.startswith("RESULT "):
            return str(json.loads(line[len("RESULT "):]).get("verdict", "none"))
    return "none"


def ncu_run(ncu: str, binary: Path, case_args: List[str], raw: Path, stem: str, log):
    """Profile every launch of the GPU driver; returns (parsed launches, the CSV text)."""
    report = raw / (stem + ".ncu-rep")
    proc = run_logged([ncu, "--metrics", ",".join(METRICS), "--target-processes", "all", "-f", "-o", str(report),
                       str(binary)] + case_args, log)
    if proc.returncode != 0 or not report.exists() or verdict(proc.stdout) != "pass":
        return None, proc.stdout
    # Kernel names come out demangled with their parameters; base_kernel_name reduces them.
    imp = run_logged([ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"], log)
    (raw / (stem + ".csv")).write_text(imp.stdout, encoding="utf-8")
    if imp.returncode != 0:
        return None, imp.stdout
    return parse_ncu_csv(imp.stdout), imp.stdout


def git_commit(root: Path) -> str:
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    return (proc.stdout.strip() or "unknown") + (" (with uncommitted changes)" if dirty else "")


def write_report(path: Path, rows, meta: Dict[str, str], sim_only: bool) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("# Simulator profiler against Nsight Compute\n\n" if not sim_only
                else "# Simulator profiler counts (no GPU run)\n\n")
        for k, v in meta.items():
            f.write("- %s: %s\n" % (k, v))
        f.write("\nThe simulator's side: the pNN_solution_cpu driver with CUDASIM_CHECKS=0 CUDASIM_PROFILE=FILE "
                "--schedules forward; ncu's: pNN_solution_gpu under `ncu --metrics ...`, the same --seed. "
                "Launches are matched by kernel name and order. Target: within %d %%.\n\n" % int(100 * TOLERANCE))
        if not sim_only:
            f.write("## Summary per counter\n\n| counter | compared | within %d %% | outside | worst |diff| |\n"
                    "|---|---|---|---|---|\n" % int(100 * TOLERANCE))
            for metric, n, good, bad, worst in summary(rows):
                f.write("| %s | %d | %d | %d | %s |\n" % (metric, n, good, bad,
                                                         "-" if worst is None else "%.2f %%" % worst))
        f.write("\n## Known gaps of the model\n\n")
        for text in GAPS.values():
            f.write("- %s\n" % text)
        missing = sorted({(r["puzzle"], r["variant"], r["n"], r["kernel"], r["launch"], r["note"]) for r in rows if r["note"]})
        if missing:
            f.write("\n## Launch counts that differ\n\n")
            for p, v, n, k, i, note in missing:
                f.write("- %s %s n=%d: %s #%d: %s\n" % (p, v, n, k, i, note))
        f.write("\n## Rows\n\n| puzzle | variant | n | tpb | kernel | launch | counter | simulator | ncu | diff | within | note |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            d = r["diff_pct"]
            f.write("| %s | %s | %d | %d | %s | %d | %s | %s | %s | %s | %s | %s |\n" % (
                r["puzzle"], r["variant"], r["n"], r["tpb"], r["kernel"], r["launch"], r["counter"], fmt(r["sim"]),
                fmt(r["ncu"]), "-" if d is None else "%+.2f %%" % d, {True: "yes", False: "**no**", None: ""}[r["ok"]],
                "; ".join(t for t in (r["note"], r["why"]) if t)))


def write_csv(path: Path, rows) -> None:
    keys = ["puzzle", "variant", "n", "tpb", "kernel", "launch", "counter", "sim", "ncu", "diff_pct", "ok", "note", "why"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in keys})


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench/results", help="folder for the report, the CSV and raw/ (default bench/results)")
    ap.add_argument("--puzzles", default=",".join(PUZZLES), help="comma-separated (default %(default)s)")
    ap.add_argument("--variants", default="", help="only these variant names, comma-separated")
    ap.add_argument("--sizes", default="", help="n values instead of the defaults (capped at each variant's limit)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--sim-only", action="store_true", help="the simulator's side alone (no GPU, nvcc or ncu needed)")
    ap.add_argument("--build", default="build-ncu-compare", help="build folder (default %(default)s)")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                    help="simulator runs in parallel (each is single-threaded when profiled)")
    args = ap.parse_args(argv)

    root = repo_root()
    puzzles = discover(root)
    names = [p for p in args.puzzles.split(",") if p]
    unknown = [p for p in names if p not in puzzles]
    if unknown:
        print("unknown puzzle(s): %s (have %s)" % (", ".join(unknown), ", ".join(sorted(puzzles))))
        return 2
    wanted = {v for v in args.variants.split(",") if v}
    sizes = [int(s) for s in args.sizes.split(",") if s] or None

    ncu = None
    if not args.sim_only:
        missing = []
        if not bld.gpu_present():
            missing.append("a GPU (nvidia-smi -L lists none)")
        if not find_tool("nvcc"):
            missing.append("nvcc (the CUDA toolkit)")
        ncu = find_tool("ncu")
        if not ncu:
            missing.append("ncu (Nsight Compute)")
        if missing:
            print("ncu_compare: missing %s; --sim-only runs the simulator's side alone" % " and ".join(missing))
            return 2

    out_dir = Path(args.out) if os.path.isabs(args.out) else root / args.out
    raw = out_dir / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    build = root / args.build
    log = open(out_dir / "ncu-compare.log", "w", encoding="utf-8")
    t_start = time.monotonic()

    cases = []  # (puzzle, variant, n, tpb)
    for name in names:
        for v in puzzles[name].variants.values():
            if wanted and v.name not in wanted:
                continue
            for n, tpb in cases_for(v, sizes):
                cases.append((name, v.name, n, tpb))
    if not cases:
        print("no variant matches --variants %s" % args.variants)
        return 2

    try:
        configure(root, build, not args.sim_only, log)
        binaries = {}
        for name in sorted({c[0] for c in cases}):
            for backend in (("cpu",) if args.sim_only else ("cpu", "gpu")):
                target = puzzles[name].target(True, backend)
                print("building %s" % target, flush=True)
                bld.build_target(root, build, target, puzzles[name].source(True))
                binaries[(name, backend)] = bld.binary_path(build, target)
    except BuildError:
        return 2

    def case_args(c):
        return ["--variant", c[1], "--n", str(c[2]), "--tpb", str(c[3]), "--seed", str(args.seed)]

    def stem(c):
        return "%s-%s-n%d-tpb%d" % c

    # The simulator's runs are independent CPU processes: run them side by side, while ncu (one GPU) runs below.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
    sim_futures = {c: pool.submit(sim_run, binaries[(c[0], "cpu")], case_args(c), raw / (stem(c) + ".sim.jsonl"))
                   for c in cases}
    gpu_results = {}
    if not args.sim_only:
        for c in cases:
            gpu_results[c] = ncu_run(ncu, binaries[(c[0], "gpu")], case_args(c), raw, stem(c), log)

    rows = []
    failed = False
    for c in cases:
        proc, sim = sim_futures[c].result()
        log.write("$ CUDASIM_CHECKS=0 CUDASIM_PROFILE=%s %s %s --schedules forward\n%s\n" % (
            raw / (stem(c) + ".sim.jsonl"), binaries[(c[0], "cpu")], " ".join(case_args(c)), proc.stdout))
        print("sim  %-4s %-14s n=%-8d tpb=%-4d exit %d, %d launches" % (c + (proc.returncode, len(sim))))
        if proc.returncode != 0 or verdict(proc.stdout) != "pass":
            print("the simulator's run of %s did not pass (verdict %s): its counters are left out" % (
                stem(c), verdict(proc.stdout)))
            failed = True
            sim = []
        gpu = None
        if not args.sim_only:
            gpu, text = gpu_results[c]
            if gpu is None:
                print("ncu failed for %s (see %s):\n%s" % (stem(c), out_dir / "ncu-compare.log", text[-2000:]))
                failed = True
                gpu = []
            elif len(gpu) != len(sim):
                print("note: %s: the simulator recorded %d launches, ncu %d" % (stem(c), len(sim), len(gpu)))
        case = dict(puzzle=c[0], variant=c[1], n=c[2], tpb=c[3])
        rs = rows_for(case, sim, gpu)
        for r in rs:
            print(fmt_row(r))
        rows += rs
    pool.shutdown()
    log.close()

    if not args.sim_only:
        print("\nsummary per counter (target: within %d %%):" % int(100 * TOLERANCE))
        for metric, n, good, bad, worst in summary(rows):
            print("  %-58s %4d compared, %4d within, %4d outside, worst %s" % (
                metric, n, good, bad, "-" if worst is None else "%.2f %%" % worst))
    print("\nknown gaps of the model:")
    for text in GAPS.values():
        print("  - " + text)

    device = "none (--sim-only)"
    ncu_version = "-"
    if not args.sim_only:
        device = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], stdout=subprocess.PIPE,
                                text=True).stdout.strip().splitlines()[0]
        ncu_version = subprocess.run([ncu, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
    slug = re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")
    slug = "sim-only" if args.sim_only else (re.sub(r"^nvidia-", "", slug) or "gpu")
    base = out_dir / ("ncu-compare-%s-%s" % (slug, time.strftime("%Y-%m-%d")))
    meta = {"device": device, "ncu": ncu_version, "commit": git_commit(root), "date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "seed": str(args.seed), "seconds": "%.0f" % (time.monotonic() - t_start)}
    write_report(base.with_suffix(".md"), rows, meta, args.sim_only)
    write_csv(base.with_suffix(".csv"), rows)
    print("wrote %s, %s and %s/" % (base.with_suffix(".md"), base.with_suffix(".csv"), raw))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
