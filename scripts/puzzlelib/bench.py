"""`bench`: time a puzzle's variants on an NVIDIA GPU, next to a library baseline (CUB) and the
copy bandwidth, and write the table to bench/results/.

The driver does the measuring (`pNN_gpu --bench`, harness/include/harness/bench.h) and prints
`BENCH {json}` lines: one `device` header, one `row` per measurement, an `abort` when a CUDA
error made the GPU context unusable. This module runs it, restarts it without the variant that
crashed, derives the speedup columns from the raw times, prints the table and writes
<puzzle>-<gpu>-<date>.md and .json (and a .png bar chart when matplotlib is installed).
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

from . import build as bld
from .common import PROG, BuildError, UsageError, build_dir, err, out, quote_cmd, rel
from .driver import run_driver
from .options import positive_int, seed_int
from .request import Verb, parse_request, pick

BENCH_LINE = re.compile(r"^BENCH (\{.*\})\s*$")
DEFAULT_SIZES = "4194304,268435456"
DEFAULT_TIMEOUT_S = 1800.0


def sizes_arg(text: str) -> List[int]:
    sizes = []
    for item in text.split(","):
        item = item.strip()
        m = re.match(r"^2\^(\d+)$", item)
        value = 1 << int(m.group(1)) if m else int(item)
        if value < 1 or value > 1 << 30:
            raise ValueError(text)
        sizes.append(value)
    if not sizes:
        raise ValueError(text)
    return sizes


def nonnegative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def flush_choice(text: str) -> str:
    if text not in ("auto", "always", "never"):
        raise UsageError("--flush must be auto, always or never, not %r" % text)
    return text



BENCH_HELP = """\
usage: {prog} bench pNN [--VARIANT ...] [--solution] [--sizes N,N] [--runs R] [--tpb T] [--out DIR]

Time a puzzle's variants on an NVIDIA GPU: the median of R runs after warm-up, with CUDA events,
next to the library's version (CUB) and a device-to-device copy of the same bytes, measured in the
same process. Every result is checked before it is timed; a wrong one is reported, not timed.
Writes the table to DIR/<puzzle>-<gpu>-<date>.md and .json, and a bar chart (.png) when
matplotlib is installed. Needs a GPU: the CPU simulator's timings say nothing about one.

  --VARIANT          only these variants (default: all)
  --solution         time the reference solution instead of your file
  --sizes N,N        input sizes (default {sizes}: 2^22, the 2007 paper's size, and 2^28)
  --runs R           timed runs per variant and size (default 30)
  --warmup W         untimed runs before them (default 3)
  --tpb T            threads per block for every variant (default 256)
  --flush MODE       L2 flush before each timed run: auto (inputs under 4x the L2), always, never
  --out DIR          where the results go (default bench/results)
  --no-chart         do not draw the .png
  --binary PATH      run this driver binary instead of building one
"""

BENCH = Verb("bench", dict(pick("--solution", "--backend"), **{
    "--sizes": sizes_arg, "--runs": positive_int, "--warmup": nonnegative_int, "--tpb": positive_int,
    "--seed": seed_int, "--flush": flush_choice, "--out": str, "--binary": str, "--no-chart": None}),
    BENCH_HELP.replace("{sizes}", DEFAULT_SIZES), missing="bench needs a puzzle, e.g. `{prog} bench p12`.")

NEEDS_GPU = """\
bench measures time on an NVIDIA GPU, but {why}.
The CPU simulator runs every CUDA thread as a fiber: its timings say nothing about a GPU.
Here, `{prog} run` and `{prog} check` test your kernels. Run the benchmark on a machine
with an NVIDIA GPU and the CUDA toolkit: `{prog} bench {puzzle}` (or `pixi run -e cuda bench {puzzle}`)."""


def gpu_slug(name: str) -> str:
    s = re.sub(r"(?i)\bnvidia\b", "", name).lower()
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s or "gpu"


# ---------------------------------------------------------------------------------- running

class BenchRun:
    """What the driver reported over one or more processes."""

    def __init__(self):
        self.header = None  # type: Optional[dict]
        self.rows = {}  # type: Dict[tuple, dict]   (variant, n) -> row, first measurement kept
        self.lines = []  # type: List[str]

    def add_row(self, row: dict) -> None:
        key = (row.get("variant"), row.get("n"))
        if key not in self.rows:
            self.rows[key] = row


def run_bench(binary: Path, sizes: List[int], variants: List[str], extra: List[str], timeout: float,
              echo=out) -> tuple:
    """Runs the driver until every (variant, size) has a row; a variant that aborts the process
    is left out of the restarts. Returns (BenchRun, exit code of the last process, its output)."""
    result = BenchRun()
    remaining_sizes = list(sizes)
    remaining = list(variants)
    crashed = {}  # variant -> (n, message)
    while True:
        aborts = []

        def on_line(line: str) -> None:
            m = BENCH_LINE.match(line)
            if not m:
                result.lines.append(line)
                if line.startswith("timing "):  # progress: shown in place on a terminal only
                    bld.status(line)
                else:
                    bld.status("")
                    echo(line)
                return
            try:
                data = json.loads(m.group(1))
            except ValueError:
                return
            kind = data.get("type")
            if kind == "device":
                if result.header is None:
                    result.header = data
            elif kind == "row":
                result.add_row(data)
            elif kind == "abort":
                aborts.append(data)

        cmd = [str(binary), "--bench", "--sizes", ",".join(str(n) for n in remaining_sizes)]
        if remaining:
            cmd += ["--variants", ",".join(remaining)]
        outcome = run_driver(cmd + extra, timeout, on_line=on_line)
        if outcome.timed_out:
            echo("the benchmark did not finish within %g s (PUZZLES_BENCH_TIMEOUT sets the limit)" % timeout)
            return result, None, outcome
        if outcome.returncode != 4 or not aborts:
            return result, outcome.returncode, outcome
        bad, n = aborts[-1].get("variant"), aborts[-1].get("n")
        crashed[bad] = (n, aborts[-1].get("message", ""))
        if bad not in remaining:  # the copy or the baseline crashed: nothing sensible to retry
            return result, outcome.returncode, outcome
        remaining = [v for v in remaining if v != bad]
        if n in remaining_sizes:  # the sizes before it are complete
            remaining_sizes = remaining_sizes[remaining_sizes.index(n):]
        for size in remaining_sizes:
            if size != n:
                result.add_row({"type": "row", "variant": bad, "kind": "variant", "n": size, "status": "error",
                                "message": "not run: it crashed the GPU context at n = %d" % n})
        if not remaining:
            return result, outcome.returncode, outcome
        echo("restarting without %s (a CUDA error at n = %d left the GPU context unusable)" % (bad, n))


# ---------------------------------------------------------------------------------- the table

def derive(run: BenchRun, order: List[str]) -> List[dict]:
    """Rows in table order (per size: copy, baseline, variants in puzzle order) with the derived
    columns: step and cumulative speedup, % of the baseline, % of copy bandwidth."""
    header = run.header or {}
    base = header.get("base") or ""
    sizes = sorted({r["n"] for r in run.rows.values()})
    rank = {name: i for i, name in enumerate(order)}
    table = []
    for n in sizes:
        rows = [dict(r) for (v, size), r in run.rows.items() if size == n]
        kinds = {"copy": 0, "baseline": 1, "variant": 2}
        rows.sort(key=lambda r: (kinds.get(r.get("kind"), 3), rank.get(r.get("variant"), len(rank))))

        def ok(r):
            return r.get("status") == "ok" and isinstance(r.get("ms"), (int, float)) and r["ms"] > 0

        copy = next((r for r in rows if r.get("kind") == "copy" and ok(r)), None)
        lib = next((r for r in rows if r.get("kind") == "baseline" and ok(r)), None)
        base_row = next((r for r in rows if r.get("kind") == "variant" and r.get("variant") == base and ok(r)), None)
        prev = None
        for r in rows:
            r["step"] = r["cumulative"] = r["pct_baseline"] = r["pct_copy"] = None
            if ok(r):
                if r.get("kind") == "variant":
                    if prev is not None:
                        r["step"] = prev["ms"] / r["ms"]
                    prev = r
                    if lib is not None:
                        r["pct_baseline"] = 100.0 * lib["ms"] / r["ms"]
                if base_row is not None and r.get("kind") != "copy":
                    r["cumulative"] = base_row["ms"] / r["ms"]
                if copy is not None and r.get("kind") != "copy":
                    r["pct_copy"] = 100.0 * r["gbps"] / copy["gbps"]
            table.append(r)
    return table


def evaluate_targets(header: dict, table: List[dict]) -> List[dict]:
    targets = []
    for t in (header or {}).get("targets") or []:
        row = next((r for r in table if r.get("variant") == t.get("variant") and r.get("n") == t.get("n")), None)
        pct = row.get("pct_baseline") if row else None
        targets.append({"variant": t.get("variant"), "n": t.get("n"), "fraction": t.get("fraction"),
                        "pct": pct, "met": None if pct is None else pct + 1e-9 >= 100.0 * t["fraction"]})
    return targets


def size_label(n: int) -> str:
    k = int(math.log2(n)) if n > 0 else 0
    exact = " (2^%d)" % k if n == 1 << k else ""
    return "%d%s" % (n, exact)


def fmt(value, pattern: str, empty: str = "") -> str:
    return empty if value is None else pattern % value


def markdown(run: BenchRun, table: List[dict], targets: List[dict], meta: dict) -> str:
    h = run.header or {}
    lib = h.get("baseline") or "baseline"
    base = h.get("base") or "-"
    ref = h.get("reference_label") or ""
    lines = ["# %s benchmark on %s" % (meta["puzzle"], h.get("name", "?")), ""]
    lines.append("- source: `%s`%s" % (meta["source"], " (the reference solution)" if meta["solution"] else ""))
    lines.append("- date: %s; command: `%s`" % (meta["date"], meta["command"]))
    runtime = h.get("cuda_runtime") or 0
    lines.append("- device: %s, sm_%s, %s SMs, %.1f MiB L2, %.1f GiB; CUDA runtime %d.%d, driver %d.%d"
                 % (h.get("name"), str(h.get("sm", "")).replace(".", ""), h.get("sms"),
                    (h.get("l2_bytes") or 0) / 1048576.0, (h.get("memory_bytes") or 0) / 1073741824.0,
                    runtime // 1000, runtime % 1000 // 10, (h.get("cuda_driver") or 0) // 1000,
                    (h.get("cuda_driver") or 0) % 1000 // 10))
    lines.append("- method: median of %s timed runs after %s warm-ups, each between two CUDA events on the default "
                 "stream; %d threads per block; L2 flush: %s (reads a buffer twice the L2's size before each timed run "
                 "while the input is under 4x the L2); every result checked before and after timing"
                 % (h.get("runs"), h.get("warmup"), h.get("tpb", 0), h.get("flush")))
    lines.append("- GB/s: the bytes the operation must move (each input element read once) / median time. copy: "
                 "`cudaMemcpy` device to device of the whole input, counted as read + write. %s: `%s`, same input, "
                 "same process." % (lib, h.get("baseline_label", lib)))
    lines.append("- step: speedup over the row above; vs %s: speedup over %s; %% of %s and %% of copy: share of "
                 "their speed." % (base, base, lib))
    if ref:
        lines.append("- %s: %s (for the story, not for comparison: another GPU, another decade)."
                     % (ref, h.get("reference_note", "")))
    for n in sorted({r["n"] for r in table}):
        rows = [r for r in table if r["n"] == n]
        flushed = any(r.get("l2_flushed") for r in rows)
        lines += ["", "## n = %s, %.1f MiB%s" % (size_label(n), n * h.get("element_bytes", 4) / 1048576.0,
                                                    ", L2 flushed" if flushed else ""), ""]
        head = ["variant", "ms", "GB/s", "step", "vs " + base, "% of " + lib, "% of copy"] + ([ref + " GB/s"] if ref else [])
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" + "---:|" * (len(head) - 1))
        for r in rows:
            if r.get("status") != "ok":
                what = {"wrong": "wrong result, not timed", "refused": "not run"}.get(r.get("status"), "CUDA error")
                cells = ["`%s`" % r["variant"], what + ": " + str(r.get("message", "")).replace("|", "\\|")]
                cells += [""] * (len(head) - len(cells))
            else:
                gbps = "%.1f%s" % (r["gbps"], " (read + write)" if r.get("kind") == "copy" else "")
                cells = ["`%s`" % r["variant"], "%.4f" % r["ms"], gbps, fmt(r["step"], "%.2fx"),
                         fmt(r["cumulative"], "%.2fx"), fmt(r["pct_baseline"], "%.1f %%"),
                         fmt(r["pct_copy"], "%.1f %%", "100.0 %" if r.get("kind") == "copy" else "")]
                if ref:
                    cells.append(fmt(r.get("reference_gbps"), "%.3f"))
            lines.append("| " + " | ".join(cells) + " |")
    if targets:
        lines += ["", "## Targets", ""]
        for t in targets:
            lines.append("- `%s` at least %d %% of %s at n = %s: %s" % (
                t["variant"], round(100 * t["fraction"]), lib, size_label(t["n"]),
                "not measured" if t["met"] is None else "%s (%.1f %%)" % ("met" if t["met"] else "missed", t["pct"])))
    return "\n".join(lines) + "\n"


def print_table(table: List[dict], header: dict) -> None:
    lib = header.get("baseline") or "baseline"
    base = header.get("base") or "-"
    for n in sorted({r["n"] for r in table}):
        out("")
        out("n = %s" % size_label(n))
        out("  %-9s %10s %9s %7s %8s %9s %9s" % ("variant", "ms", "GB/s", "step", "vs " + base, "% " + lib, "% copy"))
        for r in (r for r in table if r["n"] == n):
            if r.get("status") != "ok":
                out("  %-9s %s: %s" % (r["variant"], r.get("status"), r.get("message", "")))
                continue
            out("  %-9s %10.4f %9.1f %7s %8s %9s %9s" % (
                r["variant"], r["ms"], r["gbps"], fmt(r["step"], "%.2fx", "-"), fmt(r["cumulative"], "%.2fx", "-"),
                fmt(r["pct_baseline"], "%.1f", "-"), fmt(r["pct_copy"], "%.1f", "-")))


# ---------------------------------------------------------------------------------- command

def cmd_bench(root: Path, args: List[str]) -> int:
    req = parse_request(root, args, BENCH)
    if req is None:
        return 0
    puzzle, solution, backend = req.puzzle, req.solution, req.backend
    if backend == "cpu":
        err(NEEDS_GPU.format(why="--backend cpu asks for the CPU simulator", prog=PROG, puzzle=puzzle.name))
        return 2

    binary_opt = req.get("--binary")
    if binary_opt:
        binary = Path(binary_opt)
        source = "%s (binary %s)" % (puzzle.source(solution), rel(binary, root))
    else:
        if not bld.gpu_present():
            err(NEEDS_GPU.format(why="`nvidia-smi -L` lists no GPU on this machine", prog=PROG, puzzle=puzzle.name))
            return 2
        build = build_dir(root)
        target = puzzle.target(solution, "gpu")
        source = puzzle.source(solution)
        try:
            bld.build_target(root, build, target, source)
        except bld.TargetMissing:
            err(bld.NO_GPU_TARGET % (target, rel(build, root), rel(build, root)))
            return 2
        except BuildError:
            return 2
        binary = bld.binary_path(build, target)

    sizes = req.get("--sizes") or sizes_arg(DEFAULT_SIZES)
    extra = ["--tpb", str(req.get("--tpb") or 256), "--runs", str(req.get("--runs") or 30),
             "--warmup", str(3 if req.get("--warmup") is None else req.get("--warmup")),
             "--flush", req.get("--flush") or "auto", "--seed", str(req.get("--seed") or 1)]
    order = list(puzzle.variants)
    names = [v.name for v in req.variants] or order
    try:
        timeout = float(os.environ.get("PUZZLES_BENCH_TIMEOUT", DEFAULT_TIMEOUT_S))
    except ValueError:
        raise UsageError("PUZZLES_BENCH_TIMEOUT must be a number of seconds")
    out("Benchmark %s: %s" % (puzzle.name, puzzle.title))
    out("source: %s" % source)
    run, rc, outcome = run_bench(binary, sizes, names, extra, timeout)
    if run.header is None:
        if rc == 2:
            err("The driver refused to benchmark (its message is above).")
            return 2
        err("The driver printed no benchmark header (exit %s): %s" % (rc, quote_cmd(outcome.cmd)))
        return 1 if rc != 2 else 2

    table = derive(run, order)
    targets = evaluate_targets(run.header, table)
    print_table(table, run.header)
    command = " ".join([PROG, "bench"] + list(args))
    date = datetime.date.today().isoformat()
    meta = {"puzzle": puzzle.name, "title": puzzle.title, "source": source, "solution": solution,
            "date": date, "command": command}
    out_dir = Path(req.get("--out") or (root / "bench" / "results"))
    if not out_dir.is_absolute():
        out_dir = Path.cwd() / out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "%s-%s-%s%s" % (puzzle.name, gpu_slug(run.header.get("name", "gpu")), date, "" if solution else "-learner")
    json_path, md_path, png_path = (out_dir / (stem + ext) for ext in (".json", ".md", ".png"))
    data = dict(meta, device=run.header, rows=table, targets=targets)
    json_path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    md_path.write_text(markdown(run, table, targets, meta), encoding="utf-8")
    out("")
    for t in targets:
        if t["met"] is not None:
            out("target: %s >= %d %% of %s at n = %s: %s (%.1f %%)" % (
                t["variant"], round(100 * t["fraction"]), run.header.get("baseline"), size_label(t["n"]),
                "met" if t["met"] else "missed", t["pct"]))
    out("wrote %s and %s" % (rel(md_path, root), rel(json_path, root)))
    if not req.get("--no-chart"):
        chart = root / "scripts" / "bench_chart.py"
        if importlib.util.find_spec("matplotlib") is None:
            out("(no chart: matplotlib is not installed. `python3 -m pip install matplotlib`, then "
                "`python3 scripts/bench_chart.py %s %s`)" % (rel(json_path, root), rel(png_path, root)))
        elif chart.is_file():
            proc = subprocess.run([sys.executable, str(chart), str(json_path), str(png_path)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            if proc.returncode == 0:
                out("wrote %s" % rel(png_path, root))
            else:
                err("the chart failed:\n" + proc.stdout)
    timed = [r for r in table if r.get("kind") == "variant"]
    if rc != 0 or any(r.get("status") in ("wrong", "error") for r in timed):  # rc None: timed out
        out("Some variants were not timed: a wrong result or a CUDA error (see the table). "
            "`%s check %s` finds out why." % (PROG, puzzle.name))
        return 1
    return 0
