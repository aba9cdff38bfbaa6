"""The advice rules of diagnosis_errors.py and diagnosis_crash.py: each rule is chosen for a kernel
that triggers it and not for a close one. The kernels are planted learner files whose header names
the rule (`// advice: ID`, run with their failing case's flags) and the cases of
tests/python/programs/diagnosis_errors.cu. Needs PUZZLES_BUILD_DIR; skipped otherwise."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

import test_planted
from puzzlelib import diagnosis, driver
from test_diagnosis_errors import program_path, run_case

FAMILY_MODULES = ("puzzlelib.diagnosis_errors", "puzzlelib.diagnosis_crash")

# Planted files and the case that fails (variant, n, tpb; seed 1).
PLANT_CASES = {
    "p12/k1_barrier_in_if": ("k1", 100, 32),
    "p12/k3_barrier_in_if": ("k3", 100, 32),
    "p14/simple_barriers_in_offset_if": ("simple", 30, 32),
    "p14/simple_barrier_in_if": ("simple", 30, 32),
    "p29/multi_stage_barrier_in_if": ("multi-stage", 1000, 256),
    "p29/double_buffer_skip_arrive": ("double-buffer", 1000, 256),
    "p29/multi_stage_stride_from_start": ("multi-stage", 1000, 256),
    "p14/single_pass_tile_from_block_index": ("single-pass", 1000, 32),
}
PLANTS = [(name, rule) for name in sorted(PLANT_CASES)
          for rule in test_planted.header(REPO / "tests" / "planted" / (name + ".plant"))["advice"]]

# (rule, case of the program that triggers it, environment, a close case where it must not be chosen,
# its environment). A rule that no real kernel can trigger on this machine takes a real record
# with one fact changed (SYNTHETIC).
PROGRAM_CASES = [
    ("divergence_returned_early", "early_return", {}, "barrier_in_if", {}),
    ("divergence_different_barriers", "barrier_in_if", {}, "early_return", {}),
    ("warp_mask_from_activemask", "activemask_deadlock", {}, "warp_cycle", {}),
    ("warp_lanes_never_arrive", "warp_cycle", {}, "activemask_deadlock", {}),
    ("warp_lanes_never_arrive", "shfl_vs_barrier", {}, "activemask_deadlock", {}),
    ("cuda_barrier_missing_arrivals", "cbar_missing_arrival", {}, "warp_cycle", {}),
    ("runaway_loop_at_line", "stride_stays_0", {"CUDASIM_STALL_SECONDS": "1"}, "barrier_loop", {"CUDASIM_MAX_BARRIERS": "100"}),
    ("endless_wait_on_later_block", "wait_for_block_0", {}, "wait_for_block_0",
     {"CUDASIM_CHECKS": "0", "CUDASIM_WORKERS": "1", "CUDASIM_BLOCK_SECONDS": "1"}),
    ("endless_wait_no_writer", "wait_for_block_0", {"CUDASIM_CHECKS": "0", "CUDASIM_WORKERS": "1", "CUDASIM_BLOCK_SECONDS": "1"},
     "wait_for_block_0", {}),
    ("crash_null_pointer_in_kernel", "null_store", {}, "host_null", {}),
    ("crash_not_device_memory_in_kernel", "wild_store", {}, "null_store", {}),
]
# The stall watchdog samples where a runaway thread runs; a thread whose samples all fall outside
# the learner's code (none do on Linux x86-64 and aarch64) gets the words of a loop it cannot name.
SYNTHETIC = [("runaway_loop_not_located", "stride_stays_0", {"CUDASIM_STALL_SECONDS": "1"}, {"where": "last_access"})]


@pytest.fixture(scope="module")
def program():
    return program_path()


def family_rules():
    diagnosis._load()
    return sorted({a.id for a in diagnosis.ADVICE if a.say.__module__ in FAMILY_MODULES})


def test_every_rule_of_the_family_is_tested():
    tested = {r for _, r in PLANTS} | {c[0] for c in PROGRAM_CASES} | {c[0] for c in SYNTHETIC}
    assert set(family_rules()) == tested, set(family_rules()) ^ tested
    assert len(family_rules()) >= 10


def planted_record(name):
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("PUZZLES_BUILD_DIR is not set")
    puzzle, stem = name.split("/")
    binary = Path(build) / "bin" / ("planted_%s_%s_cpu" % (puzzle, stem))
    if not binary.exists():
        pytest.skip("%s was not built" % binary)
    variant, n, tpb = PLANT_CASES[name]
    h = test_planted.header(REPO / "tests" / "planted" / (name + ".plant"))
    proc = subprocess.run([str(binary), "--variant", variant, "--n", str(n), "--tpb", str(tpb), "--seed", "1"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                          env=dict(os.environ, **h["env"]), cwd=str(REPO))
    results = [r for r in (driver.parse_result_line(l)[1] for l in proc.stdout.splitlines()) if r is not None]
    assert results, proc.stdout
    record = driver.diagnosis_record(results[-1])
    assert record is not None, proc.stdout
    return record


@pytest.mark.parametrize("name,rule", PLANTS, ids=["%s:%s" % p for p in PLANTS])
def test_a_planted_bug_chooses_its_rule(name, rule):
    record = planted_record(name)
    chosen = diagnosis.chosen_advice(record)
    assert chosen is not None and chosen.id == rule, (chosen, json.dumps(record["facts"])[:400])
    # The advice is the report's: its words are in the rendering, in English.
    assert chosen.say(record).split("\n")[0] in "\n".join(diagnosis.render(record))


@pytest.mark.parametrize("rule,case,env,close,close_env", PROGRAM_CASES, ids=["%s:%s" % (c[0], c[1]) for c in PROGRAM_CASES])
def test_a_kernel_triggers_the_rule_and_a_close_one_does_not(program, rule, case, env, close, close_env):
    record, _ = run_case(program, case, env)
    chosen = diagnosis.chosen_advice(record)
    assert chosen is not None and chosen.id == rule, (chosen, record["facts"])
    other, _ = run_case(program, close, close_env)
    other_choice = diagnosis.chosen_advice(other)
    assert other_choice is None or other_choice.id != rule, (other_choice, other["facts"])


@pytest.mark.parametrize("rule,case,env,change", SYNTHETIC, ids=[c[0] for c in SYNTHETIC])
def test_a_rule_no_kernel_reaches_here(program, rule, case, env, change):
    real, _ = run_case(program, case, env)
    assert diagnosis.chosen_advice(real).id != rule  # the real kernel: the close one
    record = dict(real, facts=dict(real["facts"], **change))
    assert diagnosis.chosen_advice(record).id == rule
