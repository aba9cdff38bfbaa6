"""Fixtures for the CLI tests: a runner for scripts/puzzle.py, fixture puzzles, fake drivers.

A fake driver is a small Python script that speaks the driver protocol of
docs/architecture.md (output lines, `RESULT {...}`, exit codes 0/1/2/3/4, signals, hangs), so
the CLI's verdict mapping can be tested with `--binary` and no C++ build.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "puzzle.py"
# A Hangul syllable: what the tests of the Korean pages look for.
HANGUL = re.compile(r"[\uac00-\ud7a3]")

sys.path.insert(0, str(REPO / "scripts"))


class CliResult:
    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.output = proc.stdout + proc.stderr

    def __repr__(self):
        return "CliResult(rc=%d)\n--- stdout\n%s--- stderr\n%s" % (self.returncode, self.stdout, self.stderr)


def run_cli(*args, root=None, env=None, timeout=120, script=SCRIPT):
    """Run scripts/puzzle.py in a subprocess; root= points it at a fixture tree."""
    full_env = dict(os.environ)
    full_env.pop("PUZZLES_ROOT", None)
    full_env["PYTHONIOENCODING"] = "utf-8"
    if root is not None:
        full_env["PUZZLES_ROOT"] = str(root)
    full_env.update(env or {})
    proc = subprocess.run([sys.executable, str(script)] + [str(a) for a in args], cwd=str(REPO),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env,
                          timeout=timeout, universal_newlines=True, encoding="utf-8")
    return CliResult(proc)


@pytest.fixture
def cli():
    return run_cli


FIXTURE_PUZZLES = {
    "p98": {
        "title": "Fixture reduction",
        "summary": "a second fixture puzzle",
        "variants": {
            "tree": {"summary": "tree reduction in shared memory", "show": {"n": 8, "tpb": 8},
                     "tpb": [8, 32], "max_n": "tpb", "large_n": None},
        },
    },
    "p99": {
        "title": "Fixture scan",
        "summary": "fixture puzzle for the CLI tests",
        "variants": {
            "simple": {"summary": "one block, Kogge-Stone", "show": {"n": 8, "tpb": 8},
                       "tpb": [8, 32, 100], "max_n": "tpb", "large_n": None},
            "double-buffer": {"summary": "one block, two buffers", "show": {"n": 8, "tpb": 8},
                              "tpb": [8, 32], "max_n": "2*tpb", "large_n": None},
            "multi-block": {"summary": "any size, many blocks", "show": {"n": 20, "tpb": 8},
                            "tpb": [8, 256], "max_n": None,
                            "large_n": {"cpu": 100000, "gpu": 1000000}},
        },
    },
}

FIXTURE_PIXI = """\
[workspace]
name = "fixture"
channels = ["conda-forge"]
platforms = ["linux-64"]

[tasks.test]
cmd = "python3 scripts/puzzle.py test"
description = "tests"

# BEGIN generated puzzle tasks
# END generated puzzle tasks

[tasks.after]
cmd = "true"
description = "stays"
"""


@pytest.fixture
def fixture_root(tmp_path):
    """A repository root with fixture puzzles p98/p99 and a pixi.toml, for PUZZLES_ROOT."""
    root = tmp_path / "repo"
    for name, data in FIXTURE_PUZZLES.items():
        d = root / "puzzles" / name
        d.mkdir(parents=True)
        (d / "puzzle.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
        (d / (name + ".cu")).write_text("// learner file\n", encoding="utf-8")
    (root / "pixi.toml").write_text(FIXTURE_PIXI, encoding="utf-8")
    return root


FAKE_DRIVER = '''\
#!{python}
"""Fake puzzle driver for the CLI tests. Behaviour: {config!r}"""
import json, os, signal, sys, time

CONFIG = {config!r}
args = sys.argv[1:]
if CONFIG.get("log"):
    with open(CONFIG["log"], "a") as f:
        f.write(json.dumps(args) + "\\n")

def usage(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(2)

# The harness's command line: --variant NAME --n N --tpb T (--show | --seed S) [--schedules ...]
opts, i = {{}}, 0
while i < len(args):
    a = args[i]
    if a in ("--list", "--show"):
        opts[a] = True
        i += 1
    elif a in ("--variant", "--n", "--tpb", "--seed", "--schedules"):
        if i + 1 >= len(args):
            usage(a + " needs a value")
        opts[a] = args[i + 1]
        i += 2
    else:
        usage("unknown option " + a)
if "--list" in opts:
    print("\\n".join(CONFIG.get("variants_list", ["simple"])))
    sys.exit(0)
if "--variant" not in opts:
    usage("--variant is required")
if "--n" not in opts or "--tpb" not in opts:
    usage("--n and --tpb are required")
if "--show" not in opts and "--seed" not in opts:
    usage("give --show (the deterministic input) or --seed S (a random input)")
variant = opts["--variant"]
show = "--show" in opts
n = int(opts["--n"])
tpb = int(opts["--tpb"])
seed = int(opts.get("--seed", 0))

mode = CONFIG.get("modes", {{}}).get(variant, CONFIG.get("mode", "pass"))
if isinstance(mode, dict):  # {{"mode": "fail", "n_over": 40}}: fail only for larger sizes
    mode = mode["mode"] if n > mode.get("n_over", 0) else "pass"

if show:
    print("config:   SIZE = %d, TPB = %d" % (n, tpb))
    print("input:    0 1 2 3")
    print("out:      0 1 3 6" if mode != "fail" else "out:      0 1 3 7")
    print("expected: 0 1 3 6")
else:
    print("case: SIZE = %d, TPB = %d, seed = %d" % (n, tpb, seed))
sys.stdout.flush()
rc = 0
verdict = "pass"
diagnosis = None
if mode == "fail":
    print("mismatch at index 3: got 7, expected 6")
    rc, verdict = 1, "fail"
elif mode == "race":
    print("cudasim: error: race in kernel k (launched at p99.cu:3): the result depends on the order in which "
          "threads run", file=sys.stderr)
    rc, verdict = 3, "race"
    # A real driver's RESULT carries the simulator's typed diagnosis (harness/src/harness.cpp).
    diagnosis = {{"kind": "race_schedule", "sites": ["p99.cu:3"], "block": None, "threads": [],
                 "detail": None, "message": "race in kernel k (launched at p99.cu:3)"}}
elif mode == "error":
    print("kernel error: barrier divergence: thread 3 of block 0 skipped __syncthreads()",
          file=sys.stderr)
    rc, verdict = 4, "error"
elif mode == "crash":
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(5)
elif mode == "hang":
    time.sleep(600)
elif mode == "no-result":
    sys.exit(0)
elif mode == "usage":
    print("usage error: unknown variant", file=sys.stderr)
    sys.exit(2)
elif mode == "lie":  # exit 0 but report a failure
    verdict = "fail"
result = {{"verdict": verdict, "variant": variant, "n": n, "tpb": tpb, "seed": seed,
          "mismatches": 1 if verdict == "fail" else 0}}
if diagnosis is not None:
    result["diagnosis"] = diagnosis
print("RESULT " + json.dumps(result))
sys.exit(rc)
'''


@pytest.fixture
def fake_driver(tmp_path):
    """make(mode="pass", modes={variant: mode}, log=path) -> path of an executable fake driver."""
    counter = [0]

    def make(mode="pass", modes=None, log=None):
        counter[0] += 1
        config = {"mode": mode, "modes": modes or {}}
        if log:
            config["log"] = str(log)
        path = tmp_path / ("fake_driver_%d.py" % counter[0])
        path.write_text(FAKE_DRIVER.format(python=sys.executable, config=config), encoding="utf-8")
        path.chmod(0o755)
        return path

    return make


def read_log(path):
    """The argument lists a fake driver with log= was called with."""
    if not Path(path).exists():
        return []
    return [json.loads(l) for l in Path(path).read_text().splitlines() if l.strip()]


@pytest.fixture
def build_dir():
    """A configured build tree from $PUZZLES_BUILD_DIR, or skip."""
    env = os.environ.get("PUZZLES_BUILD_DIR")
    if not env:
        pytest.skip("needs a built tree: set PUZZLES_BUILD_DIR (`python3 scripts/puzzle.py test` does)")
    path = Path(env)
    if not (path / "CMakeCache.txt").is_file():
        pytest.skip("PUZZLES_BUILD_DIR=%s is not a configured CMake build tree" % env)
    return path


@pytest.fixture
def p14(build_dir):
    if not (REPO / "puzzles" / "p14" / "puzzle.json").is_file():
        pytest.skip("puzzles/p14/puzzle.json does not exist yet")
    from puzzlelib.puzzles import load_puzzle
    return load_puzzle(REPO / "puzzles" / "p14")
