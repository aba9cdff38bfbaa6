#!/usr/bin/env python3
"""Build and run the simulator's test programs (tests/sim/programs/) on an NVIDIA GPU with nvcc,
then under compute-sanitizer racecheck, synccheck and memcheck: what the same files do on real
hardware, next to what the simulator says of them (tests/python/test_sim_command.py).

    python3 scripts/gpu_programs.py [--out DIR] [--arch sm_90] [--timeout 30] [--jobs 8] [PROGRAM.cu ...]

Writes DIR/programs.md (a table: program, exit status, the last line it printed, each tool's error
count) and DIR/programs.log (every command and its full output). A program whose first lines hold
`// args: ...` is run with those arguments. Exits 2 when nvcc or compute-sanitizer is missing,
otherwise 0: the table is the result (a program with a planted bug is expected to misbehave).
"""
import argparse
import concurrent.futures
import io
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "sim" / "programs"
TOOLS = ("racecheck", "synccheck", "memcheck")
SUMMARY = re.compile(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error)")


def find(tool):
    exe = shutil.which(tool)
    if exe:
        return exe
    p = Path("/usr/local/cuda/bin") / tool
    return str(p) if p.exists() else None


def programs(args):
    if args:
        return [Path(a).resolve() for a in args]
    found = sorted(PROGRAMS.glob("*.cu"))
    multi = PROGRAMS / "multi_file" / "main.cu"
    if multi.exists():
        found.append(multi)
    return found


def program_args(src):
    for line in src.read_text(errors="replace").splitlines()[:15]:
        m = re.match(r"\s*//\s*args:\s*(.*)", line)
        if m:
            return shlex.split(m.group(1))
    return ["2000"] if src.parent.name == "multi_file" else []


def sources(src):
    """The files nvcc compiles for a program: the multi-file example has a .cpp beside its main."""
    return [src] + sorted(p for p in src.parent.glob("*.cpp")) if src.parent.name == "multi_file" else [src]


def run(cmd, log, timeout):
    log.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        out, rc = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace"), "timeout"
    log.write(out + "\n[exit %s]\n\n" % rc)
    return rc, out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench/results/gpu-programs")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per run (a spin-wait may never end)")
    ap.add_argument("--jobs", type=int, default=8, help="nvcc builds in parallel")
    ap.add_argument("programs", nargs="*")
    a = ap.parse_args(argv)
    nvcc, sanitizer = find("nvcc"), find("compute-sanitizer")
    if not nvcc or not sanitizer:
        print("gpu_programs: needs nvcc and compute-sanitizer (on PATH or in /usr/local/cuda/bin)", file=sys.stderr)
        return 2
    out = Path(a.out)
    (out / "bin").mkdir(parents=True, exist_ok=True)
    rows = []
    srcs = programs(a.programs)

    def exe_of(src):
        return out / "bin" / (src.parent.name + "_" + src.stem if src.parent.name == "multi_file" else src.stem)

    def build(src):  # nvcc runs on the CPU: the builds go in parallel, each logging to its own buffer
        buf = io.StringIO()
        rc, text = run([nvcc, "-arch=" + a.arch, "-O2", "-std=c++17", "-I", str(src.parent), "-o", str(exe_of(src))]
                       + [str(s) for s in sources(src)], buf, 600)
        return rc, text, buf.getvalue()

    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        builds = list(pool.map(build, srcs))
    with open(out / "programs.log", "w") as log:
        for src, (rc, text, build_log) in zip(srcs, builds):
            log.write(build_log)
            name = str(src.relative_to(ROOT)) if src.is_relative_to(ROOT) else str(src)
            exe = exe_of(src)
            if rc != 0:
                rows.append((name, "build failed", text.strip().splitlines()[-1:] or [""], ["-"] * len(TOOLS)))
                continue
            rc, text = run([str(exe)] + program_args(src), log, a.timeout)
            last = [line for line in text.strip().splitlines() if line.strip()][-1:] or [""]
            counts = []
            for tool in TOOLS:
                trc, ttext = run([sanitizer, "--tool", tool, str(exe)] + program_args(src), log, a.timeout * 3)
                found = [int(x or y) for x, y in SUMMARY.findall(ttext)]
                counts.append(str(sum(found)) if found else ("timeout" if trc == "timeout" else "?"))
            rows.append((name, str(rc), last, counts))
    gpu = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE).stdout.decode().strip() if shutil.which("nvidia-smi") else "?"
    with open(out / "programs.md", "w") as md:
        md.write("# tests/sim/programs on a GPU\n\nCommand: `python3 scripts/gpu_programs.py --out %s`\n\n%s\n\n" % (a.out, gpu))
        md.write("| program | exit | last line printed | %s |\n|---|---|---|%s\n" % (" | ".join(TOOLS), "---|" * len(TOOLS)))
        for name, rc, last, counts in rows:
            md.write("| %s | %s | %s | %s |\n" % (name, rc, last[0].replace("|", "\\|")[:100], " | ".join(counts)))
    print((out / "programs.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
