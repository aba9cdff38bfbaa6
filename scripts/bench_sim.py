#!/usr/bin/env python3
"""How fast is the CPU simulator? Simulated CUDA threads per second on the p14 --complete
reference, on one worker thread (one core), with one thread schedule (the fast path) and with
the three schedules that `run` and `check` use. Where numba is installed, numba's CUDA simulator
runs the same algorithm (scripts/numba_scan.py) and the ratio is printed.

    python3 scripts/bench_sim.py [--n 1048576] [--tpb 256] [--numba-n 1024] [--no-numba]
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from puzzlelib import build as bld  # noqa: E402
from puzzlelib.common import BuildError, build_dir, repo_root  # noqa: E402


def sim_rate(binary: Path, n: int, tpb: int, schedules: str, workers: int) -> dict:
    env = dict(os.environ, CUDASIM_WORKERS=str(workers))
    cmd = [str(binary), "--variant", "complete", "--n", str(n), "--tpb", str(tpb), "--seed", "1", "--schedules", schedules,
           "--stats"]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=900)
    stats = verdict = None
    for line in proc.stdout.splitlines():
        if line.startswith("STATS "):
            stats = json.loads(line[6:])
        elif line.startswith("RESULT "):
            verdict = json.loads(line[7:])["verdict"]
    if proc.returncode != 0 or stats is None:
        raise RuntimeError("simulator run failed (%s):\n%s" % (" ".join(cmd), proc.stdout))
    stats["verdict"] = verdict
    stats["rate"] = stats["threads"] / stats["kernel_seconds"]
    return stats


def numba_rate(root: Path, n: int, tpb: int):
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, str(root / "scripts" / "numba_scan.py"), str(n), str(tpb)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError("numba run failed:\n" + proc.stdout)
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    r["rate"] = r["threads"] / r["seconds"]
    return r


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="size for the simulator (default 2^20)")
    ap.add_argument("--tpb", type=int, default=256, help="threads per block (default 256)")
    ap.add_argument("--numba-n", type=int, default=1024, help="size for numba's simulator (default 1024: it is slow)")
    ap.add_argument("--no-numba", action="store_true", help="skip numba even if installed")
    args = ap.parse_args(argv)

    root = repo_root()
    target = "p14_solution_cpu"
    try:
        bld.build_target(root, build_dir(root), target)
    except BuildError:
        return 2
    binary = bld.binary_path(build_dir(root), target)

    print("p14 --complete reference, N = %d, TPB = %d, one worker thread (one core)" % (args.n, args.tpb))
    rows = []
    fast = sim_rate(binary, args.n, args.tpb, "forward", 1)
    rows.append(("cudasim, 1 schedule (fast path)", fast))
    full = sim_rate(binary, args.n, args.tpb, "forward,reverse,random", 1)
    rows.append(("cudasim, 3 schedules (race check)", full))
    for label, r in rows:
        print("  %-36s %12.0f threads/s  (%d threads in %.3f s, %s fibers, %s)"
              % (label, r["rate"], r["threads"], r["kernel_seconds"], r["fibers"], r["verdict"]))
    nb = None
    if not args.no_numba:
        nb = numba_rate(root, args.numba_n, args.tpb)
        if nb is None:
            print("  numba is not installed (pip install numba) - no side-by-side comparison")
        else:
            print("  %-36s %12.0f threads/s  (%d threads in %.3f s, N = %d, %s)"
                  % ("numba CUDA simulator", nb["rate"], nb["threads"], nb["seconds"], nb["n"],
                     "pass" if nb["correct"] else "WRONG"))
            print("  ratio, cudasim fast path / numba: %.0fx" % (fast["rate"] / nb["rate"]))
    print("BENCH %s" % json.dumps({"n": args.n, "tpb": args.tpb, "fast_rate": fast["rate"], "full_rate": full["rate"],
                                   "numba_rate": nb["rate"] if nb else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
