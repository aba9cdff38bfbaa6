"""The reports of the simulator's errors other than races, uninitialized reads and out-of-bounds
accesses (scripts/puzzlelib/diagnosis_errors.py, diagnosis_crash.py), from real kernels: each case
of tests/python/programs/diagnosis_errors.cu plants one bug, and the simulator's diagnosis record
(printed by the program's fatal hook) is rendered in English, where it reads as the simulator's own
message, and in Korean, where no English sentence is left outside code, paths and the notes' terms.

Needs PUZZLES_BUILD_DIR (`puzzle.py sim` builds the program against its libcudasim); skipped otherwise.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HANGUL, REPO, run_cli

import english_detector
from puzzlelib import catalog, diagnosis, explain, messages

PROGRAM = REPO / "tests" / "python" / "programs" / "diagnosis_errors.cu"
MODULES = [REPO / "scripts" / "puzzlelib" / "diagnosis_errors.py", REPO / "scripts" / "puzzlelib" / "diagnosis_crash.py"]
FAMILY_KINDS = ["deadlock", "barrier_divergence", "runaway_thread", "endless_wait", "runaway_block", "runaway_barrier",
                "warp_lane_returned", "warp_mask_without_self", "warp_misuse", "cuda_barrier_misuse", "stack_overflow",
                "null_dereference", "crash_host", "crash_device", "arithmetic", "out_of_memory", "shared_arena_full",
                "shared_memory_limit", "bad_pointer_argument", "exception", "device_code_from_host", "host_call",
                "host_copy_in_launcher"]


def build_program(build_dir, source):
    r = run_cli("sim", source, "--build-only", env={"PUZZLES_BUILD_DIR": str(build_dir)}, timeout=600)
    assert r.returncode == 0, r
    return Path(r.stdout.strip().splitlines()[-1])


_built = {}


def program_path():
    """The built program (once per session), or skip without a build tree."""
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build or not (Path(build) / "CMakeCache.txt").is_file():
        pytest.skip("needs a built tree: set PUZZLES_BUILD_DIR")
    if build not in _built:
        _built[build] = build_program(Path(build), PROGRAM)
    return _built[build]


@pytest.fixture(scope="module")
def program():
    return program_path()


def run_case(exe, case, env=None):
    """The diagnosis record of one case (the line its fatal hook printed) and the process."""
    proc = subprocess.run([str(exe), case], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})), cwd=str(REPO))
    records = [json.loads(l[len("RECORD "):]) for l in proc.stdout.splitlines() if l.startswith("RECORD ")]
    assert records, "no record from case %s (exit %d):\n%s" % (case, proc.returncode, proc.stdout)
    return records[-1], proc


class Korean:
    def __enter__(self):
        messages.activate()
        messages.set_lang("ko")

    def __exit__(self, *exc):
        messages.set_lang(None)
        messages._active = False


def rendered(record):
    english = diagnosis.render(record)
    with Korean():
        korean = diagnosis.render(record)
    return english, korean


def words(text):
    return " ".join(text.split())


# (case, environment, kind, whether the English report is the simulator's message word for word
# (lines aside), patterns the English must match)
CASES = [
    ("barrier_in_if", {}, "barrier_divergence", True, [r"threads 16-31 wait in __syncthreads\(\) at \S+\.cu:\d+"]),
    ("early_return", {}, "barrier_divergence", True, [r"threads 20-31 returned after passing 0 barriers"]),
    ("warp_cycle", {}, "deadlock", True, [r"threads 0-15 wait in __shfl_sync \(mask 0xffffffff\)"]),
    ("activemask_deadlock", {}, "deadlock", True, [r"The mask 0x0000ffff of thread 0 came from __activemask\(\)"]),
    ("shfl_vs_barrier", {}, "barrier_divergence", True, [r"threads 16-31, 48-63 wait in __syncthreads\(\)"]),
    ("cbar_missing_arrival", {}, "deadlock", True, [r"block 0: threads wait on a cuda::barrier phase",
                                                    r"still misses 4 arrivals in phase 0"]),
    ("cbar_missing_one", {}, "deadlock", True, [r"thread 31 has returned", r"still misses 1 arrival in phase 0"]),
    ("stride_stays_0", {"CUDASIM_STALL_SECONDS": "1"}, "runaway_thread", True,
     [r"block 0, thread 0 has run for 1 s without reaching a barrier or returning, looping at \S+\.cu:\d+\."]),
    ("barrier_loop", {"CUDASIM_MAX_BARRIERS": "100"}, "runaway_barrier", True,
     [r"block 0 passed the barrier at \S+\.cu:\d+ 101 times: a loop around it never ends"]),
    ("barrier_loop", {"CUDASIM_MAX_BARRIERS": "100000000000", "CUDASIM_BLOCK_SECONDS": "1"}, "runaway_block", True,
     [r"block 0 has run for 1 s; its threads passed the barrier at \S+\.cu:\d+ \d+ times\."]),
    ("wait_for_block_0", {}, "endless_wait", True,
     [r"block 1, thread \d+ waits for ever: it read the same global memory at \S+\.cu:\d+ 16384 times",
      r"Its block is block 2 of 2 to start in the 'forward' order, with 1 block before it finished and 0 not started"]),
    ("wait_for_block_0", {"CUDASIM_CHECKS": "0", "CUDASIM_WORKERS": "1", "CUDASIM_BLOCK_SECONDS": "1"}, "endless_wait", True,
     [r"block 1 has run for 1 s, the last block still running \(of the launch's other 1 blocks, 1 finished and 0 not "
      r"started\)"]),
    ("lane_not_in_mask", {}, "warp_mask_without_self", True,
     [r"lane 16 calls __shfl_sync with mask 0x0000ffff, which does not include lane 16 itself"]),
    ("overlapping_masks", {}, "warp_misuse", True,
     [r"lane 16 calls __shfl_sync with mask 0xffff0000 while lane 0 of the same warp waits in __shfl_sync"]),
    ("different_intrinsics", {}, "warp_misuse", True, [r"lane 16 calls __ballot_sync while lane 0 waits in __shfl_sync"]),
    ("bad_width", {}, "warp_misuse", True, [r"width 12 of __shfl_down_sync is not a power of two"]),
    ("shfl_absent_lane", {}, "warp_misuse", True, [r"reads lane 16 through __shfl_down_sync, but lane 16 does not exist"]),
    ("cbar_not_initialised", {}, "cuda_barrier_misuse", True, [r"arrive\(\) on a barrier that was never initialised"]),
    ("cbar_init_zero", {}, "cuda_barrier_misuse", True, [r"init\(\) with an expected count of 0"]),
    ("cbar_arrive_too_many", {}, "cuda_barrier_misuse", True, [r"arrive\(64\) when only 32 arrivals remain"]),
    ("cbar_foreign_token", {}, "cuda_barrier_misuse", True, [r"wait\(\) with a token that arrive\(\) did not return"]),
    ("too_much_shared", {}, "shared_memory_limit", True,
     [r"more than 49152 bytes \(48 KiB\) of shared memory \(52000 bytes of __shared__ variables so far, 0 dynamic\)"]),
    ("host_pointer_argument", {}, "bad_pointer_argument", True, [r"argument 1 of the kernel is 0x[0-9a-f]+, which is not"]),
    ("null_store", {}, "null_dereference", True, [r"crash in kernel null_store .*block 0, thread 0: null pointer",
                                                  r"^  at null_store\(int\*, int\*\) at \S+\.cu:\d+$"]),
    ("wild_store", {}, "crash_device", True, [r"invalid access to address 0x10000000, which is not in any device buffer"]),
    ("divide_by_zero", {}, "arithmetic", True, [r"crash in kernel divide .*: arithmetic error"]),
    ("stack_overflow", {}, "stack_overflow", True, [r"stack overflow: the thread's local variables exceed"]),
    ("throws", {}, "exception", True, [r"a C\+\+ exception escaped the kernel in block 0, thread 2: bad_index: 9"]),
    ("host_null", {}, "null_dereference", True, [r"^crash in host code: null pointer dereference\.$"]),
    ("host_deref", {}, "crash_host", True,
     [r"host code dereferenced device memory \(buffer #1 \(64 x int, cudaMalloc at \S+\.cu:\d+\)\)"]),
    ("host_divide", {}, "arithmetic", True, [r"^crash in host code: arithmetic error"]),
    ("threadidx_in_host", {}, "device_code_from_host", True, [r"^threadIdx was used outside a kernel \(in host code\)\.$"]),
    ("syncthreads_in_host", {}, "device_code_from_host", True,
     [r"^\S+\.cu:\d+: __syncthreads\(\) was used outside a kernel"]),
    ("copy_in_launcher", {}, "host_copy_in_launcher", True,
     [r"the launcher copied 256 bytes of device memory to the host \(cudaMemcpyDeviceToHost\) at \S+\.cu:\d+\."]),
    ("managed_read", {}, "host_copy_in_launcher", False,
     [r"the launcher read managed memory \(buffer #\d+ \(16 x int, cudaMallocManaged at \S+\.cu:\d+\)\) in host code while "
      r"the case ran\.", r"^  at main at \S+\.cu:\d+$", r"A puzzle's answer must be computed by its kernels"]),
]


@pytest.mark.parametrize("case,env,kind,same,patterns", CASES,
                         ids=["%s%s" % (c[0], "-" + "-".join(sorted(c[1])) if c[1] else "") for c in CASES])
def test_a_real_kernel_is_reported_in_english_and_korean(program, case, env, kind, same, patterns):
    record, _proc = run_case(program, case, env)
    assert record["kind"] == kind, record
    english, korean = rendered(record)
    text = "\n".join(english)
    for p in patterns:
        assert re.search(p, text, re.M), "/%s/ not in:\n%s" % (p, text)
    if same:  # the simulator's own message, word for word
        assert words(text) == words(record["message"]), "%s\n---\n%s" % (text, record["message"])
    ko = "\n".join(korean)
    assert HANGUL.search(korean[0]), ko
    assert english_detector.english_runs(ko) == [], ko
    # The Korean says the same facts: every site and number of the English report is in it.
    for token in re.findall(r"\S+\.cu:\d+|0x[0-9a-f]+|\b\d+\b", text):
        assert token in ko, "%s is not in the Korean report:\n%s" % (token, ko)


def test_the_exception_text_is_the_programs_own(program):
    record, _ = run_case(program, "throws")
    assert record["facts"]["exception"] == "bad_index: 9" and record["facts"]["case"] == "std"


def test_the_facts_say_who_waits_where(program):
    record, _ = run_case(program, "shfl_vs_barrier")
    f = record["facts"]
    assert f["case"] == "warp" and f["mixed"] is True
    assert [g["threads"] for g in f["waiting"]] == [[[0, 15], [32, 47]]] and f["waiting"][0]["mask"] == 0xffffffff
    assert f["at_barrier"][0]["call"] == "__syncthreads()" and f["at_barrier"][0]["threads"] == [[16, 31], [48, 63]]
    assert f["kernel"] == "shfl_vs_barrier" and re.search(r"\.cu:\d+$", f["launch_site"])
    assert f["block_dim"] == [64, 1, 1] and f["grid_dim"] == [1, 1, 1]


def test_a_crash_names_its_frames_and_buffer(program):
    record, _ = run_case(program, "host_deref")
    f = record["facts"]
    assert f["in"] == "host" and f["case"] == "device_memory"
    assert f["buffer"]["id"] == 1 and f["buffer"]["elements"] == 64 and f["buffer"]["type"] == "int"
    assert f["frames"][0]["function"] == "main" and re.search(r"diagnosis_errors\.cu:\d+$", f["frames"][0]["site"])


def test_too_many_shared_variables(tmp_path):
    """The simulator's shared-memory arena holds about 2000 variables: a kernel that declares more
    (each one byte, far below the 48 KiB limit) is reported as shared_arena_full."""
    build = os.environ.get("PUZZLES_BUILD_DIR")
    if not build or not (Path(build) / "CMakeCache.txt").is_file():
        pytest.skip("needs a built tree: set PUZZLES_BUILD_DIR")
    source = tmp_path / "many_shared.cu"
    declarations = "\n".join("  __shared__ char v%d;\n  v%d = 1;" % (i, i) for i in range(2100))
    main = PROGRAM.read_text(encoding="utf-8")
    hook = main[main.index("// `puzzle.py sim` builds"):main.index('#include "cudasim/control.h"')]
    source.write_text(hook + '#include "cudasim/control.h"\n#include <cstdio>\n\n'
                      "__global__ void many(int* out) {\n%s\n  out[threadIdx.x] = 0;\n}\n\n"
                      "static void print_record(const cudasim::DiagnosisView& d) {\n"
                      '  std::fputs("RECORD ", stdout);\n  std::fputs(d.record, stdout);\n  std::fputs("\\n", stdout);\n'
                      "  std::fflush(stdout);\n}\n\n"
                      "int main() {\n  cudasim::set_fatal_hook(print_record);\n  int* out;\n"
                      "  cudaMalloc(&out, 32 * sizeof(int));\n  many<<<1, 32>>>(out);\n  cudaDeviceSynchronize();\n"
                      "  return 0;\n}\n" % declarations, encoding="utf-8")
    exe = build_program(Path(build), source)
    record, _ = run_case(exe, "-")
    assert record["kind"] == "shared_arena_full", record
    english, korean = rendered(record)
    assert words("\n".join(english)) == words(record["message"])
    assert re.search(r"kernel many \(launched at \S+\): \d+ __shared__ variables do not fit", english[0])
    assert english_detector.english_runs("\n".join(korean)) == [] and HANGUL.search(korean[0])
    assert explain.diagnosis_reason(record) == "too many __shared__ variables for the simulator (%d)" % record["facts"]["count"]


# ---- records the programs above cannot make ------------------------------------------------------

def test_out_of_memory_is_worded_from_what_could_not_be_allocated():
    d = {"kind": "out_of_memory", "facts": {"what": "shadow_memory"}}
    english, korean = rendered(d)
    assert english == ["the simulator could not allocate its shadow memory (out of memory)"]
    assert HANGUL.search(korean[0]) and "shadow memory" in korean[0]
    assert rendered({"kind": "out_of_memory", "facts": {}})[0] == ["the simulator ran out of memory"]


def test_the_launch_adds_the_schedule_and_the_memory_checkers_own_report():
    also = {"kind": "warp_mask_without_self", "sites": ["k.cu:3"], "block": [0, 0, 0], "threads": [[16, 0, 0]],
            "facts": {"lane": 16, "call": "__shfl_sync", "mask": 0xffff}}
    d = {"kind": "barrier_divergence", "sites": [], "block": [2, 0, 0], "threads": [],
         "facts": {"case": "different_barriers", "kernel": "k", "launch_site": "k.cu:9", "grid_dim": [4, 1, 1],
                   "block_dim": [32, 1, 1], "at_barrier": [], "exited": [[0, 31]], "found_in_schedule": "reverse",
                   "also": also}}
    english, korean = rendered(d)
    assert english[0] == "barrier divergence in kernel k (launched at k.cu:9), block 2: threads wait at different barriers."
    assert english[1] == "    threads 0-31 have returned"
    assert english[-4:-2] == ["  (found while running the 'reverse' thread schedule)", "  The memory checker also found:"]
    assert english[-2].startswith("    warp misuse at k.cu:3: block 0, thread 16: lane 16 calls __shfl_sync")
    assert english_detector.english_runs("\n".join(korean)) == []


def test_an_index_is_written_as_in_the_launch():
    """A 2-D launch writes block (1, 2, 0); a 1-D launch writes 1."""
    d = {"kind": "exception", "block": [1, 2, 0], "threads": [[3, 0, 0]],
         "facts": {"case": "other", "kernel": "k", "launch_site": "k.cu:1", "grid_dim": [4, 4, 1], "block_dim": [32, 1, 1]}}
    assert diagnosis.render(d) == ["kernel k (launched at k.cu:1): an exception escaped the kernel in block (1, 2, 0), thread 3"]


# ---- the catalogue -------------------------------------------------------------------------------------------

def msgids(path):
    """The English of the module's messages: tr() and plural() literals, and the tables of msgids
    (module-level constants in capitals) that the renderers pass to tr()."""
    import ast
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets):
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                found.append(v.value)
            elif isinstance(v, ast.Dict):
                found += [x.value for x in v.values if isinstance(x, ast.Constant) and isinstance(x.value, str)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("tr", "plural"):
            found += [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_every_message_of_the_family_has_its_korean_form(path):
    ko = catalog.translations("ko")
    ids = msgids(path)
    assert len(ids) > 30
    missing = [m for m in ids if m not in ko]
    assert not missing, missing
    for m in ids:
        assert english_detector.english_runs(ko[m]) == [], (m, ko[m])


def test_the_family_renders_every_kind_it_owns():
    diagnosis._load()
    for kind in FAMILY_KINDS:
        fn = diagnosis.RENDERERS.get(kind)
        assert fn is not None and fn.__module__.rsplit(".", 1)[-1] in ("diagnosis_errors", "diagnosis_crash"), kind


# ---- the short reasons (explain.py) ------------------------------------------------------------------------------

@pytest.mark.parametrize("case,reason", [
    ("cbar_not_initialised", "cuda::barrier misuse: arrive() before init()"),
    ("cbar_init_zero", "cuda::barrier misuse: init() with a count of 0"),
    ("cbar_arrive_too_many", "cuda::barrier misuse: arrive(64) with 32 arrivals left"),
    ("cbar_foreign_token", "cuda::barrier misuse: wait() with a token arrive() did not return"),
    ("too_much_shared", "more than 48 KiB of shared memory per block (52000 bytes)"),
    ("host_pointer_argument", "kernel argument 1 is not device memory"),
    ("throws", "a C++ exception escaped the kernel"),
    ("copy_in_launcher", "the launcher copied device memory to the host (cudaMemcpyDeviceToHost)"),
    ("managed_read", "the launcher copied device memory to the host (a read of cudaMallocManaged memory in host code)"),
])
def test_the_short_reason_is_worded_from_the_facts(program, case, reason):
    record, _ = run_case(program, case)
    assert explain.diagnosis_reason(record) == reason
    # Never from the message: a record whose message says something else gives the same reason.
    assert explain.diagnosis_reason(dict(record, message="something else entirely")) == reason
    with Korean():
        ko = explain.diagnosis_reason(record)
    assert HANGUL.search(ko) and english_detector.english_runs(ko) == [], ko


def test_no_reason_is_taken_from_the_message():
    assert explain.MESSAGE not in explain.REASONS.values()
    source = (REPO / "scripts" / "puzzlelib" / "explain.py").read_text(encoding="utf-8")
    assert 'd.get("message")' not in source and "HARNESS_ERROR = re.compile" not in source


def test_a_failed_cuda_call_comes_from_the_harness_as_data(tmp_path):
    """harness.cpp prints `HARNESS_ERROR {json}` beside its English line: the Outcome keeps it as
    data, hides it from the output, and explain names the call from it."""
    from puzzlelib.driver import Outcome
    line = ('HARNESS_ERROR {"case": "call", "call": "cudaMemset", "what": "cudaMemset of the ticket", '
            '"error": "cudaErrorInvalidValue", "site": "puzzles/p13/driver.cpp:145"}')
    o = Outcome(["x"], 4, ["error: cudaMemset of the ticket failed at puzzles/p13/driver.cpp:145: invalid argument", line],
                {"verdict": "error"}, False, 0.1)
    assert o.harness_error["call"] == "cudaMemset" and all(not l.startswith("HARNESS_ERROR") for l in o.lines)
    assert explain.simulator_reason(o) == "CUDA call failed: cudaMemset (cudaErrorInvalidValue)"
    # A driver that prints it: run_driver keeps it from the learner's screen.
    fake = tmp_path / "fake.py"
    fake.write_text("print('error: x failed'); print(%r); print('RESULT {\"verdict\": \"error\"}'); raise SystemExit(4)\n"
                    % line, encoding="utf-8")
    from puzzlelib.driver import run_driver
    shown = []
    outcome = run_driver([sys.executable, str(fake)], 30, on_line=shown.append)
    assert shown == ["error: x failed"] and outcome.harness_error["error"] == "cudaErrorInvalidValue"
