"""The uninstrumented build of a program (harness/sim/src/fast_build.cpp): NAME.fast, the same
sources without the memory checker's calls, which NAME starts in its place when a run needs no
instrumentation (CUDASIM_CHECKS=0, no trace, no profile), with the same arguments, output, exit
status and reports.

Needs PUZZLES_BUILD_DIR (a build tree); skipped otherwise, and on other systems than Linux.
"""

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO, run_cli
from driver_helpers import binary

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the uninstrumented build is Linux's")

PROGRAMS = REPO / "tests" / "sim" / "programs"


def stats(path, env):
    """The STATS line of one p14 --complete run of a puzzle binary, and its verdict."""
    full = dict(os.environ, CUDASIM_WORKERS="1", **env)
    for var in ("CUDASIM_TRACE", "CUDASIM_PROFILE", "CUDASIM_FAST_BUILD", "CUDASIM_CHECKS"):
        if var not in env:
            full.pop(var, None)
    proc = subprocess.run([str(path), "--variant", "complete", "--n", "5000", "--tpb", "64", "--seed", "1", "--schedules",
                           "forward", "--stats"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, env=full, cwd=str(REPO), timeout=300)
    lines = {l.split(" ", 1)[0]: l.split(" ", 1)[1] for l in proc.stdout.splitlines() if l.startswith(("STATS ", "RESULT "))}
    assert proc.returncode == 0 and "STATS" in lines, proc.stdout
    return json.loads(lines["STATS"]), json.loads(lines["RESULT"])["verdict"]


def test_a_solution_runs_as_its_uninstrumented_build_only_when_nothing_needs_the_instrumentation(tmp_path):
    path = binary("p14_solution_cpu")
    if not path.with_name(path.name + ".fast").is_file():
        pytest.skip("%s.fast is not built" % path)
    cases = [
        ({"CUDASIM_CHECKS": "0"}, "uninstrumented"),
        ({"CUDASIM_CHECKS": "off"}, "uninstrumented"),
        ({}, "instrumented"),
        ({"CUDASIM_CHECKS": "1"}, "instrumented"),
        ({"CUDASIM_CHECKS": "0", "CUDASIM_FAST_BUILD": "0"}, "instrumented"),
        ({"CUDASIM_CHECKS": "0", "CUDASIM_PROFILE": str(tmp_path / "profile.jsonl")}, "instrumented"),
    ]
    for env, build in cases:
        s, verdict = stats(path, env)
        assert (s["build"], verdict) == (build, "pass"), env


def test_the_uninstrumented_build_refuses_to_check():
    """Run by hand with the checker on, it would see no access: it says so and stops."""
    path = binary("p14_solution_cpu")
    fast = path.with_name(path.name + ".fast")
    if not fast.is_file():
        pytest.skip("%s is not built" % fast)
    proc = subprocess.run([str(fast), "--variant", "complete", "--n", "100", "--tpb", "32", "--seed", "1"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, cwd=str(REPO), timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "CUDASIM_CHECKS"})
    assert proc.returncode == 4 and "this is the uninstrumented build of the program" in proc.stdout, proc.stdout


WHO = """\
#include <cstdio>
#include <unistd.h>
__global__ void add_one(int* v) { v[threadIdx.x] += 1; }
int main(int argc, char** argv) {
  char self[4096] = {0};
  if (readlink("/proc/self/exe", self, sizeof self - 1) < 0) return 2;
  int* d;
  cudaMalloc(&d, 32 * sizeof(int));
  cudaMemset(d, 0, 32 * sizeof(int));
  add_one<<<1, 32>>>(d);
  int h[32];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  std::printf("argv0=%s exe=%s sum=%d\\n", argv[0], self, h[0] + h[31]);
  return 0;
}
"""


def test_sim_builds_the_uninstrumented_build_for_a_run_with_the_checks_off(build_dir, tmp_path):
    """`CUDASIM_CHECKS=0 puzzle.py sim` builds NAME.fast beside NAME, and a run with the checks off
    goes through it with the program's own argv[0]; a checked run does not."""
    src = tmp_path / "who.cu"
    src.write_text(WHO)
    env = {"PUZZLES_BUILD_DIR": str(build_dir), "CUDASIM_CHECKS": "0"}
    exe = run_cli("sim", "--build-only", src, env=env, timeout=600).stdout.strip().splitlines()[-1]
    assert os.path.isfile(exe + ".fast"), exe
    for checks, ran in (("0", exe + ".fast"), ("1", exe)):
        proc = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=300,
                              env=dict(os.environ, CUDASIM_CHECKS=checks))
        assert proc.returncode == 0 and proc.stdout == "argv0=%s exe=%s sum=2\n" % (exe, ran), proc.stdout
    r = run_cli("sim", src, env=env, timeout=600)
    assert r.returncode == 0 and r.stdout.startswith("argv0=%s exe=%s.fast " % (exe, exe)), r


def test_sim_programs_give_the_same_output_uninstrumented(build_dir):
    sources = [PROGRAMS / "multi_file" / "main.cu", PROGRAMS / "multi_file" / "host_reference.cpp"]
    env = {"PUZZLES_BUILD_DIR": str(build_dir), "CUDASIM_CHECKS": "0", "CUDASIM_WORKERS": "1"}
    fast = run_cli("sim", *sources, "--", "2000", env=env, timeout=600)
    slow = run_cli("sim", *sources, "--", "2000", env=dict(env, CUDASIM_FAST_BUILD="0"), timeout=600)
    assert fast.returncode == slow.returncode == 0 and fast.stdout == slow.stdout and "Test PASSED" in fast.stdout, (fast, slow)
