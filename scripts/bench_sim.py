#!/usr/bin/env python3
"""How fast is the CPU simulator? Launched CUDA threads per second of the p14 --complete
reference, on one worker thread (one core), with each fiber implementation (Boost.Context and
the zero-dependency ucontext fallback): the fast path (one schedule, memory checks off), one
schedule with every memory check on, and the three schedules that `run` and `check` use; the
fast path again on every core; next to the same algorithm as plain C++ loops
(bench/sim/p14_loops.cpp: the floor, what the work costs with no fibers and no checks) on one and
on every core, numba's CUDA simulator (scripts/numba_scan.py), and two OpenCL implementations
running the same three kernels written in OpenCL C (bench/sim/p14_complete.cl, host program
bench/sim/p14_opencl.cpp: the same work-group size and launches, barriers where the CUDA kernels
have __syncthreads(), local memory where they have shared memory): PoCL, which compiles them to
work-item loops, on one core and on every core, and Oclgrind, an OpenCL simulator that
interprets them, on one core, plain and with its data-race detector on (the counterpart of
cudasim's every-check-on row), at a smaller n (`--oclgrind-n`) next to cudasim at that n. Rows
whose tool is not installed are skipped with the command that installs it. Prints a Markdown
report naming the machine.

    python3 -m pip install numba          # once, for the comparison (PyPI)
    sudo apt-get install pocl-opencl-icd ocl-icd-opencl-dev oclgrind   # once, for the OpenCL rows
    python3 scripts/bench_sim.py [--n 1048576] [--tpb 256] [--numba-n 8192] [--oclgrind-n 65536]
                                 [--runs 3] [--no-numba] [--no-opencl] [--no-ucontext] [--out FILE]
                                 [--programs | --no-programs] [--matmul-launches 11] [--scan-iters 2]
                                 [--memory-mib 256]

With --programs, only the real programs: bench/sim/matmul_tiled.cu (NVIDIA matrixMul's tiling) and
bench/sim/scan_large.cu (a scan of 6.8 M ints), whole, on every core, with the fast path, the
default (big launches checked on a sample of their blocks) and every block checked; and the host
memory per byte of device memory (bench/sim/memory_figure.cu) with the checks off and on.

What is counted: a *launched thread* is one CUDA thread of one kernel launch (blocks x threads
per block, summed over the launches), counted once however many schedules re-run it. The rate
is launched threads divided by the simulator's time inside the launches (`--stats`; numba:
the wall time of the scan; OpenCL: a work-item counts as a thread, and the time is the sum over
the launches of END - START of their profiling events, CL_QUEUE_PROFILING_ENABLE, leaving out
the program build and PoCL's first-launch compile). cudasim at 3 schedules runs every thread
three times, so its rate per launched thread is about a third of its raw thread-run rate.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
from typing import List
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from puzzlelib import build as bld  # noqa: E402
from puzzlelib.common import BuildError, build_dir, repo_root  # noqa: E402

TARGET = "p14_solution_cpu"
NUMBA_INSTALL = "python3 -m pip install numba"
OPENCL_INSTALL = "sudo apt-get install pocl-opencl-icd ocl-icd-opencl-dev oclgrind"
POCL_PLATFORM = "Portable Computing Language"
# PoCL's limit on the threads (compute units) of its CPU device: POCL_MAX_PTHREAD_COUNT up to
# PoCL 3.x, POCL_CPU_MAX_CU_NUM from 4.0 on. Both are set, so the rows hold for either; the
# device's reported compute units show whether the limit took.
POCL_THREAD_VARS = ("POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_NUM")
SMALL_N_RUNS = 15


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    system = platform.platform()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                system = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return "%s, %d cores, %s, Python %s" % (cpu, os.cpu_count() or 0, system, platform.python_version())


def source_version(root: Path) -> str:
    """The commit whose simulator (harness/) and solutions are measured, when in a git checkout."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True, timeout=30)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "harness", "solutions"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               universal_newlines=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    if head.returncode != 0:
        return ""
    return "commit %s%s" % (head.stdout.strip(), " with local changes" if dirty.stdout.strip() else "")


def run_sim(binary: Path, n: int, tpb: int, schedules: str, checks: bool = True, workers: int = 1) -> dict:
    env = dict(os.environ, CUDASIM_WORKERS=str(workers), CUDASIM_CHECKS="1" if checks else "0")
    cmd = [str(binary), "--variant", "complete", "--n", str(n), "--tpb", str(tpb), "--seed", "1",
           "--schedules", schedules, "--stats"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          env=env, timeout=1800)
    stats = verdict = None
    for line in proc.stdout.splitlines():
        if line.startswith("STATS "):
            stats = json.loads(line[6:])
        elif line.startswith("RESULT "):
            verdict = json.loads(line[7:])["verdict"]
    if proc.returncode != 0 or stats is None:
        raise RuntimeError("simulator run failed (%s):\n%s" % (" ".join(cmd), proc.stdout))
    stats["verdict"] = verdict
    return stats


def sim_rate(binary: Path, n: int, tpb: int, runs: int) -> dict:
    """Median seconds of `runs` runs: the fast path (one schedule, CUDASIM_CHECKS=0), one schedule
    with every memory check on, and the three schedules of `run`/`check`; rates per launched thread."""
    fast = [run_sim(binary, n, tpb, "forward", checks=False) for _ in range(runs)]
    one = [run_sim(binary, n, tpb, "forward") for _ in range(runs)]
    three = [run_sim(binary, n, tpb, "forward,reverse,random") for _ in range(runs)]
    launched = one[0]["threads"]  # one schedule runs each launched thread once
    t0 = statistics.median(r["kernel_seconds"] for r in fast)
    t1 = statistics.median(r["kernel_seconds"] for r in one)
    t3 = statistics.median(r["kernel_seconds"] for r in three)
    return {"n": n, "launched": launched, "runs3": three[0]["threads"], "fibers": one[0]["fibers"],
            "s0": t0, "s1": t1, "s3": t3, "rate0": launched / t0, "rate1": launched / t1, "rate3": launched / t3,
            "verdict": "pass" if all(r["verdict"] == "pass" for r in fast + one + three) else "FAIL"}


def all_cores_rate(binary: Path, n: int, tpb: int, runs: int, workers: int) -> dict:
    """The fast path (one schedule, checks off) with `workers` worker threads."""
    fast = [run_sim(binary, n, tpb, "forward", checks=False, workers=workers) for _ in range(runs)]
    t = statistics.median(r["kernel_seconds"] for r in fast)
    return {"n": n, "launched": fast[0]["threads"], "s": t, "rate": fast[0]["threads"] / t,
            "verdict": "pass" if all(r["verdict"] == "pass" for r in fast) else "FAIL"}


def newest_source(source: Path) -> float:
    """The newest modification time of a bench program and the header both programs share."""
    return max(source.stat().st_mtime, (source.parent / "scan_input.h").stat().st_mtime)


def build_loops(root: Path, folder: Path) -> Path:
    """bench/sim/p14_loops.cpp, compiled with -O2 (the same optimisation as the simulator's build)."""
    source = root / "bench" / "sim" / "p14_loops.cpp"
    binary = folder / "bench" / "p14_loops"
    binary.parent.mkdir(parents=True, exist_ok=True)
    if not binary.is_file() or binary.stat().st_mtime < newest_source(source):
        cxx = os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), "c++")
        subprocess.run([cxx, "-O2", "-std=c++17", "-pthread", str(source), "-o", str(binary)], check=True)
    return binary


def loops_rate(binary: Path, n: int, tpb: int, runs: int, workers: int) -> dict:
    proc = subprocess.run([str(binary), str(n), str(tpb), str(workers), str(max(runs, 5))], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError("plain-loop run failed:\n" + proc.stdout)
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"n": n, "launched": r["threads"], "s": r["seconds"], "rate": r["threads"] / r["seconds"],
            "workers": workers, "verdict": "pass" if r["correct"] else "FAIL"}


def build_opencl(root: Path, folder: Path):
    """bench/sim/p14_opencl.cpp, compiled with -O2 against the OpenCL ICD loader; None (with the
    compiler's complaint on stderr) when the OpenCL headers or library are not installed."""
    source = root / "bench" / "sim" / "p14_opencl.cpp"
    binary = folder / "bench" / "p14_opencl"
    binary.parent.mkdir(parents=True, exist_ok=True)
    if binary.is_file() and binary.stat().st_mtime >= newest_source(source):
        return binary
    cxx = os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), "c++")
    proc = subprocess.run([cxx, "-O2", "-std=c++17", str(source), "-o", str(binary), "-lOpenCL"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.returncode == 0:
        return binary
    # A missing header or library means "not installed"; any other error is a bug to show.
    if "CL/cl.h" in proc.stdout or "-lOpenCL" in proc.stdout:
        sys.stderr.write(proc.stdout)
        return None
    raise RuntimeError("building %s failed:\n%s" % (source, proc.stdout))


def opencl_rate(root: Path, binary: Path, n: int, tpb: int, runs: int, platform_name: str, env: dict = None,
                wrapper=(), warmup: int = 1):
    """One p14_opencl run of `runs` timed scans on the platform whose name contains platform_name
    (median seconds); None when that platform is not there. `wrapper` runs the program under a
    tool (oclgrind), and anything that tool writes to stderr counts as a reported error."""
    cmd = list(wrapper) + [str(binary), "--n", str(n), "--tpb", str(tpb), "--runs", str(runs),
                           "--warmup", str(warmup), "--platform", platform_name,
                           "--kernels", str(root / "bench" / "sim" / "p14_complete.cl")]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, **(env or {})), timeout=3600)
    if proc.returncode in (3, 127):  # p14_opencl: no such platform; 127: no libOpenCL.so.1 to load
        return None
    lines = proc.stdout.strip().splitlines()
    if proc.returncode not in (0, 1) or not lines:
        raise RuntimeError("OpenCL run failed (%s):\n%s%s" % (" ".join(cmd), proc.stdout, proc.stderr))
    r = json.loads(lines[-1])
    verdict = "pass" if r["correct"] else "FAIL"
    if wrapper and proc.stderr.strip():
        verdict = "FAIL"
        sys.stderr.write("%s reported:\n%s\n" % (" ".join(wrapper), proc.stderr[:1500]))
    return {"n": n, "launched": r["threads"], "s": r["seconds"], "rate": r["threads"] / r["seconds"],
            "wall": r["wall_seconds"], "version": r["version"], "device": r["device"],
            "units": r["compute_units"], "verdict": verdict}


def pocl_version(version: str) -> str:
    """"OpenCL 3.0 PoCL 3.1+debian  Linux, ..." -> "3.1+debian"."""
    words = version.split()
    return words[words.index("PoCL") + 1] if "PoCL" in words[:-1] else version


def pocl_thread_var(version: str) -> str:
    """Which of POCL_THREAD_VARS this PoCL reads, for the report."""
    major = pocl_version(version).split(".")[0]
    return POCL_THREAD_VARS[1] if major.isdigit() and int(major) >= 4 else POCL_THREAD_VARS[0]


def numba_rate(root: Path, n: int, tpb: int, runs: int):
    try:
        import numba
    except ImportError:
        return None
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    results = []
    for _ in range(runs):
        proc = subprocess.run([sys.executable, str(root / "scripts" / "numba_scan.py"), str(n), str(tpb)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=env,
                              timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError("numba run failed:\n" + proc.stdout)
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    seconds = statistics.median(r["seconds"] for r in results)
    return {"n": n, "launched": results[0]["threads"], "s": seconds, "rate": results[0]["threads"] / seconds,
            "version": numba.__version__, "verdict": "pass" if all(r["correct"] for r in results) else "FAIL"}


def build_binary(root: Path, folder: Path, extra) -> Path:
    if extra and not bld.is_configured(folder):
        with bld.BuildLock(folder, root):
            subprocess.run(bld.configure_cmd(root, folder, extra), check=True, stdout=subprocess.DEVNULL)
    bld.build_target(root, folder, TARGET, "solutions/p14/p14.cu")
    return bld.binary_path(folder, TARGET)


def build_baseline(root: Path, rev: str) -> Path:
    """REV's p14 --complete simulator binary, built from a detached worktree of REV in
    build-baseline/ (the worktree is the source, so this tree's changes do not leak into it)."""
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", rev + "^{commit}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True)
    if commit.returncode != 0:
        raise RuntimeError("--baseline %s: not a commit of this repository (%s)" % (rev, commit.stderr.strip()))
    sha = commit.stdout.strip()
    top = root / "build-baseline"
    source, folder = top / ("src-" + sha[:12]), top / ("build-" + sha[:12])
    if not source.is_dir():
        top.mkdir(exist_ok=True)
        subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", str(source), sha], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not bld.is_configured(folder):
        with bld.BuildLock(folder, source):
            subprocess.run(bld.configure_cmd(source, folder, None), check=True, stdout=subprocess.DEVNULL)
    bld.build_target(source, folder, TARGET, "solutions/p14/p14.cu")
    return bld.binary_path(folder, TARGET)


def baseline_report(root: Path, rev: str, n: int, tpb: int, runs: int) -> List[str]:
    """The fast path and every-check-on rows of this tree against REV's, measured in one run with
    the two binaries' runs interleaved, so that the machine's drift falls on both alike."""
    old_bin = build_baseline(root, rev)
    new_bin = build_binary(root, build_dir(root), None)
    times = {(b, c): [] for b in ("old", "new") for c in (False, True)}
    launched = None
    for _ in range(runs):
        for checks in (False, True):
            for name, binary in (("old", old_bin), ("new", new_bin)):
                r = run_sim(binary, n, tpb, "forward", checks=checks)
                if r["verdict"] != "pass":
                    raise RuntimeError("%s gave a wrong result" % binary)
                times[(name, checks)].append(r["kernel_seconds"])
                launched = r["threads"]
    rev_name = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", rev], stdout=subprocess.PIPE,
                              universal_newlines=True).stdout.strip()
    out = ["# cudasim speed: this tree against %s" % rev_name, "",
           "- machine: %s" % machine(), "- this tree: %s" % (source_version(root) or "unknown"),
           "- p14 `--complete` reference, n = %d, %d threads per block, one worker; median of %d runs each, "
           "the two builds' runs interleaved; launched CUDA threads per second" % (n, tpb, runs),
           "- command: `python3 scripts/bench_sim.py --baseline %s --n %d --runs %d`" % (rev, n, runs), "",
           "| measurement | %s | this tree | change |" % rev_name, "|---|---:|---:|---:|"]
    for checks, label in ((False, "fast path (memory checks off)"), (True, "every memory check on")):
        old = launched / statistics.median(times[("old", checks)])
        new = launched / statistics.median(times[("new", checks)])
        out.append("| %s | %s | %s | %+.1f %% |" % (label, fmt(old), fmt(new), 100.0 * (new / old - 1)))
    return out


# Real programs (bench/sim/, written here after NVIDIA's samples), built with `puzzle.py sim` and run
# whole: (file, arguments, what it is).
PROGRAMS = [
    ("matmul_tiled.cu", "matrixMul's tiling: 200 blocks of 1024 threads, 20 barriers a thread"),
    ("scan_large.cu", "a scan of 6.8 M ints in blocks of 512 threads (3 launches a scan)"),
]
# How each program runs: the fast path, the default (big launches sampled), every block checked.
PROGRAM_MODES = [
    ("fast path (`CUDASIM_CHECKS=0`)", {"CUDASIM_CHECKS": "0"}),
    ("checks on, big launches sampled (the default)", {}),
    ("checks on, every block (`CUDASIM_SAMPLE=all`)", {"CUDASIM_SAMPLE": "all"}),
]


def build_program(root: Path, name: str) -> Path:
    # Built as for a run with the checks off, so that the program's uninstrumented build is there
    # for the fast-path rows (harness/sim/src/fast_build.cpp); the checked rows run the program itself.
    out = subprocess.run([sys.executable, str(root / "scripts" / "puzzle.py"), "sim", "--build-only",
                          str(root / "bench" / "sim" / name)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, check=True, env=dict(os.environ, CUDASIM_CHECKS="0"))
    return Path(out.stdout.strip().splitlines()[-1])


def run_program(binary: Path, args: List[str], env: dict) -> dict:
    """Wall and CPU seconds of one whole run, and its own verdict (the program checks its answer)."""
    full = dict(os.environ)
    full.pop("CUDASIM_SAMPLE", None)
    full.update(env)
    before = os.times()
    t0 = datetime.datetime.now()
    proc = subprocess.run([str(binary)] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=full)
    wall = (datetime.datetime.now() - t0).total_seconds()
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall": wall, "cpu": cpu, "ok": proc.returncode == 0, "out": proc.stdout + proc.stderr}


def programs_report(root: Path, matmul_launches: int, scan_iters: int, memory_mib: int) -> List[str]:
    args = {"matmul_tiled.cu": [str(matmul_launches - 1)], "scan_large.cu": ["6800000", str(scan_iters)]}
    lines = ["## Real programs", "",
             "Whole runs of programs modelled on NVIDIA's samples (bench/sim/), built unmodified with "
             "`puzzle.py sim`, on every core (the default `CUDASIM_WORKERS`): matmul_tiled with %d launches "
             "(the sample makes 301), scan_large with %d scans (the sample makes 100). Seconds are wall "
             "time of the whole program and CPU time of the process." % (matmul_launches, scan_iters), "",
             "| program | checks | wall s | CPU s | wall / fast path |", "|---|---|---|---|---|"]
    failed = False
    for name, what in PROGRAMS:
        binary = build_program(root, name)
        fast = None
        for label, env in PROGRAM_MODES:
            r = run_program(binary, args[name], env)
            failed |= not r["ok"]
            fast = fast or r["wall"]
            lines.append("| `%s` (%s) | %s | %.1f | %.1f | %.2f |%s" % (name, what, label, r["wall"], r["cpu"],
                                                                   r["wall"] / fast, "" if r["ok"] else " **FAILED**"))
    lines += ["", "## Host memory per byte of device memory", "",
              "`bench/sim/memory_figure.cu %d MODE`: %d MiB of device memory filled by `cudaMemset` or by a kernel, "
              "then summed by a launch of 512 blocks of 256 threads; the program's peak resident memory (VmHWM) "
              "beyond what it used before the allocation, per device byte." % (memory_mib, memory_mib), "",
              "| fill | checks | host bytes per device byte |", "|---|---|---|"]
    binary = build_program(root, "memory_figure.cu")
    import re
    for mode in ("memset", "kernel"):
        for label, env in (("off (`CUDASIM_CHECKS=0`)", {"CUDASIM_CHECKS": "0"}), ("on (the default)", {})):
            r = run_program(binary, [str(memory_mib), mode], env)
            m = re.search(r"([\d.]+) host bytes per device byte", r["out"])
            failed |= not (r["ok"] and m)
            lines.append("| %s | %s | %s |" % (mode, label, m.group(1) if m else "**FAILED**"))
    if failed:
        lines.append("\n- WARNING: a program failed; the figures above are not valid.")
    return lines


def fmt(x: float) -> str:
    return "{:,.0f}".format(x)


def wrong(r: dict) -> str:
    """Marks a row whose run gave a wrong answer (or whose tool reported an error)."""
    return "" if r["verdict"] == "pass" else " **WRONG RESULT: not valid**"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="size for cudasim (default 2^20)")
    ap.add_argument("--tpb", type=int, default=256, help="threads per block (default 256)")
    ap.add_argument("--numba-n", type=int, default=8192,
                    help="size for numba's simulator and for cudasim next to it (default 8192: numba is slow)")
    ap.add_argument("--oclgrind-n", type=int, default=65536,
                    help="size for Oclgrind and for cudasim next to it (default 65536: Oclgrind is slow)")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement; the median is reported (default 3)")
    ap.add_argument("--no-numba", action="store_true", help="skip numba even if installed")
    ap.add_argument("--no-opencl", action="store_true", help="skip PoCL and Oclgrind even if installed")
    ap.add_argument("--no-ucontext", action="store_true", help="skip the ucontext build (build-ucontext/)")
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--programs", action="store_true",
                    help="only the real programs (bench/sim/matmul_tiled.cu, scan_large.cu) and the memory figure")
    ap.add_argument("--no-programs", action="store_true", help="skip the real programs and the memory figure")
    ap.add_argument("--matmul-launches", type=int, default=11, help="launches of matmul_tiled (default 11)")
    ap.add_argument("--scan-iters", type=int, default=2, help="scans of scan_large (default 2)")
    ap.add_argument("--memory-mib", type=int, default=256, help="device memory of the memory figure (default 256)")
    ap.add_argument("--baseline", metavar="REV",
                    help="instead of the full report: the fast path and every-check-on rows of this tree against "
                         "commit REV's, in one run (REV is built in build-baseline/)")
    args = ap.parse_args(argv)

    root = repo_root()
    if args.programs:
        try:
            report = ["# CPU simulator: real programs and host memory (%s)" % datetime.date.today().isoformat(), "",
                      "Machine: %s. No GPU.%s" % (machine(), (" Sources: " + source_version(root) + ".")
                                                   if source_version(root) else ""),
                      "Command: `python3 scripts/bench_sim.py %s`." % " ".join(argv), ""]
            report += programs_report(root, args.matmul_launches, args.scan_iters, args.memory_mib)
        except subprocess.CalledProcessError as e:
            print("bench_sim.py: building a program failed: %s" % e.stderr, file=sys.stderr)
            return 2
        text = "\n".join(report) + "\n"
        sys.stdout.write(text)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
        return 1 if "WARNING" in text else 0
    if args.baseline:
        try:
            report = baseline_report(root, args.baseline, args.n, args.tpb, max(args.runs, 5))
        except (BuildError, RuntimeError, subprocess.CalledProcessError) as e:
            print("bench_sim.py: %s" % e, file=sys.stderr)
            return 2
        text = "\n".join(report) + "\n"
        sys.stdout.write(text)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
        return 0
    builds = [("default build (build/)", build_dir(root), None)]
    if not args.no_ucontext:
        builds.append(("ucontext fallback (build-ucontext/)", root / "build-ucontext", ["-DCUDASIM_FIBERS=UCONTEXT"]))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    rows = []
    try:
        for label, folder, extra in builds:
            binary = build_binary(root, folder, extra)
            # A small n takes milliseconds, where other processes' noise shows most: more runs.
            rows.append((label, sim_rate(binary, args.n, args.tpb, args.runs),
                         sim_rate(binary, args.numba_n, args.tpb, max(args.runs, SMALL_N_RUNS))))
    except BuildError:
        return 2
    cores = os.cpu_count() or 1
    wide = all_cores_rate(bld.binary_path(build_dir(root), TARGET), args.n, args.tpb, args.runs, cores) if cores > 1 else None
    loops_bin = build_loops(root, build_dir(root))
    loops = [loops_rate(loops_bin, args.n, args.tpb, args.runs, w) for w in sorted({1, cores})]
    nb = None if args.no_numba else numba_rate(root, args.numba_n, args.tpb, args.runs)
    ocl_bin = None if args.no_opencl else build_opencl(root, build_dir(root))
    pocl, grind, grind_sim = [], [], None
    if ocl_bin:
        # As many timed scans as the plain loops (they take milliseconds); one untimed warm-up
        # first, because PoCL compiles each kernel for its work-group size at its first launch.
        for w in sorted({1, cores}):
            r = opencl_rate(root, ocl_bin, args.n, args.tpb, max(args.runs, 5), POCL_PLATFORM,
                            env={v: str(w) for v in POCL_THREAD_VARS})
            if r is None:
                break
            r["workers"] = w
            pocl.append(r)
        if shutil.which("oclgrind"):
            # Oclgrind interprets the kernels, so no warm-up: the build already did its compiling.
            for flags in ([], ["--data-races"]):
                r = opencl_rate(root, ocl_bin, args.oclgrind_n, args.tpb, args.runs, "Oclgrind",
                                wrapper=["oclgrind", "--num-threads", "1"] + flags, warmup=0)
                if r is None:
                    break
                r["flags"] = flags
                grind.append(r)
        if grind:
            grind_sim = (rows[0][2] if args.oclgrind_n == args.numba_n else
                         sim_rate(bld.binary_path(build_dir(root), TARGET), args.oclgrind_n, args.tpb,
                                  max(args.runs, SMALL_N_RUNS)))
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else None

    report = ["# CPU simulator speed (%s)" % datetime.date.today().isoformat(), "",
              "Machine: %s. No GPU.%s" % (machine(), (" Sources: " + source_version(root) + ".")
                                                    if source_version(root) else ""), "",
              "Command: `python3 scripts/bench_sim.py%s` (median of %d runs per row, %d for cudasim at the "
              "small n; one worker thread, `CUDASIM_WORKERS=1`, so one core%s)."
              % ("" if not argv else " " + " ".join(argv), args.runs, max(args.runs, SMALL_N_RUNS),
                 "" if load is None else "; load average %.1f when it started, %.1f when it ended: other "
                 "processes share the machine's cores" % (load, load_end)), "",
              "Counted: **launched CUDA threads per second** of the p14 `--complete` reference solution "
              "(TPB = %d). A launched thread is one CUDA thread of one launch, counted once even when "
              "the simulator runs it under three schedules; time is the simulator's time inside the "
              "launches (numba: the wall time of the scan; OpenCL: a work-item counts as a thread, and "
              "the time is the sum of the launches' profiling-event times, END - START)." % args.tpb, "",
              "| simulator | fibers | schedules | n | launched threads | seconds | launched threads/s | elements/s |",
              "|---|---|---|---|---|---|---|---|"]
    for label, big, small in rows:
        for r in (big, small):
            report.append("| cudasim, %s | %s | 1 (forward), fast path: memory checks off (`CUDASIM_CHECKS=0`) | %d | %s | %.4f | %s | %s |"
                          % (label, r["fibers"], r["n"], fmt(r["launched"]), r["s0"], fmt(r["rate0"]),
                             fmt(r["n"] / r["s0"])))
            report.append("| cudasim, %s | %s | 1 (forward), every memory check on | %d | %s | %.4f | %s | %s |"
                          % (label, r["fibers"], r["n"], fmt(r["launched"]), r["s1"], fmt(r["rate1"]),
                             fmt(r["n"] / r["s1"])))
            report.append("| cudasim, %s | %s | 3 (forward, reverse, random: `run`, `check`; checks on the first) | %d | %s | %.4f | %s | %s |"
                          % (label, r["fibers"], r["n"], fmt(r["launched"]), r["s3"], fmt(r["rate3"]),
                             fmt(r["n"] / r["s3"])))
    if wide:
        report.append("| cudasim, default build (build/), all %d cores (`CUDASIM_WORKERS=%d`) | %s | 1 (forward), fast path | %d | %s | %.4f | %s | %s |"
                      % (cores, cores, rows[0][1]["fibers"], wide["n"], fmt(wide["launched"]), wide["s"], fmt(wide["rate"]),
                         fmt(wide["n"] / wide["s"])))
    for lp in loops:
        report.append("| plain C++ loops, no simulator (`bench/sim/p14_loops.cpp`, g++ -O2), %d core%s | none | 1 | %d | %s | %.4f | %s | %s |"
                      % (lp["workers"], "" if lp["workers"] == 1 else "s", lp["n"], fmt(lp["launched"]), lp["s"],
                         fmt(lp["rate"]), fmt(lp["n"] / lp["s"])))
    for r in pocl:
        report.append("| PoCL %s (OpenCL, `bench/sim/p14_opencl.cpp`, device %s), %d core%s (`%s=%d`; %d compute unit%s)%s | none: work-item loops | 1 | %d | %s | %.4f | %s | %s |"
                      % (pocl_version(r["version"]), r["device"], r["workers"], "" if r["workers"] == 1 else "s",
                         pocl_thread_var(r["version"]), r["workers"], r["units"], "" if r["units"] == 1 else "s",
                         wrong(r), r["n"], fmt(r["launched"]), r["s"], fmt(r["rate"]), fmt(r["n"] / r["s"])))
    if grind_sim and args.oclgrind_n != args.numba_n:
        r = grind_sim
        report.append("| cudasim, default build (build/), next to Oclgrind | %s | 1 (forward), fast path: memory checks off (`CUDASIM_CHECKS=0`) | %d | %s | %.4f | %s | %s |"
                      % (r["fibers"], r["n"], fmt(r["launched"]), r["s0"], fmt(r["rate0"]), fmt(r["n"] / r["s0"])))
        report.append("| cudasim, default build (build/), next to Oclgrind | %s | 1 (forward), every memory check on | %d | %s | %.4f | %s | %s |"
                      % (r["fibers"], r["n"], fmt(r["launched"]), r["s1"], fmt(r["rate1"]), fmt(r["n"] / r["s1"])))
    for r in grind:
        report.append("| %s OpenCL simulator (`oclgrind --num-threads 1%s`), 1 core%s | none: interpreter | 1%s | %d | %s | %.4f | %s | %s |"
                      % (r["version"].split("(")[-1].rstrip(")"), "".join(" " + f for f in r["flags"]), wrong(r),
                         ", data-race detection on" if r["flags"] else "", r["n"], fmt(r["launched"]), r["s"],
                         fmt(r["rate"]), fmt(r["n"] / r["s"])))
    if nb:
        report.append("| numba %s CUDA simulator (`scripts/numba_scan.py`) | Python threads | 1 | %d | %s | %.4f | %s | %s |"
                      % (nb["version"], nb["n"], fmt(nb["launched"]), nb["s"], fmt(nb["rate"]), fmt(nb["n"] / nb["s"])))
    report.append("")
    base_big, base_small = rows[0][1], rows[0][2]
    report.append("- With every memory check on (races, uninitialized reads, bounds, barriers), the default build "
                  "runs %s launched threads/s at n = %d, %.1fx fewer than its fast path (%s/s)."
                  % (fmt(base_big["rate1"]), base_big["n"], base_big["rate0"] / base_big["rate1"], fmt(base_big["rate0"])))
    report.append("- The fast path runs 1/%.1f of the plain loops' launched threads per second on one core "
                  "(the same algorithm with no fibers, no barriers to switch at and no checks)."
                  % (loops[0]["rate"] / base_big["rate0"]))
    if wide:
        report.append("- On all %d cores the fast path runs %.2fx its one-core rate (the plain loops: %.2fx)."
                      % (cores, wide["rate"] / base_big["rate0"], loops[-1]["rate"] / loops[0]["rate"]))
    if len(rows) > 1:
        uc_big = rows[1][1]
        report.append("- The ucontext fallback (`%s` fibers) runs %.1fx (1 schedule) and %.1fx (3 schedules) "
                      "fewer launched threads per second than the default build (`%s` fibers) at n = %d."
                      % (uc_big["fibers"], base_big["rate1"] / uc_big["rate1"], base_big["rate3"] / uc_big["rate3"],
                         base_big["fibers"], base_big["n"]))
    if nb:
        report.append("- At the same n = %d, numba's simulator runs 1/%s of cudasim's launched threads per second "
                      "with one schedule and every memory check on, and 1/%s of cudasim as `run` and `check` use it "
                      "(three schedules, checks on the first; default build)."
                      % (nb["n"], fmt(base_small["rate1"] / nb["rate"]), fmt(base_small["rate3"] / nb["rate"])))
        report.append("- Per element scanned (numba_scan.py launches one thread per element, the p14 solution one "
                      "per two), numba's simulator is 1/%s of cudasim with one schedule (checks on) and 1/%s with three."
                      % (fmt(nb["s"] / base_small["s1"]), fmt(nb["s"] / base_small["s3"])))
    elif args.no_numba:
        report.append("- numba was skipped (`--no-numba`).")
    else:
        report.append("- numba is not installed, so there is no side-by-side comparison (`%s`)." % NUMBA_INSTALL)
    if pocl:
        p1 = pocl[0]
        report.append("- PoCL on one core runs %s launched work-items/s at n = %d: %.1fx the cudasim fast path's "
                      "launched threads per second (%s/s) and %.2fx the plain loops' (%s/s), which write by hand "
                      "the work-item loops that PoCL generates." % (fmt(p1["rate"]), p1["n"], p1["rate"] / base_big["rate0"],
                                                 fmt(base_big["rate0"]), p1["rate"] / loops[0]["rate"],
                                                 fmt(loops[0]["rate"])))
        if len(pocl) > 1:
            report.append("- On all %d cores PoCL runs %.2fx its one-core rate." % (cores, pocl[-1]["rate"] / p1["rate"]))
    if grind:
        plain = grind[0]
        report.append("- At the same n = %d, Oclgrind runs 1/%.1f of the cudasim fast path's launched threads per "
                      "second (%s/s against %s/s)." % (plain["n"], grind_sim["rate0"] / plain["rate"],
                                                       fmt(plain["rate"]), fmt(grind_sim["rate0"])))
        if len(grind) > 1:
            races = grind[1]
            report.append("- With checks on both sides at n = %d, Oclgrind `--data-races` runs 1/%.1f of cudasim "
                          "with every memory check on (%s/s against %s/s, one schedule)."
                          % (races["n"], grind_sim["rate1"] / races["rate"], fmt(races["rate"]), fmt(grind_sim["rate1"])))
    if args.no_opencl:
        report.append("- PoCL and Oclgrind were skipped (`--no-opencl`).")
    else:
        if not pocl:
            report.append("- PoCL is not installed, so there is no OpenCL-on-the-CPU row (`%s`)." % OPENCL_INSTALL)
        if not grind:
            report.append("- Oclgrind is not installed, so there is no OpenCL-simulator row (`%s`)." % OPENCL_INSTALL)
    if not args.no_programs:
        report.append("")
        report += programs_report(root, args.matmul_launches, args.scan_iters, args.memory_mib)
    failed = [r for _, big, small in rows for r in (big, small) if r["verdict"] != "pass"]
    failed += [r for r in loops + ([wide] if wide else []) + pocl + grind + ([nb] if nb else [])
               + ([grind_sim] if grind_sim else []) if r["verdict"] != "pass"]
    if failed:
        report.append("- WARNING: a run gave a wrong answer; the figures above are not valid.")
    text = "\n".join(report) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
