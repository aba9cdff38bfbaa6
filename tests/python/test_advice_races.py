"""The memory checker's diagnoses (scripts/puzzlelib/diagnosis_races.py): every advice rule of the
family is chosen for a kernel that must trigger it and not for a close kernel that must not, the
reports read as the simulator's English and have a Korean form.

The kernels are planted bugs (tests/planted/<puzzle>/<name>.plant), built by the test build into
$PUZZLES_BUILD_DIR/bin/planted_<puzzle>_<name>_cpu; each case runs one input of one variant and
reads the diagnosis record from RESULT. The first tests need no build: they render stored records.
"""

import copy
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import HANGUL, REPO
from driver_helpers import result

from puzzlelib import diagnosis, diagnosis_races, driver, messages
from test_planted import PLANTED, header

FAMILY_KINDS = set(diagnosis_races.RACE_KINDS) | {"race_schedule", "uninit_shared", "uninit_device", "out_of_bounds",
                                                   "use_after_free"}

# A kernel: (puzzle, planted file, variant, n, tpb, seed, environment). W1: CUDASIM_WORKERS=1.
W1 = {"CUDASIM_WORKERS": "1"}
ATOMIC_PLAIN_ADD = ("p12", "atomic_plain_add", "atomic", 7, 8, 28055294, W1)
BLOCKS_ADD_INTO_OUT0 = ("p12", "k1_blocks_add_into_out0", "k1", 9, 8, 1, {})
SHUFFLE_NO_THREADFENCE = ("p12", "shuffle_no_threadfence", "shuffle", 488, 32, 1185705549, W1)
SHUFFLE_THREADFENCE_BLOCK = ("p12", "shuffle_threadfence_block", "shuffle", 488, 32, 1185705549, W1)
SHUFFLE_NO_ACQUIRE = ("p12", "shuffle_no_acquire_fence", "shuffle", 488, 32, 1185705549, W1)
SHUFFLE_TICKET_PLAIN = ("p12", "shuffle_ticket_read_plainly", "shuffle", 488, 32, 1185705549, W1)
TWO_ATOMICS = ("p14", "single_pass_flag_and_value_two_atomics", "single-pass", 5000, 32, 1, W1)
K7_IN_PLACE = ("p12", "k7_in_place", "k7", 100000, 256, 1, {})
K7_LDG_IN_PLACE = ("p12", "k7_ldg_in_place", "k7", 100000, 256, 1, {})
K3_NO_BARRIER_IN_LOOP = ("p12", "k3_no_barrier_in_loop", "k3", 8, 8, 1, {})
K1_PRECEDENCE_OVERLAP = ("p12", "k1_precedence_overlap", "k1", 8, 8, 1, {})
K5_VOLATILE = ("p12", "k5_volatile_last_warp", "k5", 1, 64, 1042048613, {})
EVERY_THREAD_STORES = ("p12", "k1_every_thread_stores", "k1", 1, 8, 583230845, {})
ARRIVE_BEFORE_WRITE = ("p29", "double_buffer_arrive_before_write", "double-buffer", 7, 8, 1604826353, W1)
MULTI_STAGE_NO_BARRIER = ("p29", "multi_stage_no_barrier_1_2", "multi-stage", 1, 256, 1723292743, {})
NO_READ_WRITE_SPLIT = ("p14", "simple_no_read_write_split", "simple", 7, 8, 1252362307, {})
BRENT_KUNG_NO_BARRIER = ("p14", "brent_kung_downsweep_no_barrier", "brent-kung", 3, 4, 1221330772, {})
PADDING_UNWRITTEN = ("p13", "block_padding_unwritten", "block", 1, 4, 338453231, W1)
TICKET_NOT_ZEROED = ("p12", "shuffle_own_ticket_not_zeroed", "shuffle", 1, 32, 1011706735, {})
LOOK_BACK_PAST_INCLUSIVE = ("p14", "single_pass_look_back_past_inclusive", "single-pass", 5000, 32, 1, W1)
LAST_THREAD_IN_GLOBAL = ("p12", "k1_last_thread_in_global", "k1", 1, 8, 583230845, {})
PRECEDENCE_UNGUARDED = ("p12", "k1_precedence_unguarded", "k1", 1, 8, 583230845, {})
READ_BEFORE_START = ("p14", "simple_read_before_start", "simple", 7, 8, 1252362307, W1)
INT4_LOOP_PAST_END = ("p12", "shuffle_int4_loop_past_end", "shuffle", 1, 32, 1011706735, {})
WORK_FREED_EARLY = ("p12", "k1_work_freed_early", "k1", 9, 8, 843969056, {})

# rule -> (kernels that must trigger it, kernels close to them that must not)
CASES = {
    "race_block_scope_atomic": ([("p12", "atomic_block_scope", "atomic", 9, 8, 1440727490, {})], [ATOMIC_PLAIN_ADD]),
    "race_mixed_size": ([TWO_ATOMICS], [SHUFFLE_TICKET_PLAIN]),
    "race_plain_vs_atomic": ([SHUFFLE_TICKET_PLAIN], [TWO_ATOMICS]),
    "race_restrict_param": ([K7_IN_PLACE], [K7_LDG_IN_PLACE]),
    "race_ldg": ([K7_LDG_IN_PLACE], [K7_IN_PLACE]),
    "race_missing_acquire": ([SHUFFLE_NO_ACQUIRE], [SHUFFLE_NO_THREADFENCE]),
    "race_block_fence": ([SHUFFLE_THREADFENCE_BLOCK], [SHUFFLE_NO_THREADFENCE]),
    "race_one_writer": ([EVERY_THREAD_STORES], [ATOMIC_PLAIN_ADD]),
    "race_cross_block_accumulator": ([BLOCKS_ADD_INTO_OUT0], [ATOMIC_PLAIN_ADD]),
    "race_cross_block_release": ([SHUFFLE_NO_THREADFENCE, ("p13", "complete_in_place", "complete", 17, 4, 1469065111, {}),
                                  ("p13", "single_pass_no_threadfence", "single-pass", 238, 32, 1780609421, W1),
                                  ("p14", "single_pass_flag_and_value_apart", "single-pass", 5000, 32, 1, W1)],
                                 [SHUFFLE_THREADFENCE_BLOCK, SHUFFLE_NO_ACQUIRE]),
    "race_accumulator": ([ATOMIC_PLAIN_ADD, ("p12", "atomic_shared_accumulator", "atomic", 7, 8, 28055294, W1)],
                         [BLOCKS_ADD_INTO_OUT0, EVERY_THREAD_STORES]),
    "race_cuda_barrier_phase": ([ARRIVE_BEFORE_WRITE], [MULTI_STAGE_NO_BARRIER]),
    # The same_warp fact holds for k3's 8 threads too, but in a one-warp block __syncthreads() is the lesson.
    "race_same_warp": ([K5_VOLATILE], [K3_NO_BARRIER_IN_LOOP]),
    "race_loop_step": ([K3_NO_BARRIER_IN_LOOP, ("p13", "block_tree_no_barrier", "block", 1, 4, 338453231, {})],
                       [K1_PRECEDENCE_OVERLAP]),
    "race_same_step_overlap": ([K1_PRECEDENCE_OVERLAP], [K3_NO_BARRIER_IN_LOOP]),
    "race_read_write_split": ([NO_READ_WRITE_SPLIT], [BRENT_KUNG_NO_BARRIER]),
    "race_missing_barrier": ([BRENT_KUNG_NO_BARRIER, MULTI_STAGE_NO_BARRIER], [NO_READ_WRITE_SPLIT]),
    "uninit_shared_garbage": ([PADDING_UNWRITTEN], [TICKET_NOT_ZEROED]),
    "uninit_device_garbage": ([TICKET_NOT_ZEROED, ("p12", "k1_blocks_add_into_out0", "k1", 1, 8, 583230845, {})],
                              [PADDING_UNWRITTEN]),
    "schedule_blocks_interleave": ([LOOK_BACK_PAST_INCLUSIVE], [LAST_THREAD_IN_GLOBAL]),
    "schedule_thread_order": ([LAST_THREAD_IN_GLOBAL], [LOOK_BACK_PAST_INCLUSIVE]),
    "oob_index_expression": ([PRECEDENCE_UNGUARDED, READ_BEFORE_START, ("p12", "k3_no_load_guard", "k3", 1, 8, 551164033, {}),
                              ("p29", "multi_stage_blur_across_tile", "multi-stage", 1, 256, 1723292743, {})],
                             [INT4_LOOP_PAST_END]),
    "oob_guard_both_sides": ([INT4_LOOP_PAST_END], [PRECEDENCE_UNGUARDED]),
    "use_after_free_release_late": ([WORK_FREED_EARLY], [PRECEDENCE_UNGUARDED]),
}


def family_rules():
    diagnosis._load()
    return [a.id for a in diagnosis.ADVICE if set(a.kinds) & FAMILY_KINDS]


def test_every_rule_of_the_family_has_a_trigger_and_a_close_non_trigger():
    assert sorted(family_rules()) == sorted(CASES)
    for rule, (triggers, others) in CASES.items():
        assert triggers and others, rule


def test_a_planted_file_that_names_a_rule_of_the_family_triggers_it_here():
    """`// advice: RULE` in a planted file (the rule of the case `check --seed 1` fails on): one of the
    trigger cases runs that file."""
    ours = set(family_rules())
    named = [(p, r) for p in PLANTED for r in header(p)["advice"] if r in ours]
    assert len(named) >= len(ours), named
    for path, rule in named:
        plants = [k[1] for k in CASES[rule][0] if k[0] == path.parent.name]
        assert path.stem in plants, "%s names %s, which no trigger case runs" % (path, rule)


# ---- records rendered without a build ------------------------------------------------------------

# The precedence slip (tests/planted/p12/k1_precedence_overlap.plant, k1 n=8 tpb=8 seed=1): thread 0
# reads sdata[2] and thread 2, also active in that step, writes it, between the same two barriers.
PRECEDENCE = {
    "kind": "race_shared", "sites": ["p12.cu:86", "p12.cu:86"], "block": [0, 0, 0], "threads": [[0, 0, 0], [2, 0, 0]],
    "interleaved": False,
    "facts": {"kernel": "reduce_k1", "launch_site": "p12.cu:97", "grid_dim": [1, 1, 1], "block_dim": [8, 1, 1],
              "block_threads": 8, "space": "shared", "dynamic_shared": True, "hazards": 2,
              "pairs": [{"hazard": "write-after-read", "first": "read", "first_how": "", "first_site": "p12.cu:86",
                         "second": "write", "second_how": "", "second_site": "p12.cu:86", "count": 2}],
              "hazard": "write-after-read", "array": "sdata", "index": 2, "access_first": "read", "access_second": "write",
              "atomic_first": False, "atomic_second": False, "block_first": [0, 0, 0], "class": "plain",
              "cross_block": False, "same_warp": True, "cbar": False, "accumulator": False, "read_at_line": True,
              "missing_acquire": False, "epoch_first": 2, "epoch_second": 2, "times_first": 1, "times_second": 1,
              "interval_from": "p12.cu:87", "interval_to": "p12.cu:87"},
}


@pytest.fixture
def korean():
    messages.activate()
    messages.set_lang("ko")
    yield
    messages.set_lang(None)
    messages._active = False


def test_the_precedence_slip_is_one_step_with_overlapping_elements():
    assert diagnosis.chosen_advice(PRECEDENCE).id == "race_same_step_overlap"
    lines = diagnosis.render(PRECEDENCE)
    assert lines[0] == "race in kernel reduce_k1 (launched at p12.cu:97): 2 hazards on shared memory."
    assert lines[1] == "  write-after-read between read at p12.cu:86 and write at p12.cu:86 [2 hazards]"
    assert lines[2] == ("  first: block 0 thread 0 read __shared__ sdata[2] at p12.cu:86, then block 0 thread 2 wrote it at "
                        "p12.cu:86,")
    assert lines[3] == ("         with no barrier between them (between the barrier at p12.cu:87 and the barrier at "
                        "p12.cu:87).")
    assert lines[4].startswith("  Both accesses were in the same step of the loop (between the same two barriers): thread 0 "
                               "read sdata[2], and thread 2, also active in that step, wrote it.")
    assert "different steps" not in "\n".join(lines)


def test_an_overlap_outside_a_loops_barrier_is_worded_as_one_interval():
    d = copy.deepcopy(PRECEDENCE)
    d["facts"]["interval_to"] = None  # from the barrier at p12.cu:87 to the block's end: no loop step
    assert diagnosis.chosen_advice(d).id == "race_same_step_overlap"
    assert diagnosis.advice_text(d).startswith(
        "Both accesses were between the same two barriers: thread 0 read sdata[2], and thread 2, also active there, "
        "wrote it.")


def test_a_thread_that_ran_the_line_several_times_between_two_barriers_was_in_several_steps():
    d = copy.deepcopy(PRECEDENCE)
    d["facts"].update(times_first=3, interval_to=None, index=1)
    d["threads"][1] = [1, 0, 0]
    assert diagnosis.chosen_advice(d).id == "race_loop_step"
    assert diagnosis.render(d)[-1] == (
        "  The threads were in different steps of the loop: thread 0 ran this line 3 times with no barrier in between, and "
        "read sdata[1] before thread 1 had updated it for an earlier step. End every step with __syncthreads() inside the "
        "loop, so that no thread starts the next step before all have finished this one.")
    # A record without the counts (an older simulator) keeps the loop-step advice.
    for name in ("times_first", "times_second"):
        del d["facts"][name]
    assert diagnosis.chosen_advice(d).id == "race_loop_step"


def test_the_precedence_slip_in_korean(korean):
    lines = diagnosis.render(PRECEDENCE)
    assert lines[0] == "Race Condition: kernel reduce_k1 (p12.cu:97에서 launch)에서 hazard 2개 (shared memory)."
    assert lines[1] == "  write-after-read: p12.cu:86의 read와 p12.cu:86의 write 사이 [hazard 2개]"
    assert "thread 0이 __shared__ sdata[2]를 p12.cu:86에서 읽었고" in lines[2]
    assert "thread 2가 p12.cu:86에서 같은 element를 썼습니다" in lines[2]
    assert lines[3] == "         둘 사이에 Barrier가 없습니다 (p12.cu:87의 Barrier와 p12.cu:87의 Barrier 사이)."
    assert "thread 0이 sdata[2]를 읽었고" in lines[4] and "thread 2가" in lines[4]
    assert all(HANGUL.search(l) for l in lines[2:]), lines
    assert not any(re.search(r"\{\w+\}", l) for l in lines), lines


def test_the_uninitialized_reads_beside_a_race_follow_it():
    d = copy.deepcopy(PRECEDENCE)
    d["facts"]["uninit"] = {"kernel": "reduce_k1", "launch_site": "p12.cu:97", "grid_dim": [1, 1, 1],
                            "block_dim": [8, 1, 1], "space": "device", "reads": 2,
                            "read_sites": [{"site": "p12.cu:79", "count": 2}], "array": "in", "index": 9,
                            "site": "p12.cu:79", "block": [1, 0, 0], "thread": [1, 0, 0], "interval_from": None,
                            "interval_to": "p12.cu:80"}
    lines = diagnosis.render(d)
    assert lines[5:] == [
        "also: uninitialized read in kernel reduce_k1 (launched at p12.cu:97): 2 reads of device memory that nothing wrote.",
        "  read at p12.cu:79 [2 times]",
        "  first: block 1 thread 1 read in[9] at p12.cu:79 (between the kernel's start and the barrier at p12.cu:80), before "
        "any thread or cudaMemcpy/cudaMemset wrote it.",
        "  cudaMalloc memory holds garbage: write every element before a kernel reads it (cudaMemcpy, cudaMemset or a "
        "kernel), or guard the read with the bounds check."]


# ---- the index expression of an out-of-bounds access ------------------------------------------------

def oob_record(tmp_path, line, index, size, space="shared", block_x=8):
    src = tmp_path / "k.cu"
    src.write_text("// a kernel\n" + line + "\n", encoding="utf-8")
    return {"kind": "out_of_bounds", "sites": ["%s:2" % src], "block": [0, 0, 0], "threads": [[6, 0, 0]],
            "facts": {"kernel": "k", "launch_site": "k.cu:9", "grid_dim": [1, 1, 1], "block_dim": [block_x, 1, 1],
                      "access": "read", "space": space, "site": "%s:2" % src, "array": "sdata", "index": index,
                      "size": size}}


def test_the_index_expression_is_named_when_one_subscript_can_have_produced_it(tmp_path):
    d = oob_record(tmp_path, "    if (tid % 2 * s == 0) sdata[tid] += sdata[tid + s];  // sdata[x]", 8, 8)
    assert diagnosis_races.subscripts(diagnosis_races.source_line(d["sites"][0]), "sdata") == ["tid", "tid + s"]
    assert diagnosis.chosen_advice(d).id == "oob_index_expression"
    assert diagnosis.advice_text(d) == (
        "The index `tid + s` reached 8, past the end of sdata (valid indices 0 to 7): guard the access with "
        "`tid + s < blockDim.x`, or change the index arithmetic so that it stays inside the array.")
    # An array that is not blockDim.x long is bounded by its size.
    assert "`tid + s < 8`" in diagnosis.advice_text(oob_record(tmp_path, "sdata[tid] += sdata[tid + s];", 8, 8, block_x=16))
    # Before the start: the subtracting subscript, and its guard as a comparison.
    d = oob_record(tmp_path, "v = sdata[i] + sdata[i - offset];", -1, 8)
    assert "`i >= offset`" in diagnosis.advice_text(d) and "`i - offset` reached -1" in diagnosis.advice_text(d)


def test_the_general_advice_when_the_subscript_cannot_be_told(tmp_path):
    both_add = oob_record(tmp_path, "sdata[tid] = sdata[tid + s] + sdata[tid + 2 * s];", 9, 8)
    assert diagnosis.chosen_advice(both_add).id == "oob_guard_both_sides"
    other_name = oob_record(tmp_path, "const int4 v = in4[i];", 9, 8)  # the record names `sdata`, the line `in4`
    assert diagnosis.chosen_advice(other_name).id == "oob_guard_both_sides"
    missing = oob_record(tmp_path, "sdata[tid + s];", 8, 8)
    os.unlink(missing["facts"]["site"].rpartition(":")[0])
    assert diagnosis.chosen_advice(missing).id == "oob_guard_both_sides"
    no_site = copy.deepcopy(missing)
    no_site["facts"]["site"] = "?"
    no_site["sites"] = []
    assert diagnosis.chosen_advice(no_site).id == "oob_guard_both_sides"


def test_a_pointer_argument_outside_the_buffers_is_worded_from_the_launchs_facts():
    d = {"kind": "use_after_free", "sites": ["p12.cu:97"], "facts": {"kernel": "reduce_k1", "launch_site": "p12.cu:97",
                                                                    "case": "argument", "argument": 2, "address": "0x7f00"}}
    assert diagnosis.render(d) == [
        "kernel reduce_k1 (launched at p12.cu:97): argument 2 of the kernel is 0x7f00, which is not device memory: it "
        "points into a buffer that cudaFree already released (use after free).",
        "  Call cudaFree only after the last kernel that uses the buffer, and do not use a pointer into it afterwards."]
    d["kind"] = "out_of_bounds"
    assert diagnosis.render(d)[0].endswith("it points outside every buffer (out of bounds).")


def test_a_record_with_fewer_facts_still_renders():
    for kind in sorted(FAMILY_KINDS):
        assert diagnosis.render({"kind": kind, "facts": {}}), kind
        assert diagnosis.render({"kind": kind, "facts": {"kernel": "k"}, "sites": ["k.cu:3"]}), kind


# ---- kernels ------------------------------------------------------------------------------------------

def record(kernel):
    """The diagnosis record of one run of a planted kernel, from the repository root (the sites are
    relative to it, as under the CLI)."""
    puzzle, name, variant, n, tpb, seed, env = kernel
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build:
        pytest.skip("set PUZZLES_BUILD_DIR to the test build to run the planted kernels")
    binary = Path(build) / "bin" / ("planted_%s_%s_cpu" % (puzzle, name))
    if not binary.is_file():
        pytest.skip("%s is not built" % binary)
    proc = subprocess.run([str(binary), "--variant", variant, "--n", str(n), "--tpb", str(tpb), "--seed", str(seed)],
                          cwd=str(REPO), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          timeout=120, env=dict(os.environ, **env))
    d = driver.diagnosis_record(result(proc.stdout))
    assert d, "%s: no diagnosis:\n%s" % (name, proc.stdout)
    return d


def kernel_id(k):
    return "%s/%s" % (k[0], k[1])


TRIGGERS = [(rule, k) for rule, (ks, _) in CASES.items() for k in ks]
NON_TRIGGERS = [(rule, k) for rule, (_, ks) in CASES.items() for k in ks]


@pytest.mark.parametrize("rule,kernel", TRIGGERS, ids=["%s-%s" % (r, kernel_id(k)) for r, k in TRIGGERS])
def test_the_kernel_triggers_the_rule(rule, kernel):
    d = record(kernel)
    chosen = diagnosis.chosen_advice(d)
    assert chosen is not None and chosen.id == rule, (chosen, d["facts"])
    english = diagnosis.render(d)
    if not d["facts"]:
        return  # found outside this family's code (a launch's pointer argument): worded where it is found
    # The report reads as the simulator's own message: every line but the advice (its own, and that
    # of a record nested in it: "The memory checker also found") is one of its lines.
    words = diagnosis.advice_text(d) or ""
    also = d["facts"].get("also")
    if isinstance(also, dict) and also.get("kind"):
        words += "\n" + (diagnosis.advice_text(dict(also, facts=also.get("facts") or {})) or "")
    message = d["message"].splitlines()
    assert english[0] == message[0]
    rest = [l for l in english if l.strip() not in words]
    assert rest and all(l in message for l in rest), (rest, message)


@pytest.mark.parametrize("rule,kernel", NON_TRIGGERS, ids=["%s-%s" % (r, kernel_id(k)) for r, k in NON_TRIGGERS])
def test_the_close_kernel_does_not_trigger_the_rule(rule, kernel):
    d = record(kernel)
    chosen = diagnosis.chosen_advice(d)
    assert chosen is not None and chosen.id != rule, chosen
    assert d["kind"] in FAMILY_KINDS


@pytest.mark.parametrize("kernel", [K1_PRECEDENCE_OVERLAP, PRECEDENCE_UNGUARDED, LOOK_BACK_PAST_INCLUSIVE, TWO_ATOMICS],
                         ids=kernel_id)
def test_the_report_has_a_korean_form(kernel, korean):
    d = record(kernel)
    lines = diagnosis.render(d)
    assert HANGUL.search(lines[0]) and HANGUL.search(lines[-1]), lines
    assert not any(re.search(r"\{\w+\}", l) for l in lines), lines


def test_the_precedence_slips_index_is_named_from_its_line():
    d = record(PRECEDENCE_UNGUARDED)
    f = d["facts"]
    assert (f["array"], f["index"], f["size"], f["access"], f["space"]) == ("sdata", 8, 8, "read", "shared")
    assert diagnosis.advice_text(d).startswith("The index `tid + s` reached 8, past the end of sdata (valid indices 0 to 7): "
                                               "guard the access with `tid + s < blockDim.x`")
