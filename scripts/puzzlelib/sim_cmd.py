"""`puzzle.py sim`: build any CUDA program (with its own main()) for the CPU simulator and run it.

The program's .cu files and every file they include from their own folders (or from -I folders)
are translated by harness/sim/cu2cpp.py into a mirror tree, compiled as C++ against cudasim with
the compiler, flags and libraries CMake wrote to <build>/cudasim-toolchain.json
(harness/cmake/Cudasim.cmake), and linked. The result is cached under <build>/sim-programs/, keyed
by the content of everything that went into it, so a second run starts at once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

from . import build as bld
from . import diagnosis
from .common import PROG, BuildError, UsageError, build_dir, err, ncpu, rel
from .messages import set_lang, tr
from .options import lang_choice

HELP = """\
usage: {prog} sim [options] FILE.cu [more .cu/.cpp files] [-- program arguments]

Build a CUDA program that has its own main() for the CPU simulator and run it. Every .cu/.cuh
file it includes from its own folder (or from an -I folder) is translated too. The simulator
checks each kernel launch (races, uninitialized reads, out-of-bounds accesses, barrier
divergence, deadlocks) and stops the program with a report: exit status 3 for a race, 4 for
other kernel errors; otherwise the program's own exit status.

  -I DIR           also look for included files in DIR (like nvcc -I)
  -D NAME[=VALUE]  define a macro (like nvcc -D)
  --build-only     build (or find in the cache) and print the executable's path; do not run
  --rebuild        ignore the cached build
  --timeout S      stop the program after S seconds (default 600)
  --lang en|ko     the language of the simulator's report (PUZZLE_LANG=ko or a Korean locale does
                   the same); the program's own output is as it prints it

The build is cached in <build dir>/sim-programs/ (PUZZLES_BUILD_DIR, default build/).
Simulator settings come from the environment, e.g. CUDASIM_SCHEDULES=forward for one thread order
instead of three (faster), CUDASIM_CHECKS=0 to turn the memory checker off (harness/sim/README.md).
A big launch (64 blocks and 131072 threads or more) is checked on a sample of its blocks, and a
note says which; CUDASIM_SAMPLE=all checks every block (slower).

example:
  {prog} sim my_reduction.cu -- 1000000
"""

SOURCE_EXTS = (".cu", ".cpp", ".cc", ".cxx")
DEFAULT_TIMEOUT = 600.0


def parse_args(args: List[str]) -> Dict:
    opts = {"includes": [], "defines": [], "sources": [], "program_args": [], "build_only": False,
            "rebuild": False, "timeout": DEFAULT_TIMEOUT}
    it = iter(range(len(args)))
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            opts["program_args"] = args[i + 1:]
            break
        if a in ("-I", "-D", "--timeout", "--lang"):
            if i + 1 >= len(args):
                raise UsageError(tr("%s needs a value") % a)
            value = args[i + 1]
            i += 1
        elif a.startswith(("-I", "-D")) and len(a) > 2:
            a, value = a[:2], a[2:]
        else:
            value = None
        if a == "-I":
            opts["includes"].append(os.path.abspath(value))
        elif a == "-D":
            opts["defines"].append(value)
        elif a == "--timeout":
            try:
                opts["timeout"] = float(value)
            except ValueError:
                raise UsageError(tr("--timeout takes a number of seconds, got %s") % repr(value))
        elif a == "--lang":
            set_lang(lang_choice(value))  # the report's language (the program's own output is its own)
        elif a.startswith("--lang="):
            set_lang(lang_choice(a.partition("=")[2]))
        elif a == "--build-only":
            opts["build_only"] = True
        elif a == "--rebuild":
            opts["rebuild"] = True
        elif a.startswith("-"):
            raise UsageError(tr("unknown option %s") % a)
        else:
            opts["sources"].append(a)
        i += 1
    del it
    if not opts["sources"]:
        raise UsageError(tr("no source file given: %s sim FILE.cu [-- args]") % PROG)
    for s in opts["sources"]:
        if not s.endswith(SOURCE_EXTS):
            raise UsageError("%s: not a source file the simulator builds (%s)" % (s, ", ".join(SOURCE_EXTS)))
        if not os.path.isfile(s):
            raise UsageError("%s: no such file" % s)
    if not any(s.endswith(".cu") for s in opts["sources"]):
        raise UsageError("no .cu file given: the kernels and their launches live in .cu files")
    for d in opts["includes"]:
        if not os.path.isdir(d):
            raise UsageError("-I %s: no such folder" % d)
        if toolkit_dir(d):
            raise UsageError("-I %s is a CUDA toolkit's include folder; the simulator brings its own CUDA headers "
                             "(harness/sim/include), and mixing the two fails. Leave it out." % d)
    return opts


def toolkit_dir(d: str) -> bool:
    return os.path.isfile(os.path.join(d, "cuda_runtime_api.h")) or os.path.isdir(os.path.join(d, "crt"))


def load_toolchain(root: Path, build: Path) -> Dict:
    """Builds libcudasim in the build dir (configuring it on first use) and returns what
    harness/cmake/Cudasim.cmake wrote about how to build against it."""
    bld.build_target(root, build, "cudasim")
    path = build / "cudasim-toolchain.json"
    if not path.is_file():  # a build dir configured before the file existed
        subprocess.run(bld.configure_cmd(root, build), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        err(tr("error: %s: %s. Reconfigure the build dir: cmake -S . -B %s") % (rel(path, root), e, rel(build, root)))
        raise BuildError("no toolchain")


def load_translator(path: str):
    spec = importlib.util.spec_from_file_location("cudasim_cu2cpp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def digest(paths: List[str], extra: List[str]) -> str:
    h = hashlib.sha256()
    for e in extra:
        h.update(e.encode() + b"\0")
    for p in sorted(set(paths)):
        h.update(p.encode() + b"\0")
        with open(p, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()[:16]


def clean_env() -> Dict[str, str]:
    """The compiler's environment without include paths into a CUDA toolkit (CPATH and friends),
    whose headers would clash with the simulator's."""
    env = dict(os.environ)
    for var in ("CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"):
        if var in env:
            kept = [d for d in env[var].split(os.pathsep) if d and not toolkit_dir(d)]
            env[var] = os.pathsep.join(kept)
    return env


def compile_commands(tc: Dict, opts: Dict, tree: str, translated: Dict[str, str], out_dir: str,
                     fast: bool = False) -> Tuple[List[List[str]], List[str]]:
    """The compile commands and objects of the program; `fast`: of its uninstrumented build
    (harness/sim/src/fast_build.cpp), the .cu files compiled without the instrumentation."""
    include = ["-I", tc["include"]]
    for d in opts["includes"]:  # the mirror first: an included .cuh there is the translated one
        include += ["-I", os.path.join(tree, d.lstrip("/")), "-I", d]
    defines = ["-D" + d for d in opts["defines"]]
    cmds, objs = [], []
    for i, src in enumerate(opts["sources"]):
        obj = os.path.join(out_dir, "%s%d-%s.o" % ("fast-" if fast else "", i, os.path.basename(src)))
        base = [tc["cxx"]] + [f for f in tc["compile"] if f.startswith(("-std", "-O", "-g"))]
        if src.endswith(".cu"):
            flags = [f for f in tc["compile"] if f not in tc.get("instrument", [])] if fast else tc["compile"]
            cmd = [tc["cxx"]] + flags + ["-include", "cudasim/runtime.h", "-DCUDASIM_LEARNER_FILE"] + \
                  (["-DCUDASIM_UNINSTRUMENTED"] if fast else []) + include + defines + \
                  ["-c", translated[os.path.abspath(src)], "-o", obj]
        else:
            cmd = base + include + ["-I", os.path.dirname(os.path.abspath(src))] + defines + ["-c", os.path.abspath(src), "-o", obj]
        cmds.append(cmd)
        objs.append(obj)
    return cmds, objs


def run_parallel(cmds: List[List[str]], env) -> Tuple[int, str]:
    """Runs the compile commands, ncpu() at a time; returns (first failing status or 0, output)."""
    rcs, texts = run_parallel_each(cmds, env)
    return next((r for r in rcs if r), 0), "".join(texts)


def run_parallel_each(cmds: List[List[str]], env) -> Tuple[List[int], List[str]]:
    """Runs the compile commands, ncpu() at a time; returns each one's status and output."""
    pending, running, rcs, texts = list(enumerate(cmds)), [], [0] * len(cmds), [""] * len(cmds)
    while pending or running:
        while pending and len(running) < max(1, ncpu()):
            i, cmd = pending.pop(0)
            running.append((i, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                                                universal_newlines=True, errors="replace")))
        i, p = running.pop(0)
        texts[i], _ = p.communicate()
        rcs[i] = p.returncode
    return rcs, texts


# g++'s "required from here" (the user's line that instantiated a simulator template) and "In file
# included from" (the user's line that included a simulator header): where a refusal comes from.
USER_SITE = re.compile(r"^(?:In file included from |\s*from )?(?P<file>[^\s:][^:]*):(?P<line>\d+)(?::\d+)?(?::\s+required from here|[:,]$)")
REFUSAL = re.compile(r"(?:static assertion failed(?: due to requirement '[^']*')?: |#error )\"?(?:cudasim: )?(?P<msg>.*?)\"?$")


def simulator_refusals(text: str) -> List[str]:
    """The simulator headers' own explanations (a static_assert or #error in harness/sim/include)
    in the compiler's output, each with the user's line that led to it: g++ buries them among
    template notes, so they are repeated at the end."""
    out, seen, site = [], set(), None
    for line in text.splitlines():
        m = USER_SITE.match(line)
        if m and not bld.SIM_HEADER.search(m.group("file").replace("\\", "/")):
            site = "%s:%s" % (m.group("file"), m.group("line"))
            continue
        d = bld._diag(line)
        if not d or "error" not in d.group("kind") or not bld.SIM_HEADER.search(d.group("file").replace("\\", "/")):
            continue
        r = REFUSAL.search(line)
        if r and r.group("msg") not in seen:
            seen.add(r.group("msg"))
            out.append("  %s: %s" % (site or "(your program)", r.group("msg")))
    return ["The CPU simulator refuses something this program uses; its explanation:"] + out if out else []


def build_program(root: Path, opts: Dict) -> str:
    build = build_dir(root)
    tc = load_toolchain(root, build)
    cu2cpp = load_translator(tc["translator"])
    cu = [os.path.abspath(s) for s in opts["sources"] if s.endswith(".cu")]
    name = os.path.splitext(os.path.basename(cu[0]))[0]
    where = hashlib.sha256("\0".join(os.path.abspath(s) for s in opts["sources"]).encode()).hexdigest()[:10]
    home = build / "sim-programs" / ("%s-%s" % (name, where))
    # One build of a program at a time: two `sim` commands of one program (two terminals, or a
    # test with several worker counts) share its mirror tree, objects and executable.
    with bld.BuildLock(home):
        return _build_program_in(home, tc, cu2cpp, cu, name, opts)


def wants_fast_build(env: Dict[str, str]) -> bool:
    """Whether a run in this environment starts the program's uninstrumented build (the same test
    as harness/sim/src/fast_build.cpp's): the memory checker off, no trace, no profile."""
    return (env.get("CUDASIM_CHECKS") in ("0", "off") and not env.get("CUDASIM_TRACE") and not env.get("CUDASIM_PROFILE")
            and env.get("CUDASIM_FAST_BUILD") != "0")


def _link(tc: Dict, objs: List[str], exe: str, env: Dict[str, str]) -> Tuple[int, str]:
    """Links objs into exe (through a temporary file, so that a failed link leaves no exe)."""
    tmp = exe + ".tmp%d" % os.getpid()
    link = [tc["cxx"]] + [f for f in tc["compile"] if f.startswith("-fsanitize")] + objs + ["-o", tmp] + tc["libs"]
    # -fsanitize=thread at link time would pull in libtsan; the simulator defines __tsan_*.
    link = [a for a in link if not a.startswith("-fsanitize")]
    p = subprocess.run(link, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, universal_newlines=True,
                       errors="replace")
    if p.returncode == 0:
        os.replace(tmp, exe)
    return p.returncode, p.stdout


def _build_program_in(home: Path, tc: Dict, cu2cpp, cu: List[str], name: str, opts: Dict) -> str:
    tree = str(home / "tree")
    try:
        outputs, read = cu2cpp.translate_tree(cu, tree, opts["includes"])
    except (ValueError, OSError) as e:
        err("error: %s" % e)
        raise BuildError("translation failed")
    translated = dict(zip(cu, outputs))
    sim_headers = [str(p) for p in Path(tc["include"]).rglob("*") if p.is_file()]
    libs = [l for l in tc["libs"] if os.path.isfile(l)]
    plain = [os.path.abspath(s) for s in opts["sources"] if not s.endswith(".cu")]
    key = digest(read + plain + sim_headers + libs + [tc["translator"]],
                 [json.dumps(tc, sort_keys=True), json.dumps(opts["includes"]), json.dumps(opts["defines"]),
                  json.dumps([os.path.abspath(s) for s in opts["sources"]])])
    exe = str(home / ("%s-%s" % (name, key)))
    # The uninstrumented build, which the program starts in its place when a run needs no
    # instrumentation (harness/sim/src/fast_build.cpp): built when this build is for such a run, as
    # `CUDASIM_CHECKS=0 puzzle.py sim ...` is; a checked run never needs it.
    # A program that builds only instrumented (its code tests __SANITIZE_THREAD__, say) runs
    # instrumented: NAME.nofast records that, so that the next run does not try again.
    fast = exe + ".fast" if tc.get("fast_build") and wants_fast_build(dict(os.environ)) else None
    if fast and os.path.isfile(exe + ".nofast"):
        fast = None
    if os.path.isfile(exe) and (not fast or os.path.isfile(fast)) and not opts["rebuild"]:
        return exe
    bld.status("compiling %s for the simulator ..." % name)
    start = time.monotonic()
    env = clean_env()
    cmds, objs = [], []
    if not os.path.isfile(exe) or opts["rebuild"]:
        cmds, objs = compile_commands(tc, opts, tree, translated, str(home))
    rc, text = run_parallel(cmds, env) if not fast else (0, "")
    if fast:  # both builds' files at once, on as many cores; the program's messages come first
        fast_cmds, fast_objs = compile_commands(tc, opts, tree, translated, str(home), fast=True)
        rcs, texts = run_parallel_each(cmds + fast_cmds, env)
        rc = next((r for r in rcs[:len(cmds)] if r), 0)
        text = "".join(texts[:len(cmds)])
        fast_ok = not any(rcs[len(cmds):])
    if rc == 0 and objs:
        rc, out = _link(tc, objs, exe, env)
        text += out
    if rc == 0 and fast:
        if not fast_ok or _link(tc, fast_objs, fast, env)[0] != 0:
            Path(exe + ".nofast").touch()
    if rc == 0:
        for old in home.iterdir():  # earlier builds of this program
            if old.is_file() and old.name.startswith(name + "-") and \
                    str(old) not in (exe, exe + ".fast", exe + ".nofast") and ".tmp" not in old.name:
                old.unlink()
    bld.status("")
    if rc != 0:
        text = text.replace(tree + "/", "/")  # mirrored paths name the original files
        err(text.rstrip())
        err("")
        for line in simulator_refusals(text):
            err(line)
        for line in bld.unsupported_cuda_advice(text):
            err(line)
        err(tr("error: %s did not compile for the simulator (the compiler's messages are above).") % name)
        raise BuildError("build failed", text)
    bld.status("")
    if os.environ.get("PUZZLES_VERBOSE"):
        err("built %s in %.1f s" % (exe, time.monotonic() - start))
    return exe


def report_record(path: str) -> None:
    """Prints the simulator's report from the record it left in `path` (none when the program
    ended without an error), and removes the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    if not text.strip():
        return
    try:
        record = json.loads(text)
    except ValueError:
        record = None
    lines = diagnosis.render(record) if isinstance(record, dict) else []
    if not lines:  # a record no renderer words: the simulator's own English
        message = record.get("message", "") if isinstance(record, dict) else text
        lines = ("cudasim: error: " + message).splitlines()
    for line in lines:
        err(line)


def cmd_sim(root: Path, args: List[str]) -> int:
    if args and args[0] in ("-h", "--help"):
        print(tr(HELP).format(prog=PROG))
        return 0
    opts = parse_args(args)
    try:
        exe = build_program(root, opts)
    except BuildError:
        return 2
    if opts["build_only"]:
        print(exe)
        return 0
    # The simulator writes its diagnosis record to this file instead of its English report, and
    # the report is worded here, in the learner's language (diagnosis.render).
    fd, record_file = tempfile.mkstemp(prefix="cudasim-record-", suffix=".json")
    os.close(fd)
    env = dict(os.environ, CUDASIM_RECORD_FILE=record_file)
    try:
        code = subprocess.run([exe] + opts["program_args"], timeout=opts["timeout"], env=env).returncode
        report_record(record_file)
        return code
    except subprocess.TimeoutExpired:
        report_record(record_file)
        err(tr("error: %s ran for more than %g s and was stopped. A large problem size takes long on the simulator: "
               "try a smaller one, CUDASIM_SCHEDULES=forward (one thread order instead of three), or --timeout S.")
            % (os.path.basename(opts["sources"][0]), opts["timeout"]))
        return 1
