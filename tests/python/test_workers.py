"""The same verdict with any number of worker threads (issue 19, item 3).

Every schedule of a checked launch runs its blocks one after another on one worker, and a thread
that polls global memory without end is reported by counting its reads, not by a clock
(harness/sim/src/scheduler.h, watch_spin). So `check` of every planted file, the check of every
solution and the simulator programs that wait across blocks give the same exit status and the same
report with CUDASIM_WORKERS 1, 2 and 4.

Needs PUZZLES_BUILD_DIR (planted binaries not built there are skipped).
"""
import concurrent.futures
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, run_cli
from test_planted import PLANTED, build_dir, planted_check

WORKERS = ("1", "2", "4")
PROGRAMS = REPO / "tests" / "sim" / "programs"


def verdict_text(output):
    """The output without what depends on the machine's speed: the seconds and total columns, and
    which line of a runaway thread's loop the watchdog's samples landed on most, and addresses."""
    lines = []
    for line in output.splitlines():
        line = re.sub(r"\s+\d+\.\d+(\s+|$)", " ", line)  # seconds columns
        line = re.sub(r"total \d+\.\d+ s", "total", line)
        line = re.sub(r"(looping at \S+):\d+", r"\1:N", line)
        line = re.sub(r"0x[0-9a-f]+", "0x...", line)  # where the arena was mapped (a freed buffer's address)
        lines.append(line.rstrip())
    return "\n".join(lines)


def each_worker_count(run):
    """run(workers) for 1, 2 and 4 workers at once: a checked run uses one core whatever the count,
    so the three share a 2-core machine well and the test takes the time of about two."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(WORKERS)) as pool:
        return dict(zip(WORKERS, pool.map(run, WORKERS)))


def run_with_workers(cmd, workers, env=None):
    e = dict(os.environ, **(env or {}))
    e["CUDASIM_WORKERS"] = workers
    # check and grade judge every block whatever CUDASIM_SAMPLE says: checking one drawn block (and
    # the first and last) would miss planted bugs in the others, and its draw would not matter.
    e["CUDASIM_SAMPLE"] = "1"
    return subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, env=e)


@pytest.mark.parametrize("path", PLANTED, ids=lambda p: "%s/%s" % (p.parent.name, p.stem))
def test_planted_verdict_does_not_depend_on_workers(path):
    h, puzzle, flag, cmd = planted_check(path)
    env = {k: v for k, v in h["env"].items() if k != "CUDASIM_WORKERS"}
    runs = each_worker_count(lambda w: run_with_workers(cmd, w, env))
    for w, proc in runs.items():
        assert proc.returncode == 1, "CUDASIM_WORKERS=%s: %s should fail check:\n%s" % (w, path.name, proc.stdout)
        verdict = re.search(r"^\S+ %s %s: (\w+) \(" % (re.escape(puzzle), re.escape(flag)), proc.stdout, re.M)
        assert verdict and verdict.group(1) == h["expect"], "CUDASIM_WORKERS=%s: expected %r:\n%s" % (w, h["expect"], proc.stdout)
        assert re.search(h["match"], proc.stdout), "CUDASIM_WORKERS=%s: expected /%s/:\n%s" % (w, h["match"], proc.stdout)
    texts = {w: verdict_text(p.stdout) for w, p in runs.items()}
    assert texts["1"] == texts["2"] == texts["4"], "\n\n".join("CUDASIM_WORKERS=%s:\n%s" % kv for kv in texts.items())


@pytest.mark.parametrize("puzzle", ["p12", "p13", "p14", "p29"])
def test_solution_passes_with_any_workers(puzzle):
    if build_dir() is None:
        pytest.skip("PUZZLES_BUILD_DIR is not set")
    cmd = [sys.executable, str(REPO / "scripts" / "puzzle.py"), "check", puzzle, "--solution", "--seed", "1"]
    for w, proc in each_worker_count(lambda w: run_with_workers(cmd, w)).items():
        assert proc.returncode == 0, "CUDASIM_WORKERS=%s:\n%s" % (w, proc.stdout)


def sim_with_workers(program, workers):
    return run_cli("sim", PROGRAMS / program, env={"PUZZLES_BUILD_DIR": str(build_dir()), "CUDASIM_WORKERS": workers},
                   timeout=300)


def test_spin_on_a_later_block_is_the_same_endless_wait_with_any_workers():
    """Block 0 waits for the last block: with blocks one after another it reads the flag without end,
    and that is reported at once, by a count of reads, the same way for every worker count (before,
    two workers could run the two blocks side by side and pass, one worker hit the block timeout)."""
    if build_dir() is None:
        pytest.skip("PUZZLES_BUILD_DIR is not set")
    runs = each_worker_count(lambda w: sim_with_workers("spin_on_later_block.cu", w))
    for w, r in runs.items():
        assert r.returncode == 4, (w, r)
        assert "block 0, thread 0 waits for ever: it read the same global memory at " in r.stderr, (w, r)
        assert re.search(r"spin_on_later_block\.cu:11 16384 times in a row", r.stderr), (w, r)
        assert "with 0 blocks before it finished and 7 not started" in r.stderr, (w, r)
    # The report (`sim` words it from the simulator's record) is the same, line for line.
    errors = {w: [l for l in r.stderr.splitlines() if not l.startswith(("building ", "waiting for another command"))]
              for w, r in runs.items()}
    assert errors["1"] == errors["2"] == errors["4"] and errors["1"], errors


@pytest.mark.parametrize("program", ["lookback_gives_up.cu", "stale_atomic_update.cu"])
def test_cross_block_program_fails_with_any_workers(program):
    """A look-back that gives up after a few polls and a read-then-atomicExch update: both are wrong
    only when blocks run side by side, and both fail on an H200 (bench/results/gpu-programs-h200-*).
    The 'random' schedule of a checked launch runs up to four blocks side by side on one worker,
    taking turns at barriers and polls, so both fail here too, with one verdict (exit status, printed
    result, the note that names the interleaving) for 1, 2 and 4 workers."""
    if build_dir() is None:
        pytest.skip("PUZZLES_BUILD_DIR is not set")
    runs = each_worker_count(lambda w: sim_with_workers(program, w))
    for w, r in runs.items():
        assert r.returncode == 1 and "Test FAILED" in r.stdout, (w, r)
        assert "The 'random' order also runs several blocks side by side, taking turns at barriers and polls" in r.stderr, (w, r)
    seen = {(r.returncode, r.stdout, "\n".join(l for l in r.stderr.splitlines() if l.startswith("cudasim:")))
            for r in runs.values()}
    assert len(seen) == 1, runs


def test_blocks_that_wait_for_each_other_take_turns(tmp_path):
    """Interleaving is not a false alarm for correct code: a chained scan whose blocks poll their
    predecessor's flag without giving up (tickets, so a block waits only for one that started)
    passes, although each poller must give its turn away many times before the flag comes."""
    if build_dir() is None:
        pytest.skip("PUZZLES_BUILD_DIR is not set")
    src = (PROGRAMS / "lookback_gives_up.cu").read_text()
    fixed = src.replace("&& polls < kPolls", "")
    assert fixed != src
    prog = tmp_path / "lookback_waits.cu"
    prog.write_text(fixed)
    runs = each_worker_count(lambda w: run_cli("sim", prog, env={"PUZZLES_BUILD_DIR": str(build_dir()),
                                                                  "CUDASIM_WORKERS": w}, timeout=300))
    for w, r in runs.items():
        assert r.returncode == 0 and "Test PASSED" in r.stdout, (w, r)
